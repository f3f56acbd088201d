/**
 * `nordpool`: day-ahead prices of one delivery area from Nord Pool's data portal
 * (`GET /api/DayAheadPrices?date=&market=DayAhead&deliveryArea=&currency=`). One answer is one
 * delivery day in Central European time (`deliveryDateCET`): `multiAreaEntries` with UTC
 * `deliveryStart`/`deliveryEnd` and a price per area, the `currency` asked for, and `areaStates`
 * saying whether each area's prices are `Final` or `Preliminary`. A day not published yet is
 * `204 No Content`. Prices are per MWh (the portal's published format; the answer does not repeat
 * it). docs/sources.md.
 */
import { checkNumberPrice } from '../../domain/prices/decimal.js';
import { addDays, daysBetween, isResolution, localDate, type Resolution } from '../../domain/time/days.js';
import type { Series } from '../../stores/types.js';
import { onGrid, type TimedPrice } from '../interval-grid.js';
import {
  type ConnectorType,
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
import { NORD_POOL_ZONES, type NordPoolZone, nordPoolZone } from './zones.js';

export interface NordPoolSettings {
  /** A delivery area by its code (`NO1`, `GER`), the `entsoe` name (`DE-LU`), an alias or its EIC code. */
  readonly zone: string;
  /** The currency asked for (`EUR`, Nord Pool's base currency, unless set). */
  readonly currency?: string;
  /** The series filled; default the zone's symbol in EUR (`NO1`), `NO1-NOK` in another currency. */
  readonly symbol?: string;
  readonly baseUrl?: string;
  /** Default: the length of the answer's intervals. */
  readonly resolution?: Resolution;
  /** Repeat an hourly price over the four quarters of a `PT15M` series. */
  readonly fillQuarters?: boolean;
  /** Take prices Nord Pool marks `Preliminary` (default: only `Final` ones). */
  readonly preliminary?: boolean;
}

/** The currencies the data portal converts its euro prices into. */
const CURRENCIES = ['EUR', 'BGN', 'DKK', 'NOK', 'PLN', 'RON', 'SEK'];
/** `date` names a delivery day in Central European time, whatever the area's own zone. */
const CET = 'Europe/Berlin';
/** Per MWh, as the data portal publishes its prices; the answer does not repeat the unit. */
const UNIT = 'MWh';
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const MINUTE_MS = 60_000;

export const nordpool: ConnectorType<NordPoolSettings> = {
  type: 'nordpool',
  defaultBaseUrl: 'https://dataportal-api.nordpoolgroup.com/api/',
  terms: {
    license: "Nord Pool's terms and conditions for use of its website (no open licence)",
    attribution: 'not stated',
    termsUrl: 'https://www.nordpoolgroup.com/en/About-us/terms-and-conditions-for-useofwebsite/',
    redistribution:
      "Data may be downloaded for the analysis or research of the user's own firm; republishing, retransmitting or redistributing it to any other party or on any website needs Nord Pool's express prior written consent (Nord Pool sells redistribution licences with its market data services).",
  },
  zones: NORD_POOL_ZONES.map(({ zone, eic, aliases }) => ({ zone, eic, aliases: [...aliases] })),
  create(settings, upstream = {}) {
    const zone = nordPoolZone(typeof settings.zone === 'string' ? settings.zone : '');
    if (zone === undefined) {
      throw new SourceSettingsError('zone', `"${settings.zone}" is not a delivery area Nord Pool publishes`);
    }
    const currency = settings.currency ?? 'EUR';
    if (typeof currency !== 'string' || !CURRENCIES.includes(currency)) {
      throw new SourceSettingsError('currency', `must be one of ${CURRENCIES.join(', ')}`);
    }
    if (
      settings.resolution !== undefined &&
      (!isResolution(settings.resolution) || settings.resolution === 'P1D')
    ) {
      throw new SourceSettingsError('resolution', 'must be PT15M, PT30M or PT1H');
    }
    for (const field of ['fillQuarters', 'preliminary'] as const) {
      if (settings[field] !== undefined && typeof settings[field] !== 'boolean') {
        throw new SourceSettingsError(field, 'must be true or false');
      }
    }
    if (settings.symbol !== undefined && (typeof settings.symbol !== 'string' || settings.symbol === '')) {
      throw new SourceSettingsError('symbol', 'must be a non-empty text');
    }
    const baseUrl = baseUrlOf(settings.baseUrl, nordpool.defaultBaseUrl, true);
    return {
      type: 'nordpool',
      fetchWindow: (window) => fetchPrices(zone, { ...settings, currency }, baseUrl, upstream, window),
    };
  },
};

type Checked = NordPoolSettings & { readonly currency: string };

async function fetchPrices(
  zone: NordPoolZone,
  settings: Checked,
  baseUrl: URL,
  upstream: UpstreamOptions,
  window: SourceWindow,
): Promise<SourceResult> {
  // One request per delivery day (CET) the window touches; an area east of CET (FI, the Baltics)
  // needs two of them for one of its own days.
  const first = localDate(window.from, CET);
  const days = daysBetween(first, localDate(window.to - 1, CET)) + 1;
  const rows: TimedPrice[] = [];
  for (let i = 0; i < days; i++) {
    const got = await fetchDay(zone, settings, baseUrl, upstream, addDays(first, i));
    if (!got.ok) return got;
    rows.push(...got.rows.filter((row) => row.start >= window.from && row.start < window.to));
  }
  // Nothing for the window yet (a day not published, or not final): a success without points.
  if (rows.length === 0) return { ok: true, series: [] };
  const grid = onGrid(rows, settings.resolution, settings.fillQuarters === true);
  if (!grid.ok) return failure(grid.reason);
  if (grid.resolution === undefined) return { ok: true, series: [] };
  const series: Series = {
    symbol: (
      settings.symbol ?? (settings.currency === 'EUR' ? zone.symbol : `${zone.symbol}-${settings.currency}`)
    ).toUpperCase(),
    name: `${zone.symbol} day-ahead (Nord Pool)`,
    kind: 'electricity',
    currency: settings.currency,
    unit: UNIT,
    timezone: zone.timezone,
    resolution: grid.resolution,
  };
  return { ok: true, series: [{ series, points: grid.points }] };
}

type DayRows = { ok: true; rows: TimedPrice[] } | { ok: false; failure: SourceFailure };

/** The priced intervals of one CET delivery day, none when it is not published (or not final) yet. */
async function fetchDay(
  zone: NordPoolZone,
  settings: Checked,
  baseUrl: URL,
  upstream: UpstreamOptions,
  date: string,
): Promise<DayRows> {
  const url = new URL('DayAheadPrices', baseUrl);
  url.searchParams.set('date', date);
  url.searchParams.set('market', 'DayAhead');
  url.searchParams.set('deliveryArea', zone.zone);
  url.searchParams.set('currency', settings.currency);
  const got = await getUpstream(url, upstream);
  if (!got.ok) return got;
  const { answer } = got;
  // The portal's way of saying that the day has no prices yet.
  if (answer.status === 204) return { ok: true, rows: [] };
  const text = bodyText(answer);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    if (answer.status !== 200) return { ok: false, failure: statusFailure(answer, plainWords(text)) };
    return failure(`${answer.where} sent no JSON for ${date}; arrived: ${whatArrived(answer)}`);
  }
  if (answer.status !== 200) return { ok: false, failure: errorFailure(answer, body, text) };
  return dayRows(body as Record<string, unknown>, zone, settings, date);
}

function dayRows(
  body: Record<string, unknown>,
  zone: NordPoolZone,
  settings: Checked,
  date: string,
): DayRows {
  const at = `${date} ${zone.zone}`;
  const entries = body?.['multiAreaEntries'];
  if (!Array.isArray(entries)) return failure(`${at}: no multiAreaEntries`);
  if (entries.length === 0) return { ok: true, rows: [] };
  if (body['currency'] !== settings.currency) {
    return failure(
      `${at}: prices in ${JSON.stringify(body['currency'] ?? null)}, ${settings.currency} was asked`,
    );
  }
  const state = areaState(body['areaStates'], zone.zone);
  if (state === 'Preliminary' && settings.preliminary !== true) return { ok: true, rows: [] };
  if (state !== 'Final' && state !== 'Preliminary') {
    return failure(
      `${at}: areaStates gives the area ${state === undefined ? 'no state' : `the state "${state}"`}`,
    );
  }
  const rows: TimedPrice[] = [];
  for (const [i, entry] of (entries as Record<string, unknown>[]).entries()) {
    const start = instant(entry?.['deliveryStart']);
    const end = instant(entry?.['deliveryEnd']);
    if (start === undefined || end === undefined || end <= start) {
      return failure(
        `${at}: entry ${i + 1}: deliveryStart ${JSON.stringify(entry?.['deliveryStart'])}, deliveryEnd ${JSON.stringify(entry?.['deliveryEnd'])}`,
      );
    }
    const perArea = entry['entryPerArea'];
    if (typeof perArea !== 'object' || perArea === null)
      return failure(`${at}: entry ${i + 1} has no entryPerArea`);
    // An area left out of an entry, or given null, has no price for that interval: missing, never 0.
    const value = (perArea as Record<string, unknown>)[zone.zone];
    let price: string | undefined;
    if (value !== null && value !== undefined) {
      if (typeof value !== 'number') return failure(`${at}: entry ${i + 1}: price ${JSON.stringify(value)}`);
      const checked = checkNumberPrice(value);
      if (!checked.ok) return failure(`${at}: entry ${i + 1}: ${checked.reason}`);
      price = checked.text;
    }
    rows.push({ start, minutes: (end - start) / MINUTE_MS, price });
  }
  return { ok: true, rows };
}

/** The state `areaStates` gives `area` (`Final`, `Preliminary`), if it names the area. */
function areaState(states: unknown, area: string): string | undefined {
  if (!Array.isArray(states)) return undefined;
  for (const item of states as { state?: unknown; areas?: unknown }[]) {
    if (Array.isArray(item?.areas) && item.areas.includes(area) && typeof item.state === 'string') {
      return item.state;
    }
  }
  return undefined;
}

/** An ISO instant in UTC (`2025-10-25T22:00:00Z`) in epoch milliseconds. */
function instant(value: unknown): number | undefined {
  if (typeof value !== 'string' || !INSTANT.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : at;
}

/** An error answer in the portal's words: a problem document's `title`, `detail` and `errors`. */
function errorFailure(answer: UpstreamAnswer, body: unknown, text: string): SourceFailure {
  const doc = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const said: string[] = [];
  for (const field of ['title', 'detail', 'message']) {
    if (typeof doc[field] === 'string' && doc[field] !== '') said.push(doc[field] as string);
  }
  if (typeof doc['errors'] === 'object' && doc['errors'] !== null) {
    for (const [name, messages] of Object.entries(doc['errors'] as Record<string, unknown>)) {
      const list = Array.isArray(messages) ? messages.filter((m) => typeof m === 'string') : [];
      if (list.length > 0) said.push(`${name}: ${list.join(' ')}`);
    }
  }
  if (said.length === 0) return statusFailure(answer, plainWords(text));
  return statusFailure(answer, plainWords(said.join('; ')), 'upstream');
}

function failure(message: string): { ok: false; failure: SourceFailure } {
  return { ok: false, failure: { kind: 'format', message: `Nord Pool answer: ${message}` } };
}
