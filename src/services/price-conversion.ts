/**
 * Prices in another currency or per another energy unit (docs/data-model.md, "Converted prices"):
 * each interval at the rate of the FX series the operator designates for the pair (`fx:` in the
 * config file), the newest rate published at or before the interval's start, computed exactly
 * (src/domain/money/exact.ts). Knows nothing of HTTP.
 */
import type { FxPairs } from '../config/config-file.js';
import { ApiError } from '../domain/errors/api-error.js';
import {
  CONVERTED_DECIMALS,
  ENERGY_UNITS,
  type EnergyUnit,
  type ExactDecimal,
  energyExponent,
  exactDecimal,
  multiplyRoundedShifted,
  perUnit,
} from '../domain/money/exact.js';
import { type CalendarDate, instantOf, intervalEnd, localDate } from '../domain/time/days.js';
import type { PriceStore, Series, StoredPrice } from '../stores/types.js';
import type { ServedPrice } from './served-days.js';

export type { FxPairs };

/** The rate a converted price was computed with: the FX series, the local date of its interval, its price. */
export interface FxUsed {
  readonly symbol: string;
  readonly date: CalendarDate;
  /** The FX series' price as stored (a decimal text). */
  readonly rate: string;
}

/** Why intervals of a converted day are left out: none had a rate published by its start. */
export interface Unconverted {
  /** How many of the day's stored intervals are left out. */
  readonly intervals: number;
  /** A sentence naming the FX series and what it lacks. */
  readonly reason: string;
}

/** An interval as served; `fx` when its day's intervals were converted at different rates. */
export interface PricePoint extends ServedPrice {
  readonly fx?: FxUsed;
}

/** What a read asks to convert into. */
export interface ConversionQuery {
  readonly currency?: string;
  readonly unit?: EnergyUnit;
}

/** A day of one series as the conversion sees it. */
interface ConvertibleDay extends Series {
  readonly complete: boolean;
  readonly prices: readonly PricePoint[];
}

const DAY_MS = 86_400_000;
/** How far before a read the FX points are fetched in one query; an older rate costs two lookups more. */
const RATE_WINDOW_MS = 8 * DAY_MS;

/**
 * Refuses, before anything is read, a conversion a selected series cannot have: `unit` on a series
 * not priced per energy unit, `currency` with no FX series configured for the pair (400, naming
 * the parameter).
 */
export function checkConversion(series: readonly Series[], query: ConversionQuery, fx: FxPairs): void {
  if (query.unit !== undefined) {
    const refused = series.filter((s) => energyExponent(s.unit) === undefined).map((s) => s.symbol);
    if (refused.length > 0) {
      throw new ApiError(
        'invalid_parameter',
        `The parameter "unit" applies to prices per energy unit (Wh, kWh, MWh); not to ${refused.join(', ')}.`,
        { extra: { parameter: 'unit', symbols: refused } },
      );
    }
  }
  const currency = query.currency;
  if (currency === undefined) return;
  const refused = series.filter((s) => s.currency !== currency && fx[s.currency]?.[currency] === undefined);
  if (refused.length > 0) {
    const pairs = [...new Set(refused.map((s) => `${s.currency} into ${currency}`))].join(', ');
    throw new ApiError(
      'invalid_parameter',
      `The parameter "currency": no FX series is configured to convert ${pairs} (${refused.map((s) => s.symbol).join(', ')}).`,
      { extra: { parameter: 'currency', symbols: refused.map((s) => s.symbol) } },
    );
  }
}

/** An FX rate as stored, with the end of its interval: it is published once that has passed. */
export interface Rate {
  readonly start: number;
  readonly end: number;
  readonly price: string;
}

/** The rates of `series` that convert prices starting `from` to `to` (`ratesBetween`). */
export type RatesReader = (series: Series, from: number, to: number) => Promise<Rate[]>;

/**
 * Converts the days of one series (consecutive, as served) as `query` asks. An interval no rate was
 * published for by its start is left out, its day is not `complete` and says why in `unconverted`
 * (never a silent empty day); the day's `fx` is the rate of its first converted interval (`null`
 * when none), and each interval names its own rate when the day's rates differ.
 */
export async function convertDays<T extends ConvertibleDay>(
  rates: RatesReader,
  days: readonly T[],
  query: ConversionQuery,
  fx: FxPairs,
  fxSeries: (symbol: string) => Promise<Series | undefined>,
): Promise<(T & { fx?: FxUsed | null; unconverted?: Unconverted })[]> {
  const first = days[0];
  if (first === undefined || (query.currency === undefined && query.unit === undefined)) return [...days];
  const from = energyExponent(first.unit) === undefined ? undefined : (first.unit as EnergyUnit);
  const unit = query.unit !== undefined && from !== undefined ? query.unit : undefined;
  const toUnit = (price: string) =>
    unit === undefined || from === undefined ? price : perUnit(price, from, unit);
  const currency =
    query.currency !== undefined && query.currency !== first.currency ? query.currency : undefined;
  if (currency === undefined) {
    return days.map((d) => ({
      ...d,
      unit: unit ?? d.unit,
      prices: d.prices.map((p) => ({ ...p, price: toUnit(p.price) })),
    }));
  }
  const symbol = fx[first.currency]?.[currency] as string;
  // The days are consecutive and their intervals ascend: the first and last start bound the read.
  const firstPoint = days.find((d) => d.prices.length > 0)?.prices[0];
  const lastPoint = days.findLast((d) => d.prices.length > 0)?.prices.at(-1);
  const rateSeries = await fxSeries(symbol);
  const read =
    rateSeries === undefined || firstPoint === undefined || lastPoint === undefined
      ? []
      : await rates(rateSeries, Date.parse(firstPoint.start), Date.parse(lastPoint.start));
  const places = unit === undefined || from === undefined ? 0 : ENERGY_UNITS[unit] - ENERGY_UNITS[from];
  // Each rate is read as a number and named once, however many intervals use it.
  const exact = new Map<Rate, { readonly factor: ExactDecimal; readonly used: FxUsed }>();
  const exactOf = (rate: Rate) => {
    let found = exact.get(rate);
    if (found === undefined) {
      const date = localDate(rate.start, (rateSeries as Series).timezone);
      found = { factor: exactDecimal(rate.price), used: { symbol, date, rate: rate.price } };
      exact.set(rate, found);
    }
    return found;
  };
  let next = 0;
  return days.map((d) => {
    const used: (ReturnType<typeof exactOf> | undefined)[] = [];
    let dayFx: FxUsed | null = null;
    let oneRate = true;
    let firstLeft: PricePoint | undefined;
    for (const p of d.prices) {
      const start = instantOf(p.start);
      // Rates and intervals both ascend: the newest rate whose interval ended by this start.
      while (next < read.length && (read[next] as Rate).end <= start) next++;
      const rate = read[next - 1];
      const found = rate === undefined || rate.end > start ? undefined : exactOf(rate);
      used.push(found);
      if (found === undefined) {
        firstLeft ??= p;
        continue;
      }
      dayFx ??= found.used;
      oneRate &&= found.used.rate === dayFx.rate && found.used.date === dayFx.date;
    }
    const converted: PricePoint[] = [];
    d.prices.forEach((p, i) => {
      const found = used[i];
      if (found === undefined) return;
      const price = multiplyRoundedShifted(p.price, found.factor, CONVERTED_DECIMALS, places);
      converted.push(oneRate ? { ...p, price } : { ...p, price, fx: found.used });
    });
    const left = d.prices.length - converted.length;
    const unconverted: Unconverted | undefined =
      left === 0
        ? undefined
        : {
            intervals: left,
            reason:
              rateSeries === undefined
                ? `The FX series ${symbol} that converts ${first.currency} into ${currency} does not exist on this server.`
                : `${symbol} has no rate published by ${firstLeft?.start}, so ${left} interval${left === 1 ? ' is' : 's are'} left out.`,
          };
    return {
      ...d,
      currency,
      unit: unit ?? d.unit,
      complete: d.complete && converted.length === d.prices.length,
      fx: dayFx,
      ...(unconverted !== undefined && { unconverted }),
      prices: converted,
    };
  });
}

/**
 * The rates of `series` that were published by some instant in `from..to`, oldest first, with the
 * newest one published by `from`. A rate counts as published when its interval has ended: a daily
 * reference rate is known on its day's evening, so prices of a day use the previous day's rate.
 */
export async function ratesBetween(
  prices: PriceStore,
  series: Series,
  from: number,
  to: number,
): Promise<Rate[]> {
  const rate = (p: StoredPrice): Rate => ({
    start: p.start,
    end: intervalEnd(p.start, series.timezone, series.resolution),
    price: p.price,
  });
  const rates = (await prices.pricesBetween(series.symbol, from - RATE_WINDOW_MS, to)).map(rate);
  if (rates[0] !== undefined && rates[0].end <= from) return rates;
  // None in the window was out by `from`: the newest one before it, which may be long ago.
  let before = await prices.latestPrice(series.symbol, from, Number.MIN_SAFE_INTEGER);
  if (before !== undefined && rate(before).end > from) {
    before = await prices.latestPrice(series.symbol, before.start - 1, Number.MIN_SAFE_INTEGER);
  }
  return before === undefined ? rates : [rate(before), ...rates];
}
