/**
 * `octopus`: Octopus Energy's half-hourly unit rates (Agile Octopus) of one product in one GB
 * region, from its public REST API. Octopus quotes pence per kWh; the series holds pounds per kWh
 * (GBP, the decimal point moved two places, so nothing is rounded), with or without VAT as the
 * `vat` setting says. docs/sources.md.
 */
import { checkNumberPrice, checkPrice } from '../../domain/prices/decimal.js';
import { SYMBOL_PATTERN } from '../../domain/series/series-rules.js';
import type { Series } from '../../stores/types.js';
import { shiftDecimal } from '../decimal-shift.js';
import {
  type ConnectorType,
  type ConnectorZone,
  type SourceFailure,
  type SourceResult,
  SourceSettingsError,
  type SourceWindow,
  type UpstreamOptions,
} from '../types.js';
import { baseUrlOf, bodyText, getUpstream, plainWords, statusFailure } from '../upstream-get.js';

export interface OctopusSettings {
  /** The product code, as `AGILE-24-10-01`. */
  readonly product: string;
  /** The GB region (grid supply point group) by letter (`C`), `_C` or name (`London`). */
  readonly region: string;
  /** `excluded` (default, `value_exc_vat`) or `included` (`value_inc_vat`). */
  readonly vat?: 'excluded' | 'included';
  /** Which rate to keep where the API lists one per payment method; default `DIRECT_DEBIT`. */
  readonly paymentMethod?: 'DIRECT_DEBIT' | 'NON_DIRECT_DEBIT';
  /** Default `<product>-<region>`, with `-INC-VAT` when `vat` is `included`. */
  readonly symbol?: string;
  readonly baseUrl?: string;
}

/** The 14 GB regions by the letter of their grid supply point group, as Octopus tariff codes end. */
const REGIONS: readonly (readonly [string, string])[] = [
  ['A', 'Eastern England'],
  ['B', 'East Midlands'],
  ['C', 'London'],
  ['D', 'Merseyside and Northern Wales'],
  ['E', 'West Midlands'],
  ['F', 'North Eastern England'],
  ['G', 'North Western England'],
  ['H', 'Southern England'],
  ['J', 'South Eastern England'],
  ['K', 'Southern Wales'],
  ['L', 'South Western England'],
  ['M', 'Yorkshire'],
  ['N', 'Southern Scotland'],
  ['P', 'Northern Scotland'],
];

const TIMEZONE = 'Europe/London';
const HALF_HOUR_MS = 30 * 60_000;
/** Octopus pages 100 rates at a time: a year of half hours is under 200 pages. */
const MAX_PAGES = 400;
const PRODUCT = /^[A-Z0-9]+(?:-[A-Z0-9]+)*$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:\d{2})$/;

export const octopus: ConnectorType<OctopusSettings> = {
  type: 'octopus',
  defaultBaseUrl: 'https://api.octopus.energy/',
  terms: {
    license: 'not stated',
    attribution: 'not stated',
    termsUrl: 'https://developer.octopus.energy/rest/guides/api-basics',
    redistribution:
      'not stated: the API documentation serves product and tariff rates without authentication and names no licence or terms of reuse',
  },
  zones: REGIONS.map(([letter, name]): ConnectorZone => ({ zone: letter, aliases: [`_${letter}`, name] })),
  create(settings, upstream = {}) {
    const product = typeof settings.product === 'string' ? settings.product.toUpperCase() : '';
    if (!PRODUCT.test(product)) {
      throw new SourceSettingsError('product', 'name an Octopus product code, as AGILE-24-10-01');
    }
    const region = regionOf(settings.region);
    if (region === undefined) {
      throw new SourceSettingsError(
        'region',
        `"${settings.region}" is not a GB region: a letter A to P (not I or O), as C or _C, or its name, as London`,
      );
    }
    const vat = settings.vat ?? 'excluded';
    if (vat !== 'excluded' && vat !== 'included') {
      throw new SourceSettingsError('vat', 'must be excluded or included');
    }
    const paymentMethod = settings.paymentMethod ?? 'DIRECT_DEBIT';
    if (paymentMethod !== 'DIRECT_DEBIT' && paymentMethod !== 'NON_DIRECT_DEBIT') {
      throw new SourceSettingsError('paymentMethod', 'must be DIRECT_DEBIT or NON_DIRECT_DEBIT');
    }
    const symbol = (
      settings.symbol ?? `${product}-${region}${vat === 'included' ? '-INC-VAT' : ''}`
    ).toUpperCase();
    if (!SYMBOL_PATTERN.test(symbol)) {
      throw new SourceSettingsError(
        'symbol',
        `"${symbol}" is not a series symbol (letters, digits, ".", "_" and "-", at most 32): set symbol`,
      );
    }
    const baseUrl = baseUrlOf(settings.baseUrl, octopus.defaultBaseUrl, true);
    const plan: Plan = { product, region, vat, paymentMethod, symbol };
    return { type: 'octopus', fetchWindow: (window) => fetchRates(plan, baseUrl, upstream, window) };
  },
};

interface Plan {
  readonly product: string;
  readonly region: string;
  readonly vat: 'excluded' | 'included';
  readonly paymentMethod: string;
  readonly symbol: string;
}

/** The region letter for a letter, `_C`, or a region's name (any case). */
function regionOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim().toUpperCase();
  const letter = text.startsWith('_') ? text.slice(1) : text;
  return REGIONS.find(([l, name]) => l === letter || name.toUpperCase() === text)?.[0];
}

interface Rate {
  readonly value_exc_vat?: unknown;
  readonly value_inc_vat?: unknown;
  readonly valid_from?: unknown;
  readonly valid_to?: unknown;
  readonly payment_method?: unknown;
}

async function fetchRates(
  plan: Plan,
  baseUrl: URL,
  upstream: UpstreamOptions,
  window: SourceWindow,
): Promise<SourceResult> {
  const tariff = `E-1R-${plan.product}-${plan.region}`;
  let url: URL | undefined = new URL(
    `v1/products/${plan.product}/electricity-tariffs/${tariff}/standard-unit-rates/`,
    baseUrl,
  );
  url.searchParams.set('period_from', new Date(window.from).toISOString().replace('.000Z', 'Z'));
  url.searchParams.set('period_to', new Date(window.to).toISOString().replace('.000Z', 'Z'));
  const rates: Rate[] = [];
  let count: number | undefined;
  for (let page = 1; url !== undefined; page++) {
    if (page > MAX_PAGES) return failure(`more than ${MAX_PAGES} pages for one window`);
    const got = await getUpstream(url, upstream);
    if (!got.ok) return got;
    const { answer } = got;
    const text = bodyText(answer);
    let body: { count?: unknown; next?: unknown; results?: unknown; detail?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      if (answer.status !== 200) return { ok: false, failure: statusFailure(answer, plainWords(text)) };
      return failure(`${answer.where} sent no JSON`);
    }
    if (answer.status !== 200) {
      // The API's errors are `{"detail": "..."}`, or a field's name with its problems on a 400.
      const words = typeof body?.detail === 'string' ? body.detail : text;
      return { ok: false, failure: statusFailure(answer, plainWords(words), 'upstream') };
    }
    if (!Array.isArray(body?.results)) return failure(`${answer.where} sent no results`);
    rates.push(...(body.results as Rate[]));
    if (typeof body.count === 'number') count ??= body.count;
    if (body.next === null || body.next === undefined) {
      url = undefined;
    } else {
      const next = typeof body.next === 'string' && URL.canParse(body.next) ? new URL(body.next) : undefined;
      // A page link leads back to the host asked, never elsewhere.
      if (next === undefined || next.origin !== baseUrl.origin) {
        return failure(
          `page ${page} links its next page to "${String(body.next)}", not to ${baseUrl.origin}`,
        );
      }
      url = next;
    }
  }
  if (count !== undefined && count > rates.length) {
    return failure(`the pages hold ${rates.length} of ${count} rates`);
  }
  return pricesOf(plan, rates, window);
}

function pricesOf(plan: Plan, rates: readonly Rate[], window: SourceWindow): SourceResult {
  const field = plan.vat === 'included' ? 'value_inc_vat' : 'value_exc_vat';
  const byStart = new Map<number, { price: string | undefined; method: unknown }>();
  for (const [i, rate] of rates.entries()) {
    const from = rate?.valid_from;
    const to = rate?.valid_to;
    if (typeof from !== 'string' || !INSTANT.test(from))
      return failure(`rate ${i + 1}: valid_from "${from}"`);
    if (typeof to !== 'string' || !INSTANT.test(to)) {
      return failure(
        `rate ${i + 1} (from ${from}): valid_to "${to}" is no half hour's end; only half-hourly rates are read`,
      );
    }
    const start = Date.parse(from);
    if (Date.parse(to) - start !== HALF_HOUR_MS || start % HALF_HOUR_MS !== 0) {
      return failure(
        `rate ${i + 1} runs from ${from} to ${to}, not one half hour; only half-hourly rates are read`,
      );
    }
    const method = rate.payment_method ?? null;
    if (method !== null && method !== plan.paymentMethod) continue;
    const seen = byStart.get(start);
    if (seen !== undefined) {
      if (seen.method === method) return failure(`two rates start at ${from}`);
      if (method === null) continue; // the chosen payment method's rate stands
    }
    const value = rate[field];
    let price: string | undefined;
    if (value !== null && value !== undefined) {
      const pence = typeof value === 'number' ? checkNumberPrice(value) : checkPrice(String(value));
      if (!pence.ok) return failure(`rate ${i + 1} (from ${from}): ${field}: ${pence.reason}`);
      // Same digits, so still at most 15 significant ones.
      price = shiftDecimal(pence.text, -2);
    }
    // A rate of the chosen payment method replaces one listed for every method.
    byStart.set(start, { price, method });
  }
  const points = [...byStart]
    .filter(([start, { price }]) => price !== undefined && start >= window.from && start < window.to)
    .sort(([a], [b]) => a - b)
    .map(([start, { price }]) => ({ start, price: price as string }));
  const regionName = REGIONS.find(([letter]) => letter === plan.region)?.[1] ?? plan.region;
  const series: Series = {
    symbol: plan.symbol,
    name: `Octopus ${plan.product}, ${regionName} (${plan.region}), ${plan.vat === 'included' ? 'VAT included' : 'VAT excluded'}`,
    kind: 'electricity',
    // Pence per kWh, as the API documents its rates, moved to pounds.
    currency: 'GBP',
    unit: 'kWh',
    timezone: TIMEZONE,
    resolution: 'PT30M',
  };
  return { ok: true, series: [{ series, points }] };
}

function failure(message: string): { ok: false; failure: SourceFailure } {
  return { ok: false, failure: { kind: 'format', message: `Octopus Energy answer: ${message}` } };
}
