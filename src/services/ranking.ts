/**
 * `include=rank` (docs/tariffs.md, "Rank and level"): each interval's rank within its local day and
 * its level against the mean of the 7 local days before, on the total when a tariff is asked, else
 * on the price as served. Exact: decimal texts compared as integers. Knows nothing of HTTP.
 */
import { decimalsOf, scaled } from '../domain/money/tariff-decimal.js';

export const LEVELS = ['very_cheap', 'cheap', 'normal', 'expensive', 'very_expensive'] as const;
export type Level = (typeof LEVELS)[number];

/** How many local days before an interval's own make its level's reference. */
export const REFERENCE_DAYS = 7;

/**
 * The level thresholds, in percent of the reference mean's size: a price at most 60% of a positive
 * mean is very cheap, at most 90% cheap, from 115% expensive, from 140% very expensive; in between
 * normal. Read as the difference from the mean, (price − mean) / |mean|, so that they also order
 * prices around a negative mean: lower is always cheaper.
 */
const THRESHOLDS = { veryCheap: -40n, cheap: -10n, expensive: 15n, veryExpensive: 40n } as const;

/** What ranking adds to an interval. */
export interface Ranked {
  /** 1 = cheapest of its day; equal values share the rank and the next is skipped (1, 2, 2, 4). */
  readonly rank: number;
  /** Against the mean of the `REFERENCE_DAYS` days before; `null` when those hold no price. */
  readonly level: Level | null;
}

/** A day as ranking sees it: its intervals' values, `undefined` where one has none (no tariff yet). */
export type Values = readonly (string | undefined)[];

/**
 * What a day adds to a reference: the sum of its values as `digits × 10^-scale` (`scale` the most
 * decimals among them) and how many there are. Kept per series and day by the price service, so a
 * level's 7 days before are summed once, not for every request (docs/tariffs.md, "Rank and level").
 * @example daySum(['1.5', '2', undefined]) // { sum: 35n, count: 2, scale: 1 }
 */
export interface DaySum {
  readonly sum: bigint;
  readonly count: number;
  readonly scale: number;
}

export function daySum(values: Values): DaySum {
  let scale = 0;
  for (const v of values) if (v !== undefined) scale = Math.max(scale, decimalsOf(v));
  let sum = 0n;
  let count = 0;
  for (const v of values) {
    if (v === undefined) continue;
    sum += scaled(v, scale);
    count++;
  }
  return { sum, count, scale };
}

/**
 * For each of `days` (consecutive local days of one series, oldest first) from index `first` on,
 * each interval's rank and level; the days before `first` only serve as reference. An interval
 * without a value gets `undefined`.
 * @example rankDays([['1', '2'], ['3', '1', '3']], 1) // [[{ rank: 2, level: 'very_expensive' }, { rank: 1, level: 'cheap' }, { rank: 2, level: 'very_expensive' }]]
 */
export function rankDays(days: readonly Values[], first: number): (Ranked | undefined)[][] {
  return rankDaysAfter(days.slice(first), days.slice(0, first).map(daySum));
}

/**
 * `rankDays` of `days` (consecutive local days of one series, oldest first) whose days before are
 * given by their sums (`before`, oldest first, ending the day before `days[0]`): the same ranks and
 * levels, as every comparison is exact at any common scale.
 */
export function rankDaysAfter(days: readonly Values[], before: readonly DaySum[]): (Ranked | undefined)[][] {
  let scale = 0;
  for (const b of before) scale = Math.max(scale, b.scale);
  for (const day of days) for (const v of day) if (v !== undefined) scale = Math.max(scale, decimalsOf(v));
  const ints = days.map((day) => day.map((v) => (v === undefined ? undefined : scaled(v, scale))));
  // Every day's sum at the one scale: the days before, then the days ranked.
  const sums = before.map((b) => b.sum * 10n ** BigInt(scale - b.scale));
  const counts = before.map((b) => b.count);
  for (const day of ints) {
    sums.push(day.reduce<bigint>((sum, v) => sum + (v ?? 0n), 0n));
    counts.push(day.filter((v) => v !== undefined).length);
  }
  const out: (Ranked | undefined)[][] = [];
  for (let k = 0; k < ints.length; k++) {
    const d = before.length + k;
    let sum = 0n;
    let count = 0;
    for (let r = Math.max(0, d - REFERENCE_DAYS); r < d; r++) {
      sum += sums[r] as bigint;
      count += counts[r] as number;
    }
    const day = ints[k] as readonly (bigint | undefined)[];
    const ranks = competitionRanks(day);
    out.push(
      day.map((v, i) =>
        v === undefined ? undefined : { rank: ranks[i] as number, level: levelOf(v, sum, count) },
      ),
    );
  }
  return out;
}

/** Standard competition ranks of the values present: 1 + how many are strictly lower. */
function competitionRanks(values: readonly (bigint | undefined)[]): number[] {
  const order = values
    .map((v, i) => ({ v, i }))
    .filter((e): e is { v: bigint; i: number } => e.v !== undefined)
    .sort((a, b) => (a.v < b.v ? -1 : a.v > b.v ? 1 : 0));
  const ranks: number[] = [];
  order.forEach((e, position) => {
    const previous = order[position - 1];
    ranks[e.i] = previous !== undefined && previous.v === e.v ? (ranks[previous.i] as number) : position + 1;
  });
  return ranks;
}

/**
 * The level of `value` against the mean `sum / count` (all at one scale), compared exactly:
 * (value − mean) / |mean| ≥ t is 100·(value·count − sum) ≥ t%·|sum|. A mean of exactly 0 leaves
 * only the sign: below it very cheap, above very expensive, 0 normal.
 */
export function levelOf(value: bigint, sum: bigint, count: number): Level | null {
  if (count === 0) return null;
  const difference = 100n * (value * BigInt(count) - sum);
  const size = sum < 0n ? -sum : sum;
  if (size === 0n) return difference < 0n ? 'very_cheap' : difference > 0n ? 'very_expensive' : 'normal';
  if (difference <= THRESHOLDS.veryCheap * size) return 'very_cheap';
  if (difference <= THRESHOLDS.cheap * size) return 'cheap';
  if (difference >= THRESHOLDS.veryExpensive * size) return 'very_expensive';
  if (difference >= THRESHOLDS.expensive * size) return 'expensive';
  return 'normal';
}
