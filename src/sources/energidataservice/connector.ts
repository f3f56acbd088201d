/**
 * `energidataservice`: Energinet's `DayAheadPrices` data set (Energi Data Service), the day-ahead
 * prices of DK1 and DK2 in EUR or DKK per MWh. Records are keyed on `TimeUTC`: `TimeDK` repeats an
 * hour on the autumn DST day, so it is never used. docs/sources.md.
 */
import { checkNumberPrice, checkPrice } from '../../domain/prices/decimal.js';
import { addDays, localDate, RESOLUTIONS, type Resolution } from '../../domain/time/days.js';
import type { Series } from '../../stores/types.js';
import {
  type ConnectorType,
  type ConnectorZone,
  type SourceFailure,
  type SourceResult,
  SourceSettingsError,
  type SourceWindow,
  type UpstreamOptions,
} from '../types.js';
import { baseUrlOf, bodyText, getUpstream, plainWords, statusFailure, whatArrived } from '../upstream-get.js';

export interface EnergiDataServiceSettings {
  /** `DK1` or `DK2` (also `West Denmark`, `East Denmark` or the EIC code), any letter case. */
  readonly area: string;
  readonly currency: 'EUR' | 'DKK';
  /** Default: the area (`DK1`) for EUR, `DK1-DKK` for DKK. */
  readonly symbol?: string;
  readonly baseUrl?: string;
  /** Default: the spacing of the records (quarter hours since the data set began). */
  readonly resolution?: Resolution;
}

/** The data set's two price areas, by the names `entsoe` and `nordpool` give them too. */
const AREAS: readonly ConnectorZone[] = [
  { zone: 'DK1', eic: '10YDK-1--------W', aliases: ['West Denmark'] },
  { zone: 'DK2', eic: '10YDK-2--------M', aliases: ['East Denmark'] },
];

const TIMEZONE = 'Europe/Copenhagen';
const TIME_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?Z?$/;
/** The data set's prices are per MWh (its documentation); the records do not repeat it. */
const UNIT = 'MWh';

export const energidataservice: ConnectorType<EnergiDataServiceSettings> = {
  type: 'energidataservice',
  defaultBaseUrl: 'https://api.energidataservice.dk/',
  terms: {
    license: 'CC-BY-4.0',
    attribution: 'Source: Energinet (www.energidataservice.dk)',
    termsUrl: 'https://www.energidataservice.dk/terms-and-conditions',
    redistribution:
      'CC BY 4.0: the data may be copied, changed and distributed freely, also commercially, with credit to Energinet and changes indicated, and never so as to suggest that Energinet endorses the use.',
  },
  zones: AREAS,
  create(settings, upstream = {}) {
    const name = typeof settings.area === 'string' ? settings.area.trim().toUpperCase() : '';
    const area = AREAS.find((a) => [a.zone, a.eic ?? '', ...a.aliases].some((k) => k.toUpperCase() === name));
    if (area === undefined) throw new SourceSettingsError('area', 'must be DK1 or DK2');
    if (settings.currency !== 'EUR' && settings.currency !== 'DKK') {
      throw new SourceSettingsError('currency', 'must be EUR or DKK');
    }
    if (settings.resolution !== undefined && !(settings.resolution in RESOLUTIONS)) {
      throw new SourceSettingsError('resolution', 'must be PT15M, PT30M or PT1H');
    }
    const baseUrl = baseUrlOf(settings.baseUrl, energidataservice.defaultBaseUrl, true);
    return {
      type: 'energidataservice',
      fetchWindow: (window) => fetchPrices({ ...settings, area: area.zone }, baseUrl, upstream, window),
    };
  },
};

async function fetchPrices(
  settings: EnergiDataServiceSettings,
  baseUrl: URL,
  upstream: UpstreamOptions,
  window: SourceWindow,
): Promise<SourceResult> {
  const field = `DayAheadPrice${settings.currency}`;
  // `start` and `end` are Danish local times; a day more on each side, then `TimeUTC` decides.
  const from = addDays(localDate(window.from, TIMEZONE), -1);
  const to = addDays(localDate(window.to, TIMEZONE), 1);
  const days = Math.round((Date.parse(to) - Date.parse(from)) / 86_400_000);
  const url = new URL('dataset/DayAheadPrices', baseUrl);
  url.searchParams.set('start', from);
  url.searchParams.set('end', to);
  url.searchParams.set('filter', JSON.stringify({ PriceArea: [settings.area] }));
  url.searchParams.set('columns', `TimeUTC,PriceArea,${field}`);
  url.searchParams.set('sort', 'TimeUTC');
  url.searchParams.set('limit', String(days * 100));
  const got = await getUpstream(url, upstream);
  if (!got.ok) return got;
  const { answer } = got;
  const text = bodyText(answer);
  let body: { total?: unknown; records?: unknown; message?: unknown };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    if (answer.status !== 200) return { ok: false, failure: statusFailure(answer, plainWords(text)) };
    return failure(`${answer.where} sent no JSON; arrived: ${whatArrived(answer)}`);
  }
  if (answer.status !== 200) {
    const words = typeof body?.message === 'string' ? body.message : text;
    return { ok: false, failure: statusFailure(answer, plainWords(words), 'upstream') };
  }
  if (!Array.isArray(body?.records)) return failure(`${answer.where} sent no records`);
  const records = body.records as Record<string, unknown>[];
  if (typeof body.total === 'number' && body.total > records.length) {
    return failure(`${answer.where} sent ${records.length} of ${body.total} records`);
  }
  const byStart = new Map<number, string>();
  for (const [i, record] of records.entries()) {
    if (record?.['PriceArea'] !== settings.area) continue;
    const time = record['TimeUTC'];
    if (typeof time !== 'string' || !TIME_UTC.test(time))
      return failure(`record ${i + 1}: TimeUTC "${time}"`);
    const start = Date.parse(time.endsWith('Z') ? time : `${time}Z`);
    if (byStart.has(start)) return failure(`record ${i + 1}: TimeUTC ${time} is there twice`);
    const value = record[field];
    if (value === null || value === undefined) continue; // no price: missing, never 0
    const price = typeof value === 'number' ? checkNumberPrice(value) : checkPrice(String(value));
    if (!price.ok) return failure(`record ${i + 1}: ${field}: ${price.reason}`);
    byStart.set(start, price.text);
  }
  const starts = [...byStart.keys()].sort((a, b) => a - b);
  const resolution = settings.resolution ?? spacing(starts) ?? datasetResolution(starts);
  if (resolution === undefined) {
    return starts.length === 0
      ? { ok: true, series: [] }
      : failure('the spacing of the records shows no resolution (PT15M, PT30M or PT1H): set resolution');
  }
  const points = starts
    .filter((start) => start >= window.from && start < window.to)
    .map((start) => ({ start, price: byStart.get(start) as string }));
  const series: Series = {
    symbol: (
      settings.symbol ?? (settings.currency === 'EUR' ? settings.area : `${settings.area}-DKK`)
    ).toUpperCase(),
    name: `${settings.area} day-ahead (Energi Data Service)`,
    kind: 'electricity',
    currency: settings.currency,
    unit: UNIT,
    timezone: TIMEZONE,
    resolution,
  };
  return { ok: true, series: [{ series, points }] };
}

/**
 * With a single record there is no spacing to read: the data set's own, quarter hours from the
 * day-ahead market's 15-minute switch (1 October 2025, Danish time), hours before it.
 */
function datasetResolution(starts: readonly number[]): Resolution | undefined {
  if (starts.length !== 1) return undefined;
  return (starts[0] as number) >= QUARTER_HOURS_FROM ? 'PT15M' : 'PT1H';
}

/** The first quarter-hour delivery of the day-ahead market: 2025-10-01 00:00 in Copenhagen. */
const QUARTER_HOURS_FROM = Date.parse('2025-09-30T22:00:00Z');

/** The resolution the records are spaced by: the shortest step between two of them. */
function spacing(starts: readonly number[]): Resolution | undefined {
  let step = Number.POSITIVE_INFINITY;
  for (let i = 1; i < starts.length; i++)
    step = Math.min(step, (starts[i] as number) - (starts[i - 1] as number));
  const minutes = step / 60_000;
  return (Object.keys(RESOLUTIONS) as Resolution[]).find((r) => r !== 'P1D' && RESOLUTIONS[r] === minutes);
}

function failure(message: string): { ok: false; failure: SourceFailure } {
  return { ok: false, failure: { kind: 'format', message: `Energi Data Service answer: ${message}` } };
}
