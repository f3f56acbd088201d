/**
 * `ecb`: the euro foreign exchange reference rates of the European Central Bank, one `P1D` series
 * per currency (`EURNOK`: the price of one euro in Norwegian krone). A day without a published rate
 * (a weekend, a TARGET holiday, `N/A`) has no point: a rate is never carried over. docs/sources.md.
 */
import { checkPrice } from '../../domain/prices/decimal.js';
import { dayBounds } from '../../domain/time/days.js';
import type { Series } from '../../stores/types.js';
import {
  type ConnectorType,
  type SourceResult,
  type SourceSeries,
  SourceSettingsError,
  type SourceWindow,
  type UpstreamOptions,
} from '../types.js';
import {
  baseUrlOf,
  bodyText,
  DEFAULT_MAX_BYTES,
  getUpstream,
  plainWords,
  statusFailure,
  whatArrived,
} from '../upstream-get.js';
import { readEcbCsv, readEcbXml } from './ecb-files.js';

/** `daily`: the latest day (XML); `90d`: the last 90 days (XML); `history`: every day since 1999 (CSV). */
export type EcbFeed = 'daily' | '90d' | 'history';

export interface EcbSettings {
  /** ISO 4217 codes: `[NOK, SEK, USD]` fills `EURNOK`, `EURSEK`, `EURUSD`. */
  readonly currencies: readonly string[];
  readonly baseUrl?: string;
  /** Default: the smallest file that covers the window's start (by the clock). */
  readonly feed?: EcbFeed;
}

/** The ECB publishes its rates for the day in Frankfurt (about 16:00 CET). */
export const ECB_TIMEZONE = 'Europe/Berlin';
const FILES: Record<EcbFeed, string> = {
  daily: 'eurofxref-daily.xml',
  '90d': 'eurofxref-hist-90d.xml',
  history: 'eurofxref-hist.zip',
};
const DAY_MS = 86_400_000;

export const ecb: ConnectorType<EcbSettings> = {
  type: 'ecb',
  defaultBaseUrl: 'https://www.ecb.europa.eu/stats/eurofxref/',
  // FX rates fill no bidding zone: no `zones`. The attribution's wording is ours (docs/sources.md).
  terms: {
    license: 'ECB copyright: reuse free of charge with the source acknowledged',
    attribution: 'Source: European Central Bank',
    termsUrl: 'https://www.ecb.europa.eu/home/disclaimer/html/index.en.html',
    redistribution:
      'Reuse, commercial included, is free provided the ECB is acknowledged as the source; the reference rates are published for information only, and their use for transactions is strongly discouraged.',
  },
  create(settings, upstream = {}) {
    const currencies = settings.currencies;
    if (!Array.isArray(currencies) || currencies.length === 0) {
      throw new SourceSettingsError('currencies', 'name at least one currency, as [NOK, USD]');
    }
    for (const [i, code] of currencies.entries()) {
      if (typeof code !== 'string' || !/^[A-Z]{3}$/.test(code) || code === 'EUR') {
        throw new SourceSettingsError(
          `currencies[${i}]`,
          `"${code}" is not a three-letter currency other than EUR`,
        );
      }
    }
    if (settings.feed !== undefined && !(settings.feed in FILES)) {
      throw new SourceSettingsError('feed', 'must be daily, 90d or history');
    }
    const baseUrl = baseUrlOf(settings.baseUrl, ecb.defaultBaseUrl, true);
    return { type: 'ecb', fetchWindow: (window) => fetchRates(settings, baseUrl, upstream, window) };
  },
};

async function fetchRates(
  settings: EcbSettings,
  baseUrl: URL,
  upstream: UpstreamOptions,
  window: SourceWindow,
): Promise<SourceResult> {
  const feed = settings.feed ?? feedFor(window, upstream.now?.() ?? Date.now());
  const got = await getUpstream(new URL(FILES[feed], baseUrl), upstream);
  if (!got.ok) return got;
  const { answer } = got;
  if (answer.status !== 200)
    return { ok: false, failure: statusFailure(answer, plainWords(bodyText(answer))) };
  const read =
    feed === 'history'
      ? readEcbCsv(answer.body, upstream.maxBytes ?? DEFAULT_MAX_BYTES)
      : readEcbXml(bodyText(answer));
  if (!read.ok) {
    const message = `${answer.where}: ${read.reason}; arrived: ${whatArrived(answer)}`;
    return { ok: false, failure: { kind: 'format', message } };
  }
  const missing = settings.currencies.filter((c) => !read.currencies.has(c));
  // The CSV keeps a column for every currency ever quoted, so one it lacks was never an ECB rate.
  if (feed === 'history' && missing.length > 0) {
    return {
      ok: false,
      failure: { kind: 'format', message: `${answer.where} has no column for ${missing.join(', ')}` },
    };
  }
  const days = [...read.rates.keys()].sort();
  const series: SourceSeries[] = [];
  for (const currency of settings.currencies) {
    const points = [];
    for (const date of days) {
      const start = dayBounds(date, ECB_TIMEZONE).start;
      if (start < window.from || start >= window.to) continue;
      const rate = read.rates.get(date)?.get(currency);
      if (rate === undefined) continue;
      const price = checkPrice(rate);
      if (!price.ok) {
        return {
          ok: false,
          failure: { kind: 'format', message: `${answer.where}: ${currency} on ${date}: ${price.reason}` },
        };
      }
      points.push({ start, price: price.text });
    }
    series.push({ series: seriesOf(currency), points });
  }
  return { ok: true, series };
}

function seriesOf(currency: string): Series {
  return {
    symbol: `EUR${currency}`,
    name: `Euro in ${currency}, ECB reference rate`,
    kind: 'fx',
    currency,
    unit: 'EUR',
    timezone: ECB_TIMEZONE,
    resolution: 'P1D',
  };
}

/** The daily file for the latest days, the 90-day file for recent weeks, else the whole history. */
function feedFor(window: SourceWindow, now: number): EcbFeed {
  if (window.from >= now - 3 * DAY_MS) return 'daily';
  if (window.from >= now - 85 * DAY_MS) return '90d';
  return 'history';
}
