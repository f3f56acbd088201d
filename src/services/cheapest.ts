/**
 * The cheapest hours (docs/api.md, "The cheapest hours"): within a range of a series' published
 * prices, the cheapest contiguous window of a given length, or the N cheapest intervals, in real
 * elapsed time, and which parts of the range are not published yet. The prices are read, converted
 * and checked against the tier by the price service, exactly as the day endpoints serve them.
 * Knows nothing of HTTP.
 */
import { ApiError } from '../domain/errors/api-error.js';
import type { Tier } from '../domain/limits/tiers.js';
import type { TariffedPrice } from '../domain/money/tariff.js';
import { decimalMean } from '../domain/prices/aggregate.js';
import {
  addDays,
  type CalendarDate,
  dayBounds,
  dayIntervals,
  formatInstant,
  localDate,
  RESOLUTIONS,
  type Resolution,
  type Span,
} from '../domain/time/days.js';
import type { Series } from '../stores/types.js';
import type { FxUsed, PricePoint } from './price-conversion.js';
import {
  type DayName,
  type DayQuery,
  INTERVALS_PER_UNIT,
  type PriceService,
  weightOf,
} from './price-service.js';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** One end of the range: a day (its start for `from`, its end for `to`), an instant, or now. */
export type RangeEnd = { readonly day: DayName } | { readonly instant: number } | { readonly now: true };

/** What to pick: a window of consecutive intervals, or the cheapest intervals wherever they lie. */
export type Pick =
  | { readonly contiguous: true; readonly duration: Duration }
  | { readonly contiguous: false; readonly duration: Duration }
  | { readonly contiguous: false; readonly count: number };

export interface CheapestQuery extends DayQuery {
  readonly from: RangeEnd;
  readonly to: RangeEnd;
  readonly pick: Pick;
}

/** An ISO 8601 duration of days, hours, minutes and seconds, as asked. */
export interface Duration {
  readonly text: string;
  readonly days: number;
  /** The hours, minutes and seconds besides the days, in milliseconds. */
  readonly timeMs: number;
}

const DURATION = /^P(?:(\d{1,4})D)?(?:T(?:(\d{1,5})H)?(?:(\d{1,6})M)?(?:(\d{1,7})S)?)?$/;

/**
 * An ISO 8601 duration (`PT3H`, `PT90M`, `P1D`, `P1DT6H`), or `undefined` when it is none or zero.
 * Years, months and weeks are left out: their length depends on the calendar.
 * @example parseIsoDuration('pt3h') // { text: 'PT3H', days: 0, timeMs: 10_800_000 }
 */
export function parseIsoDuration(value: string): Duration | undefined {
  const text = value.toUpperCase();
  const match = DURATION.exec(text);
  if (match === null || text.endsWith('T')) return undefined;
  const [days, hours, minutes, seconds] = match.slice(1).map((n) => Number(n ?? 0)) as number[];
  const timeMs = ((hours ?? 0) * 3600 + (minutes ?? 0) * 60 + (seconds ?? 0)) * 1000;
  if (days === 0 && timeMs === 0) return undefined;
  return { text, days: days ?? 0, timeMs };
}

/**
 * How many intervals of `resolution` a duration is, or `undefined` when it is not a whole multiple.
 * A finer series counts elapsed time (a day is 24 hours); a `P1D` series counts its days.
 */
export function intervalsIn(duration: Duration, resolution: Resolution): number | undefined {
  if (resolution === 'P1D') return duration.timeMs === 0 ? duration.days : undefined;
  const step = RESOLUTIONS[resolution] * MINUTE_MS;
  const total = elapsedOf(duration);
  return total % step === 0 ? total / step : undefined;
}

/** The elapsed time of a duration, a day counted as 24 hours. */
export function elapsedOf(duration: Duration): number {
  return duration.days * DAY_MS + duration.timeMs;
}

/** An interval with its instants, in order of start. */
export interface Timed {
  readonly start: number;
  readonly end: number;
  readonly price: string;
}

function fractionDigits(text: string): number {
  const dot = text.indexOf('.');
  return dot === -1 ? 0 : text.length - dot - 1;
}

/** Every price as an integer count of 10^-scale, one scale for all, so sums compare exactly. */
function exactValues(points: readonly Timed[]): bigint[] {
  let scale = 0;
  for (const p of points) scale = Math.max(scale, fractionDigits(p.price));
  return points.map(({ price }) => {
    const negative = price.startsWith('-');
    const [whole = '0', fraction = ''] = (negative ? price.slice(1) : price).split('.');
    const value = BigInt(whole + fraction.padEnd(scale, '0'));
    return negative ? -value : value;
  });
}

/**
 * The cheapest `n` consecutive intervals (each starting where the one before ends) whose span is
 * exactly `elapsedMs` when given: their indexes `[first, first + n)`, or `undefined` when no such
 * window is published. Windows are compared on their exact sums; of equal ones, the earliest wins.
 * @example cheapestWindow(hours, 3, 10_800_000) // 4: hours 4, 5 and 6
 */
export function cheapestWindow(points: readonly Timed[], n: number, elapsedMs?: number): number | undefined {
  const values = exactValues(points);
  let best: number | undefined;
  let bestSum = 0n;
  let sum = 0n;
  // The first index of the current run of consecutive intervals.
  let run = 0;
  for (let i = 0; i < points.length; i++) {
    if (i > 0 && (points[i] as Timed).start !== (points[i - 1] as Timed).end) {
      run = i;
      sum = 0n;
    }
    sum += values[i] as bigint;
    if (i - run + 1 > n) sum -= values[i - n] as bigint;
    if (i - run + 1 < n) continue;
    const first = i - n + 1;
    if (elapsedMs !== undefined && (points[i] as Timed).end - (points[first] as Timed).start !== elapsedMs) {
      continue;
    }
    if (best === undefined || sum < bestSum) {
      best = first;
      bestSum = sum;
    }
  }
  return best;
}

/**
 * The indexes of the `n` cheapest intervals, in order of time, or `undefined` when fewer are
 * published. Of equal prices, the earlier interval is taken.
 * @example cheapestIntervals(hours, 3) // [2, 3, 14]
 */
export function cheapestIntervals(points: readonly Timed[], n: number): number[] | undefined {
  if (points.length < n) return undefined;
  const values = exactValues(points);
  const order = points.map((_, i) => i);
  order.sort((a, b) => {
    const d = (values[a] as bigint) - (values[b] as bigint);
    return d < 0n ? -1 : d > 0n ? 1 : a - b;
  });
  return order.slice(0, n).sort((a, b) => a - b);
}

/**
 * The parts of `range` with no published interval: each interval of the series' grid that lies
 * wholly in the range and is not in `published`, joined where they touch.
 */
export function missingSpans(series: Series, range: Span, published: readonly Timed[]): Span[] {
  const have = new Set(published.map((p) => p.start));
  const zone = series.timezone;
  const last = localDate(range.end - 1, zone);
  const spans: Span[] = [];
  for (let date = localDate(range.start, zone); date <= last; date = addDays(date, 1)) {
    for (const interval of dayIntervals(date, zone, series.resolution)) {
      if (interval.start < range.start || interval.end > range.end || have.has(interval.start)) continue;
      const previous = spans.at(-1);
      if (previous !== undefined && previous.end === interval.start) {
        spans[spans.length - 1] = { start: previous.start, end: interval.end };
      } else spans.push(interval);
    }
  }
  return spans;
}

/**
 * An interval as answered: as the day endpoints serve it, with the rate it was converted at and,
 * under a tariff, its total and parts.
 */
export interface CheapPoint extends PricePoint, Partial<TariffedPrice> {
  readonly fx?: FxUsed;
}

/** The cheapest window or intervals of one series; `undefined` fields when none is published. */
export interface CheapestSeries extends Series {
  /** The range as read, RFC 3339 in the zone read in. */
  readonly from: string;
  readonly to: string;
  readonly zone: string;
  readonly span: Span;
  /** With `tariff`: its name; the intervals were chosen on their totals. */
  readonly tariff?: string;
  /** Every interval of the range is published (and, converted, has a rate). */
  readonly complete: boolean;
  readonly missing: readonly Span[];
  /** The window or intervals, in order of time; `undefined` when none is published. */
  readonly cheapest?: {
    readonly start: string;
    readonly end: string;
    readonly mean: string;
    readonly prices: readonly CheapPoint[];
  };
}

export interface CheapestAnswer {
  readonly generatedAt: string;
  readonly series: readonly CheapestSeries[];
  /** Every day of the range has ended in its zone, so only a correction could change the answer. */
  readonly settled: boolean;
  /** When the same request may mean other days (see `DayAnswer.changesAt`). */
  readonly changesAt: number;
  /** The range was given relative to now: the answer is for this moment only. */
  readonly momentary: boolean;
  readonly fxSymbols?: readonly string[];
}

const TODAY: DayName = { offset: 0 };

function invalid(parameter: string, detail: string): ApiError {
  return new ApiError('invalid_parameter', detail, { extra: { parameter } });
}

/** The instant an end of the range stands for in `zone` (whose today is `today`). */
function instantOf(end: RangeEnd, which: 'from' | 'to', zone: string, today: CalendarDate, now: number) {
  if ('now' in end) return now;
  if ('instant' in end) return end.instant;
  const date = 'date' in end.day ? end.day.date : addDays(today, end.day.offset);
  const bounds = dayBounds(date, zone);
  return which === 'from' ? bounds.start : bounds.end;
}

/** The cheapest hours (docs/api.md, "The cheapest hours"), read through the price service as served. */
export interface CheapestService {
  /**
   * The cheapest window or intervals of each series asked, within `from`..`to`; throws `ApiError`
   * for a query it cannot answer (an unknown series, a range or duration that does not fit).
   * @example await cheapest.find(tier, { symbols: ['NO1'], from: { day: { offset: 0 } }, to: { day: { offset: 1 } }, pick: { contiguous: true, duration: parseIsoDuration('PT3H')! } })
   */
  find(tier: Tier, query: CheapestQuery): Promise<CheapestAnswer>;
}

export function createCheapestService({ prices }: { readonly prices: PriceService }): CheapestService {
  return {
    async find(tier: Tier, query: CheapestQuery): Promise<CheapestAnswer> {
      const { from, to, pick, ...dayQuery } = query;
      // Which series, in which zone: checked against the catalogue, the tier and the conversion.
      const selected = await prices.plan(tier, dayQuery, TODAY, TODAY);
      const now = selected.now;
      const ranges = selected.wanted.map((w) => {
        const start = instantOf(from, 'from', w.zone, w.today, now);
        const end = instantOf(to, 'to', w.zone, w.today, now);
        if (end <= start) throw invalid('to', `The parameter "to" must lie after "from".`);
        const n = 'count' in pick ? pick.count : intervalsIn(pick.duration, w.series.resolution);
        if (n === undefined) {
          throw invalid(
            'duration',
            `The parameter "duration" (${'duration' in pick ? pick.duration.text : ''}) must be a whole multiple of the resolution of ${w.series.symbol} (${w.series.resolution}).`,
          );
        }
        if ('duration' in pick && w.series.resolution !== 'P1D' && elapsedOf(pick.duration) > end - start) {
          throw invalid(
            'duration',
            `The parameter "duration" (${pick.duration.text}) is longer than the range.`,
          );
        }
        return {
          ...w,
          span: { start, end },
          n,
          date: localDate(start, w.zone),
          to: localDate(end - 1, w.zone),
        };
      });
      const weight = weightOf(ranges);
      if (weight > 1) {
        throw invalid(
          'to',
          `The range spans more than ${INTERVALS_PER_UNIT.toLocaleString('en')} intervals on the series' own grids (31 days of a quarter-hour series): ask for fewer days or fewer series.`,
        );
      }
      const found = await Promise.all(
        ranges.map(async (r) => {
          // The days of the range, checked against the tier's history, read and converted as served.
          const plan = await prices.plan(
            tier,
            { ...dayQuery, symbols: [r.series.symbol] },
            { date: r.date },
            { date: r.to },
          );
          const answer = await prices.read(plan);
          return { range: r, answer };
        }),
      );
      const series = found.map(({ range, answer }) => cheapestOf(range, answer.series, pick));
      const fx = new Set(found.flatMap(({ answer }) => answer.fxSymbols ?? []));
      return {
        generatedAt: new Date(now).toISOString(),
        series,
        settled: ranges.every((r) => r.to < r.today),
        changesAt: Math.min(...found.map(({ answer }) => answer.changesAt)),
        momentary: 'now' in from || 'now' in to,
        ...(fx.size > 0 && { fxSymbols: [...fx] }),
      };
    },
  };
}

type Answered = Awaited<ReturnType<PriceService['read']>>['series'][number];

/** The cheapest window or intervals of one series' days, as served, within its range. */
function cheapestOf(
  range: { series: Series; zone: string; span: Span; n: number },
  days: readonly Answered[],
  pick: Pick,
): CheapestSeries {
  const { span, n, zone } = range;
  const points: (Timed & { point: CheapPoint })[] = [];
  for (const day of days) {
    for (const p of day.prices) {
      const start = Date.parse(p.start);
      const end = Date.parse(p.end);
      if (start < span.start || end > span.end) continue;
      const fx = p.fx ?? day.fx ?? undefined;
      // Under a tariff, totals are compared; an interval before the tariff's first version has none.
      const price = day.tariff === undefined ? p.price : p.total;
      if (price === undefined) continue;
      points.push({ start, end, price, point: { ...p, ...(fx && { fx }) } });
    }
  }
  const meta: Series & { tariff?: string } = days[0] ?? range.series;
  const missing = missingSpans(range.series, span, points);
  let chosen: number[] | undefined;
  if (pick.contiguous) {
    const finer = range.series.resolution !== 'P1D';
    const first = cheapestWindow(points, n, finer ? elapsedOf(pick.duration) : undefined);
    chosen = first === undefined ? undefined : Array.from({ length: n }, (_, i) => first + i);
  } else {
    chosen = cheapestIntervals(points, n);
  }
  const picked = chosen?.map((i) => points[i] as Timed & { point: CheapPoint });
  const firstPicked = picked?.[0];
  const lastPicked = picked?.at(-1);
  return {
    symbol: meta.symbol,
    name: meta.name,
    kind: meta.kind,
    currency: meta.currency,
    unit: meta.unit,
    timezone: meta.timezone,
    resolution: range.series.resolution,
    from: formatInstant(span.start, zone),
    to: formatInstant(span.end, zone),
    zone,
    span,
    ...(meta.tariff !== undefined && { tariff: meta.tariff }),
    complete: missing.length === 0,
    missing,
    ...(picked !== undefined &&
      firstPicked !== undefined &&
      lastPicked !== undefined && {
        cheapest: {
          start: firstPicked.point.start,
          end: lastPicked.point.end,
          mean: decimalMean(picked.map((p) => p.price)),
          prices: picked.map((p) => p.point),
        },
      }),
  };
}
