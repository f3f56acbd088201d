/**
 * `energycharts`: day-ahead prices of one bidding zone from Fraunhofer ISE's Energy-Charts API
 * (`GET /price?bzn=&start=&end=`). An answer is two parallel arrays, `unix_seconds` (interval
 * starts) and `price` (null where the interval has no price), with the unit beside them
 * (`EUR / MWh`). An interval lasts until the next start, so a window across the 15-minute switch
 * shows hourly and quarter-hourly intervals side by side. docs/sources.md.
 */
import { checkNumberPrice } from '../../domain/prices/decimal.js';
import { addDays, isResolution, localDate, RESOLUTIONS, type Resolution } from '../../domain/time/days.js';
import type { Series } from '../../stores/types.js';
import { onGrid, type TimedPrice } from '../interval-grid.js';
import {
  type ConnectorType,
  type SourceFailure,
  type SourceResult,
  SourceSettingsError,
  type SourceWindow,
  type UpstreamOptions,
  type UpstreamTerms,
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
import { CC_BY_ZONES, ENERGY_CHARTS_ZONES, type EnergyChartsZone, energyChartsZone } from './zones.js';

export interface EnergyChartsSettings {
  /** A bidding zone by its `bzn` (`DE-LU`, `IT-North`), an alias (`DE`, `IT-NORD`) or its EIC code. */
  readonly zone: string;
  /** The series filled; default the zone's usual name (`DE-LU`, `IT-NORD`). */
  readonly symbol?: string;
  readonly baseUrl?: string;
  /** Default: the length of the answer's intervals. */
  readonly resolution?: Resolution;
  /** Repeat an hourly price over the four quarters of a `PT15M` series. */
  readonly fillQuarters?: boolean;
}

/** The API reads dates in German time; a day more before the window covers a reading in UTC too. */
const API_TIMEZONE = 'Europe/Berlin';
/** `EUR / MWh`, as the API writes its unit. */
const UNIT = /^\s*([A-Za-z]{3})\s*\/\s*(MWh|kWh)\s*$/i;
const UNITS: Record<string, string> = { MWH: 'MWh', KWH: 'kWh' };

/** The terms of a zone Energy-Charts does not publish under CC BY 4.0, as its answers' `license_info` words them. */
const PRIVATE_USE_ONLY: UpstreamTerms = {
  license: 'Energy-Charts: for private and internal use only',
  attribution: 'not stated',
  termsUrl: 'https://api.energy-charts.info/',
  redistribution:
    'Prohibited: the data, raw or derived, is for private and internal use only; its use for external or commercial purposes is not allowed (licences from the exchanges, such as EPEX SPOT).',
};

export const energycharts: ConnectorType<EnergyChartsSettings> = {
  type: 'energycharts',
  defaultBaseUrl: 'https://api.energy-charts.info/',
  terms: {
    license: 'CC-BY-4.0',
    attribution: 'CC BY 4.0 (creativecommons.org/licenses/by/4.0) from Bundesnetzagentur | SMARD.de',
    termsUrl: 'https://api.energy-charts.info/',
    redistribution:
      'CC BY 4.0 (redistribution and commercial use with attribution) for AT, BE, CH, CZ, DE-LU, DE-AT-LU, DK1, DK2, FR, HU, IT-North, NL, NO2, PL, SE4 and SI; every other zone is marked "for private and internal use only", its use for external or commercial purposes prohibited (each answer\'s license_info says which applies).',
  },
  // A zone outside CC_BY_ZONES comes with its answer's license_info: private and internal use only.
  termsFor(settings) {
    const zone = energyChartsZone(typeof settings['zone'] === 'string' ? settings['zone'] : '');
    return zone === undefined || CC_BY_ZONES.has(zone.zone) ? energycharts.terms : PRIVATE_USE_ONLY;
  },
  zones: ENERGY_CHARTS_ZONES.map(({ zone, eic, aliases }) => ({ zone, eic, aliases })),
  create(settings, upstream = {}) {
    const zone = energyChartsZone(typeof settings.zone === 'string' ? settings.zone : '');
    if (zone === undefined) {
      throw new SourceSettingsError('zone', `"${settings.zone}" is not a bidding zone Energy-Charts serves`);
    }
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
    const baseUrl = baseUrlOf(settings.baseUrl, energycharts.defaultBaseUrl, true);
    return {
      type: 'energycharts',
      fetchWindow: (window) => fetchPrices(zone, settings, baseUrl, upstream, window),
    };
  },
};

async function fetchPrices(
  zone: EnergyChartsZone,
  settings: EnergyChartsSettings,
  baseUrl: URL,
  upstream: UpstreamOptions,
  window: SourceWindow,
): Promise<SourceResult> {
  // Whole days, the end day included; the points outside the window are dropped below.
  const start = addDays(localDate(window.from, API_TIMEZONE), -1);
  const end = localDate(window.to - 1, API_TIMEZONE);
  const url = new URL('price', baseUrl);
  url.searchParams.set('bzn', zone.zone);
  url.searchParams.set('start', start);
  url.searchParams.set('end', end);
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
  if (answer.status !== 200) return { ok: false, failure: errorFailure(answer, body, zone, start, end) };
  return pricesOf(body as Record<string, unknown>, zone, settings, window);
}

function pricesOf(
  body: Record<string, unknown>,
  zone: EnergyChartsZone,
  settings: EnergyChartsSettings,
  window: SourceWindow,
): SourceResult {
  const starts = body?.['unix_seconds'];
  const prices = body?.['price'];
  if (!Array.isArray(starts) || !Array.isArray(prices)) return failure('no unix_seconds and price arrays');
  if (starts.length !== prices.length) {
    return failure(`${starts.length} unix_seconds but ${prices.length} prices`);
  }
  const rows: TimedPrice[] = [];
  for (const [i, second] of starts.entries()) {
    if (!Number.isInteger(second)) return failure(`unix_seconds[${i}] is ${JSON.stringify(second)}`);
    if (i > 0 && second <= starts[i - 1]) return failure(`unix_seconds[${i}] is not after the one before`);
    const value = prices[i];
    let price: string | undefined;
    if (value !== null) {
      if (typeof value !== 'number') return failure(`price[${i}] is ${JSON.stringify(value)}`);
      const checked = checkNumberPrice(value);
      if (!checked.ok) return failure(`price[${i}]: ${checked.reason}`);
      price = checked.text;
    }
    const minutes = lengthOf(starts, i, settings.resolution);
    if (minutes === undefined) return failure('a single interval shows no resolution: set resolution');
    rows.push({ start: second * 1000, minutes, price });
  }
  const inWindow = rows.filter((row) => row.start >= window.from && row.start < window.to);
  // Nothing for the window yet: a success without points, never zeros.
  if (inWindow.length === 0) return { ok: true, series: [] };
  const unit = typeof body['unit'] === 'string' ? UNIT.exec(body['unit']) : null;
  if (unit === null) {
    return failure(`unit ${JSON.stringify(body['unit'] ?? null)} is not a currency per MWh or kWh`);
  }
  const grid = onGrid(inWindow, settings.resolution, settings.fillQuarters === true);
  if (!grid.ok) return failure(grid.reason);
  if (grid.resolution === undefined) return { ok: true, series: [] };
  const series: Series = {
    symbol: (settings.symbol ?? zone.symbol).toUpperCase(),
    name: `${zone.zone} day-ahead (Energy-Charts)`,
    kind: 'electricity',
    currency: (unit[1] as string).toUpperCase(),
    unit: UNITS[(unit[2] as string).toUpperCase()] as string,
    timezone: zone.timezone,
    resolution: grid.resolution,
  };
  return { ok: true, series: [{ series, points: grid.points }] };
}

/**
 * An interval's length in minutes: until the next one starts; the last one as long as the one
 * before it; a lone one as long as the `resolution` setting says, if it says.
 */
function lengthOf(
  starts: readonly number[],
  i: number,
  resolution: Resolution | undefined,
): number | undefined {
  const here = starts[i] as number;
  const next = starts[i + 1];
  if (next !== undefined) return (next - here) / 60;
  const previous = starts[i - 1];
  if (previous !== undefined) return (here - previous) / 60;
  return resolution === undefined ? undefined : RESOLUTIONS[resolution];
}

/** An error answer in the API's words: `detail` as text, or the `msg` of each item of a list. */
function errorFailure(
  answer: UpstreamAnswer,
  body: unknown,
  zone: EnergyChartsZone,
  start: string,
  end: string,
): SourceFailure {
  const detail = (body as { detail?: unknown } | null)?.detail;
  const words =
    typeof detail === 'string'
      ? detail
      : Array.isArray(detail)
        ? detail
            .map((item) => (item as { msg?: unknown })?.msg)
            .filter((msg) => typeof msg === 'string')
            .join('; ')
        : JSON.stringify(body);
  const failed = statusFailure(answer, plainWords(words), detail === undefined ? 'http' : 'upstream');
  // The API answers 404 when it has no price at all in the days asked for: a gap, named as one.
  if (answer.status === 404) {
    return {
      ...failed,
      message: `Energy-Charts has no ${zone.zone} prices from ${start} to ${end}: ${failed.message}`,
    };
  }
  return failed;
}

function failure(message: string): { ok: false; failure: SourceFailure } {
  return { ok: false, failure: { kind: 'format', message: `Energy-Charts answer: ${message}` } };
}
