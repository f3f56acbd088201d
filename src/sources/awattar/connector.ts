/**
 * `awattar`: the EPEX day-ahead prices aWATTar publishes for Austria (`api.awattar.at`) and
 * Germany-Luxembourg (`api.awattar.de`), `GET /v1/marketdata?start=&end=` in epoch milliseconds.
 * Each record carries its own start, end and unit (`Eur/MWh`), so the interval length and the
 * currency are read from the records, never assumed. docs/sources.md.
 */
import { checkNumberPrice } from '../../domain/prices/decimal.js';
import { isResolution, type Resolution } from '../../domain/time/days.js';
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
import { baseUrlOf, bodyText, getUpstream, plainWords, statusFailure, whatArrived } from '../upstream-get.js';

export interface AwattarSettings {
  /** `AT` or `DE-LU` (also `DE`, `Austria`, `Germany`). */
  readonly zone: string;
  /** The series filled; default the zone (`AT`, `DE-LU`). */
  readonly symbol?: string;
  /** Default: `https://api.awattar.at/` for AT, `https://api.awattar.de/` for DE-LU. */
  readonly baseUrl?: string;
  /** Default: the length of the records. */
  readonly resolution?: Resolution;
  /** Repeat an hourly price over the four quarters of a `PT15M` series. */
  readonly fillQuarters?: boolean;
}

interface AwattarZone extends ConnectorZone {
  readonly eic: string;
  readonly timezone: string;
  readonly baseUrl: string;
}

const ZONES: readonly AwattarZone[] = [
  {
    zone: 'AT',
    eic: '10YAT-APG------L',
    aliases: ['Austria'],
    timezone: 'Europe/Vienna',
    baseUrl: 'https://api.awattar.at/',
  },
  {
    zone: 'DE-LU',
    eic: '10Y1001A1001A82H',
    aliases: ['DE', 'LU', 'Germany', 'Luxembourg'],
    timezone: 'Europe/Berlin',
    baseUrl: 'https://api.awattar.de/',
  },
];

/** `Eur/MWh`, as the records write their unit. */
const UNIT = /^\s*([A-Za-z]{3})\s*\/\s*(MWh|kWh)\s*$/i;
const UNITS: Record<string, string> = { MWH: 'MWh', KWH: 'kWh' };
const MINUTE_MS = 60_000;

export const awattar: ConnectorType<AwattarSettings> = {
  type: 'awattar',
  defaultBaseUrl: 'https://api.awattar.at/',
  terms: {
    license: 'not stated',
    attribution: 'not stated',
    termsUrl: 'https://www.awattar.at/services/api',
    redistribution:
      'not stated; the API page asks for fair use, at most 100 requests a day (the default schedule stays well below)',
  },
  zones: ZONES.map(({ zone, eic, aliases }) => ({ zone, eic, aliases })),
  create(settings, upstream = {}) {
    const name = typeof settings.zone === 'string' ? settings.zone.trim().toUpperCase() : '';
    const zone = ZONES.find((z) => [z.zone, z.eic, ...z.aliases].some((k) => k.toUpperCase() === name));
    if (zone === undefined) throw new SourceSettingsError('zone', 'must be AT or DE-LU');
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
    const baseUrl = baseUrlOf(settings.baseUrl, zone.baseUrl, true);
    return {
      type: 'awattar',
      fetchWindow: (window) => fetchPrices(zone, settings, baseUrl, upstream, window),
    };
  },
};

async function fetchPrices(
  zone: AwattarZone,
  settings: AwattarSettings,
  baseUrl: URL,
  upstream: UpstreamOptions,
  window: SourceWindow,
): Promise<SourceResult> {
  const url = new URL('v1/marketdata', baseUrl);
  url.searchParams.set('start', String(window.from));
  url.searchParams.set('end', String(window.to));
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
  if (answer.status !== 200) {
    const said = errorWords(body);
    const words = plainWords(said ?? text);
    return { ok: false, failure: statusFailure(answer, words, said === undefined ? 'http' : 'upstream') };
  }
  const records = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(records)) return failure(`${answer.where} sent no data list`);
  const rows: TimedPrice[] = [];
  let unit: string | undefined;
  for (const [i, record] of (records as Record<string, unknown>[]).entries()) {
    const start = record?.['start_timestamp'];
    const end = record?.['end_timestamp'];
    if (!Number.isInteger(start) || !Number.isInteger(end) || (end as number) <= (start as number)) {
      return failure(`record ${i + 1}: start_timestamp ${start}, end_timestamp ${end}`);
    }
    if (typeof record['unit'] !== 'string') return failure(`record ${i + 1} names no unit`);
    if (unit !== undefined && record['unit'] !== unit) {
      return failure(`records in ${unit} and ${record['unit']}`);
    }
    unit = record['unit'];
    const value = record['marketprice'];
    let price: string | undefined;
    if (value !== null && value !== undefined) {
      if (typeof value !== 'number') return failure(`record ${i + 1}: marketprice ${JSON.stringify(value)}`);
      const checked = checkNumberPrice(value);
      if (!checked.ok) return failure(`record ${i + 1}: marketprice: ${checked.reason}`);
      price = checked.text;
    }
    const minutes = ((end as number) - (start as number)) / MINUTE_MS;
    if ((start as number) >= window.from && (start as number) < window.to) {
      rows.push({ start: start as number, minutes, price });
    }
  }
  // Nothing for the window yet (tomorrow before about 14:00): a success without points, never zeros.
  if (rows.length === 0) return { ok: true, series: [] };
  const read = UNIT.exec(unit as string);
  if (read === null) return failure(`unit ${JSON.stringify(unit)} is not a currency per MWh or kWh`);
  const grid = onGrid(rows, settings.resolution, settings.fillQuarters === true);
  if (!grid.ok) return failure(grid.reason);
  if (grid.resolution === undefined) return { ok: true, series: [] };
  const series: Series = {
    symbol: (settings.symbol ?? zone.zone).toUpperCase(),
    name: `${zone.zone} day-ahead (aWATTar)`,
    kind: 'electricity',
    currency: (read[1] as string).toUpperCase(),
    unit: UNITS[(read[2] as string).toUpperCase()] as string,
    timezone: zone.timezone,
    resolution: grid.resolution,
  };
  return { ok: true, series: [{ series, points: grid.points }] };
}

/** The words of a JSON error document, from the fields such documents use, if it has any. */
function errorWords(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  for (const field of ['message', 'error', 'detail']) {
    const value = (body as Record<string, unknown>)[field];
    if (typeof value === 'string' && value !== '') return value;
    if (
      typeof value === 'object' &&
      value !== null &&
      typeof (value as { message?: unknown }).message === 'string'
    ) {
      return (value as { message: string }).message;
    }
  }
  return undefined;
}

function failure(message: string): { ok: false; failure: SourceFailure } {
  return { ok: false, failure: { kind: 'format', message: `aWATTar answer: ${message}` } };
}
