/**
 * The development data set (docs/data-model.md): a handful of realistic series and the documented
 * demo key. Deterministic: a price depends only on its series and interval, never on the day it is
 * generated, so tests can pin values. Electricity also has tomorrow's prices; nothing else does.
 */
import { keyFromRandom } from '../domain/keys/key-format.js';
import { addDays, dayIntervals, localDate } from '../domain/time/days.js';
import { offsetMinutes } from '../domain/time/zone.js';
import type { KeyService } from '../services/key-service.js';
import type { PriceStore, Series, StoredPrice } from '../stores/types.js';

/** The demo key, written in README.md. It exists only where the development data set is loaded. */
export const DEMO_API_KEY = keyFromRandom('demo', 'TryPricepointDemo2026x');
export const DEMO_KEY_NAME = 'demo (development data set)';
/** Days before today that the data set covers. */
export const DEV_DATA_DAYS_BACK = 90;

interface LocalTime {
  readonly hour: number;
  readonly weekday: number;
  readonly dayOfYear: number;
  readonly epochDay: number;
  /** A number in [0, 1) for the whole local day: how windy it is. */
  readonly dayNoise: number;
}

type Shape = (local: LocalTime, noise: number) => number;

interface DevSeries extends Series {
  readonly decimals: number;
  readonly hasTomorrow: boolean;
  readonly shape: Shape;
  /** Local minutes of day with points (trading hours); all when absent. */
  readonly open?: (minuteOfDay: number, weekday: number) => boolean;
}

/**
 * Morning and evening peaks, a night and weekend dip, in summer a solar trough, and on the windiest
 * days (one in five) a slump that takes nights and weekends below zero.
 */
function electricity(base: number, swing: number): Shape {
  return ({ hour, weekday, dayOfYear, dayNoise }, noise) => {
    const wind = Math.max(0, (dayNoise - 0.8) / 0.2) * 1.8;
    const peaks = Math.exp(-((hour - 8) ** 2) / 4) + 1.2 * Math.exp(-((hour - 18.5) ** 2) / 5);
    const night = hour < 5 ? -0.35 : 0;
    const weekend = weekday === 0 || weekday === 6 ? -0.45 : 0;
    const summer = Math.max(0, Math.cos(((dayOfYear - 172) / 365) * 2 * Math.PI));
    const solar = summer * 1.6 * Math.exp(-((hour - 13) ** 2) / 6);
    return base + swing * (peaks + night + weekend - solar - wind) + swing * 0.25 * (noise - 0.5);
  };
}

function slowWave(epochDay: number, periods: readonly number[]): number {
  return periods.reduce((sum, p, i) => sum + Math.sin((2 * Math.PI * epochDay) / p + i) / (i + 1), 0);
}

export const DEV_SERIES: readonly DevSeries[] = [
  {
    symbol: 'NO1',
    name: 'Oslo day-ahead',
    kind: 'electricity',
    currency: 'EUR',
    unit: 'MWh',
    timezone: 'Europe/Oslo',
    resolution: 'PT15M',
    decimals: 2,
    hasTomorrow: true,
    shape: electricity(48, 30),
  },
  {
    symbol: 'DE-LU',
    name: 'Germany-Luxembourg day-ahead',
    kind: 'electricity',
    currency: 'EUR',
    unit: 'MWh',
    timezone: 'Europe/Berlin',
    resolution: 'PT15M',
    decimals: 2,
    hasTomorrow: true,
    shape: electricity(72, 55),
  },
  {
    symbol: 'JP-TK',
    name: 'Tokyo area day-ahead',
    kind: 'electricity',
    currency: 'JPY',
    unit: 'kWh',
    timezone: 'Asia/Tokyo',
    resolution: 'PT30M',
    decimals: 2,
    hasTomorrow: true,
    shape: electricity(12, 6),
  },
  {
    symbol: 'NYISO-J',
    name: 'New York City day-ahead',
    kind: 'electricity',
    currency: 'USD',
    unit: 'MWh',
    timezone: 'America/New_York',
    resolution: 'PT1H',
    decimals: 2,
    hasTomorrow: true,
    shape: electricity(45, 28),
  },
  {
    symbol: 'EURUSD',
    name: 'Euro in US dollars, daily reference rate',
    kind: 'fx',
    currency: 'USD',
    unit: 'EUR',
    timezone: 'Europe/Berlin',
    resolution: 'P1D',
    decimals: 4,
    hasTomorrow: false,
    shape: ({ epochDay }, noise) => 1.09 + 0.03 * slowWave(epochDay, [97, 41, 13]) + 0.004 * (noise - 0.5),
  },
  {
    symbol: 'BTC-USD',
    name: 'Bitcoin in US dollars',
    kind: 'crypto',
    currency: 'USD',
    unit: 'BTC',
    timezone: 'UTC',
    resolution: 'PT1H',
    decimals: 2,
    hasTomorrow: false,
    shape: ({ epochDay, hour }, noise) =>
      64000 + 6000 * slowWave(epochDay + hour / 24, [61, 17, 5]) + 400 * (noise - 0.5),
  },
  {
    symbol: 'XAU-USD',
    name: 'Gold in US dollars',
    kind: 'commodity',
    currency: 'USD',
    unit: 'troy_oz',
    timezone: 'Europe/London',
    resolution: 'PT1H',
    decimals: 2,
    hasTomorrow: false,
    shape: ({ epochDay, hour }, noise) =>
      2650 + 60 * slowWave(epochDay + hour / 24, [83, 29, 7]) + 6 * (noise - 0.5),
  },
  {
    symbol: 'ACME',
    name: 'Acme Corp. common stock',
    kind: 'equity',
    currency: 'USD',
    unit: 'share',
    timezone: 'America/New_York',
    resolution: 'PT30M',
    decimals: 2,
    hasTomorrow: false,
    shape: ({ epochDay, hour }, noise) =>
      182 + 9 * slowWave(epochDay + hour / 24, [53, 19, 3]) + 0.8 * (noise - 0.5),
    open: (minute, weekday) => weekday >= 1 && weekday <= 5 && minute >= 9 * 60 + 30 && minute < 16 * 60,
  },
  // The ECB's pairs the README's examples convert with (fx: of the development configuration).
  {
    symbol: 'EURNOK',
    name: 'Euro in Norwegian kroner, daily reference rate',
    kind: 'fx',
    currency: 'NOK',
    unit: 'EUR',
    timezone: 'Europe/Berlin',
    resolution: 'P1D',
    decimals: 4,
    hasTomorrow: false,
    shape: ({ epochDay }, noise) => 11.55 + 0.18 * slowWave(epochDay, [89, 37, 11]) + 0.02 * (noise - 0.5),
  },
  {
    symbol: 'EURSEK',
    name: 'Euro in Swedish kronor, daily reference rate',
    kind: 'fx',
    currency: 'SEK',
    unit: 'EUR',
    timezone: 'Europe/Berlin',
    resolution: 'P1D',
    decimals: 4,
    hasTomorrow: false,
    shape: ({ epochDay }, noise) => 11.2 + 0.16 * slowWave(epochDay, [83, 29, 7]) + 0.02 * (noise - 0.5),
  },
];

/** A number in [0, 1) from the series and the instant alone (FNV-1a, then an avalanche mix). */
function noiseOf(symbol: string, epochMs: number): number {
  let h = 0x811c9dc5;
  const text = `${symbol}@${epochMs}`;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return (h >>> 0) / 2 ** 32;
}

function decimalText(value: number, decimals: number): string {
  const text = value.toFixed(decimals);
  return Number(text) === 0 ? (0).toFixed(decimals) : text;
}

/** The price of one interval of a development series. */
export function devPrice(series: DevSeries, start: number): string {
  const wall = start + offsetMinutes(start, series.timezone) * 60_000;
  const date = new Date(wall);
  const minuteOfDay = date.getUTCHours() * 60 + date.getUTCMinutes();
  const epochDay = Math.floor(wall / 86_400_000);
  const dayOfYear = Math.floor((wall - Date.UTC(date.getUTCFullYear(), 0, 1)) / 86_400_000) + 1;
  const value = series.shape(
    {
      hour: minuteOfDay / 60,
      weekday: date.getUTCDay(),
      dayOfYear,
      epochDay,
      dayNoise: noiseOf(series.symbol, epochDay),
    },
    noiseOf(series.symbol, start),
  );
  return decimalText(value, series.decimals);
}

/** Every point of one series for one local day. */
export function devDay(series: DevSeries, date: string): StoredPrice[] {
  const points: StoredPrice[] = [];
  for (const { start } of dayIntervals(date, series.timezone, series.resolution)) {
    if (series.open) {
      const wall = new Date(start + offsetMinutes(start, series.timezone) * 60_000);
      if (!series.open(wall.getUTCHours() * 60 + wall.getUTCMinutes(), wall.getUTCDay())) continue;
    }
    points.push({ start, price: devPrice(series, start) });
  }
  return points;
}

/**
 * Writes the data set for the days around `now` (idempotent: the same prices land on the same
 * intervals), and returns how many points it wrote.
 */
export async function loadDevPrices(prices: PriceStore, now: number): Promise<number> {
  let written = 0;
  for (const series of DEV_SERIES) {
    const { decimals: _d, hasTomorrow: _t, shape: _s, open: _o, ...meta } = series;
    await prices.upsertSeries(meta);
    const today = localDate(now, series.timezone);
    const last = series.hasTomorrow ? addDays(today, 1) : today;
    const points: StoredPrice[] = [];
    for (let date = addDays(today, -DEV_DATA_DAYS_BACK); date <= last; date = addDays(date, 1)) {
      points.push(...devDay(series, date));
    }
    written += await prices.upsertPrices(series.symbol, points);
  }
  return written;
}

/** Loads the data set and the demo key. */
export async function loadDevData(deps: {
  prices: PriceStore;
  keys: KeyService;
  now: number;
}): Promise<number> {
  const written = await loadDevPrices(deps.prices, deps.now);
  await deps.keys.ensure(DEMO_API_KEY, { name: DEMO_KEY_NAME, tier: 'demo', scopes: ['read'], kind: 'demo' });
  return written;
}
