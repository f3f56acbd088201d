/**
 * `elering`: the Nord Pool day-ahead prices Elering (the Estonian TSO) republishes for EE, LV, LT
 * and FI on its dashboard API (`GET /api/nps/price?start=&end=`, ISO instants, at most a year per
 * request). An answer holds every country at once, `data` keyed by lower-case country, each a list
 * of `{ timestamp, price }` with the interval's start in unix seconds and the price in EUR/MWh (the
 * dashboard's published unit; the answer does not repeat it). docs/sources.md.
 */
import { checkNumberPrice } from '../../domain/prices/decimal.js';
import { isResolution, RESOLUTIONS, type Resolution } from '../../domain/time/days.js';
import type { Series } from '../../stores/types.js';
import { onGrid, type TimedPrice } from '../interval-grid.js';
import {
  type ConnectorType,
  type ConnectorZone,
  type SourceFailure,
  type SourceResult,
  SourceSettingsError,
  type SourceWindow,
  type UpstreamOptions,
} from '../types.js';
import {
  baseUrlOf,
  bodyText,
  getUpstream,
  plainWords,
  statusFailure,
  type UpstreamAnswer,
  whatArrived,
} from '../upstream-get.js';

export interface EleringSettings {
  /** `EE`, `LV`, `LT` or `FI` (also the country's name or the zone's EIC code). */
  readonly zone: string;
  /** The series filled; default the zone (`EE`), as `entsoe` and `nordpool` name it. */
  readonly symbol?: string;
  readonly baseUrl?: string;
  /** Default: the spacing of the answer's rows. */
  readonly resolution?: Resolution;
  /** Repeat an hourly price over the four quarters of a `PT15M` series. */
  readonly fillQuarters?: boolean;
}

interface EleringZone extends ConnectorZone {
  readonly eic: string;
  /** The key of the zone's list in `data`. */
  readonly key: string;
  readonly timezone: string;
}

const ZONES: readonly EleringZone[] = [
  { zone: 'EE', eic: '10Y1001A1001A39I', key: 'ee', timezone: 'Europe/Tallinn', aliases: ['Estonia'] },
  { zone: 'LV', eic: '10YLV-1001A00074', key: 'lv', timezone: 'Europe/Riga', aliases: ['Latvia'] },
  { zone: 'LT', eic: '10YLT-1001A0008Q', key: 'lt', timezone: 'Europe/Vilnius', aliases: ['Lithuania'] },
  { zone: 'FI', eic: '10YFI-1--------U', key: 'fi', timezone: 'Europe/Helsinki', aliases: ['Finland'] },
];

/** The dashboard shows these prices in €/MWh; the JSON does not repeat it. */
const CURRENCY = 'EUR';
const UNIT = 'MWh';
/** The API answers at most a year per request. */
const MAX_SPAN_MS = 365 * 86_400_000;
/** Unix seconds up to the year 5138: a larger timestamp is milliseconds, never read as seconds. */
const MAX_SECONDS = 1e11;
const MINUTE_MS = 60_000;

export const elering: ConnectorType<EleringSettings> = {
  type: 'elering',
  defaultBaseUrl: 'https://dashboard.elering.ee/api/',
  terms: {
    license: 'not stated',
    attribution: 'not stated',
    termsUrl: 'https://dashboard.elering.ee/assets/api-doc.html',
    redistribution:
      'not stated; the API documentation describes the prices as NordPool day-ahead price data and names no licence or terms of reuse',
  },
  zones: ZONES.map(({ zone, eic, aliases }) => ({ zone, eic, aliases })),
  create(settings, upstream = {}) {
    const name = typeof settings.zone === 'string' ? settings.zone.trim().toUpperCase() : '';
    const zone = ZONES.find((z) => [z.zone, z.eic, ...z.aliases].some((k) => k.toUpperCase() === name));
    if (zone === undefined) throw new SourceSettingsError('zone', 'must be EE, LV, LT or FI');
    if (
      settings.resolution !== undefined &&
      (!isResolution(settings.resolution) || settings.resolution === 'P1D')
    ) {
      throw new SourceSettingsError('resolution', 'must be PT15M, PT30M or PT1H');
    }
    if (settings.fillQuarters !== undefined && typeof settings.fillQuarters !== 'boolean') {
      throw new SourceSettingsError('fillQuarters', 'must be true or false');
    }
    if (settings.symbol !== undefined && (typeof settings.symbol !== 'string' || settings.symbol === '')) {
      throw new SourceSettingsError('symbol', 'must be a non-empty text');
    }
    const baseUrl = baseUrlOf(settings.baseUrl, elering.defaultBaseUrl, true);
    return {
      type: 'elering',
      fetchWindow: (window) => fetchPrices(zone, settings, baseUrl, upstream, window),
    };
  },
};

async function fetchPrices(
  zone: EleringZone,
  settings: EleringSettings,
  baseUrl: URL,
  upstream: UpstreamOptions,
  window: SourceWindow,
): Promise<SourceResult> {
  const starts = new Map<number, number | null>();
  // A year at most per request: a longer window (a backfill) is asked in parts, in order.
  for (let from = window.from; from < window.to; from += MAX_SPAN_MS) {
    const got = await fetchPart(zone, baseUrl, upstream, from, Math.min(from + MAX_SPAN_MS, window.to));
    if (!got.ok) return got;
    for (const [start, price] of got.rows) {
      if (starts.has(start) && starts.get(start) !== price) {
        return failure(`two prices for ${new Date(start).toISOString()}`);
      }
      starts.set(start, price);
    }
  }
  const ordered = [...starts.keys()].sort((a, b) => a - b);
  const rows: TimedPrice[] = [];
  for (const [i, start] of ordered.entries()) {
    const minutes = lengthOf(ordered, i, settings.resolution);
    if (minutes === undefined) return failure('a single row shows no resolution: set resolution');
    const value = starts.get(start);
    let price: string | undefined;
    if (value !== null && value !== undefined) {
      const checked = checkNumberPrice(value);
      if (!checked.ok) return failure(`${new Date(start).toISOString()}: ${checked.reason}`);
      price = checked.text;
    }
    if (start >= window.from && start < window.to) rows.push({ start, minutes, price });
  }
  // Nothing for the window yet (tomorrow before the auction's results): a success without points.
  if (rows.length === 0) return { ok: true, series: [] };
  const grid = onGrid(rows, settings.resolution, settings.fillQuarters === true);
  if (!grid.ok) return failure(grid.reason);
  if (grid.resolution === undefined) return { ok: true, series: [] };
  const series: Series = {
    symbol: (settings.symbol ?? zone.zone).toUpperCase(),
    name: `${zone.zone} day-ahead (Elering)`,
    kind: 'electricity',
    currency: CURRENCY,
    unit: UNIT,
    timezone: zone.timezone,
    resolution: grid.resolution,
  };
  return { ok: true, series: [{ series, points: grid.points }] };
}

type Part = { ok: true; rows: [number, number | null][] } | { ok: false; failure: SourceFailure };

/** The zone's rows from `from` to `to`, as [start in epoch ms, price or null]. */
async function fetchPart(
  zone: EleringZone,
  baseUrl: URL,
  upstream: UpstreamOptions,
  from: number,
  to: number,
): Promise<Part> {
  // The API's own examples end a day a millisecond before the next one starts (20:59:59.999Z):
  // asked so, neither bound depends on whether the API counts it in.
  const url = new URL('nps/price', baseUrl);
  url.searchParams.set('start', new Date(from - 1).toISOString());
  url.searchParams.set('end', new Date(to - 1).toISOString());
  const got = await getUpstream(url, upstream);
  if (!got.ok) return got;
  const { answer } = got;
  const text = bodyText(answer);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    if (answer.status !== 200) return { ok: false, failure: statusFailure(answer, plainWords(text)) };
    return failure(`${answer.where} sent no JSON; arrived: ${whatArrived(answer)}`);
  }
  const doc = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (answer.status !== 200) return { ok: false, failure: errorFailure(answer, doc, text) };
  if (doc['success'] === false) return { ok: false, failure: errorFailure(answer, doc, text) };
  const data = doc['data'];
  // An answer with nothing in it may carry `data` as null or an empty list rather than by country.
  if (data === null || (Array.isArray(data) && data.length === 0)) return { ok: true, rows: [] };
  if (typeof data !== 'object' || Array.isArray(data)) return failure('no data by country');
  // A country left out, or an empty list, has nothing published for the period yet.
  const list = (data as Record<string, unknown>)[zone.key] ?? [];
  if (!Array.isArray(list)) return failure(`data.${zone.key} is not a list`);
  const rows: [number, number | null][] = [];
  for (const [i, row] of (list as Record<string, unknown>[]).entries()) {
    const seconds = row?.['timestamp'];
    if (!Number.isInteger(seconds) || Math.abs(seconds as number) >= MAX_SECONDS) {
      return failure(`data.${zone.key}[${i}]: timestamp ${JSON.stringify(seconds)} is not in unix seconds`);
    }
    const price = row['price'];
    if (price !== null && price !== undefined && typeof price !== 'number') {
      return failure(`data.${zone.key}[${i}]: price ${JSON.stringify(price)}`);
    }
    // A row without a price is a missing interval, never 0.
    rows.push([(seconds as number) * 1000, typeof price === 'number' ? price : null]);
  }
  return { ok: true, rows };
}

/**
 * A row's length in minutes: the distance to its nearer neighbour, so a missing row does not
 * lengthen the one before it, and the last hourly row before the 15-minute switch keeps its hour;
 * a lone row as long as the `resolution` setting says, if it says.
 */
function lengthOf(
  starts: readonly number[],
  i: number,
  resolution: Resolution | undefined,
): number | undefined {
  const here = starts[i] as number;
  const gaps = [starts[i + 1], starts[i - 1]]
    .filter((other): other is number => other !== undefined)
    .map((other) => Math.abs(other - here) / MINUTE_MS);
  if (gaps.length === 0) return resolution === undefined ? undefined : RESOLUTIONS[resolution];
  return Math.min(...gaps);
}

/** An error answer in the API's words: its `messages`, `message` or `error`, else its text. */
function errorFailure(answer: UpstreamAnswer, doc: Record<string, unknown>, text: string): SourceFailure {
  const messages = Array.isArray(doc['messages'])
    ? doc['messages'].filter((m): m is string => typeof m === 'string')
    : [];
  for (const field of ['message', 'error']) {
    if (typeof doc[field] === 'string' && doc[field] !== '') messages.push(doc[field] as string);
  }
  if (messages.length === 0) return statusFailure(answer, plainWords(text));
  return statusFailure(answer, plainWords(messages.join('; ')), 'upstream');
}

function failure(message: string): { ok: false; failure: SourceFailure } {
  return { ok: false, failure: { kind: 'format', message: `Elering answer: ${message}` } };
}
