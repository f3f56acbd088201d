/**
 * Coarser output (`resolution`, docs/data-model.md): the mean of the finer intervals inside each
 * coarser one, computed exactly on the decimal texts and rounded to the largest number of decimals
 * seen in its inputs.
 */
import type { Span } from '../time/days.js';

function decimals(text: string): number {
  const dot = text.indexOf('.');
  return dot === -1 ? 0 : text.length - dot - 1;
}

/** A decimal text as an integer count of 10^-scale. */
function scaled(text: string, scale: number): bigint {
  const negative = text.startsWith('-');
  const unsigned = negative ? text.slice(1) : text;
  const [whole = '0', fraction = ''] = unsigned.split('.');
  const value = BigInt(whole + fraction.padEnd(scale, '0'));
  return negative ? -value : value;
}

function unscaled(value: bigint, scale: number): string {
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const text = scale === 0 ? whole : `${whole}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

/**
 * The exact mean of decimal texts, rounded half away from zero to the most decimals among them.
 * @example decimalMean(['41.27', '40', '-3.5']) // '25.92' (77.77 / 3 = 25.9233…)
 */
export function decimalMean(prices: readonly string[]): string {
  if (prices.length === 0) throw new RangeError('the mean of no prices');
  let scale = 0;
  for (const p of prices) scale = Math.max(scale, decimals(p));
  return smallMean(prices, scale) ?? bigMean(prices, scale);
}

/**
 * The same mean in doubles while every value, the sum and the rounding stay safe integers (prices
 * of up to 13 digits in the hundred intervals of a day): exact, and much cheaper than BigInt for
 * the tens of thousands of means of a long range (bench/README.md, `npm run bench:range`).
 * `undefined` when a number could get too large.
 */
function smallMean(prices: readonly string[], scale: number): string | undefined {
  let sum = 0;
  for (const p of prices) {
    const value = scaledNumber(p, scale);
    if (value === undefined) return undefined;
    sum += value;
    if (!Number.isSafeInteger(sum)) return undefined;
  }
  const count = prices.length;
  const magnitude = Math.abs(sum);
  const numerator = magnitude * 2 + count;
  if (!Number.isSafeInteger(numerator)) return undefined;
  // Half away from zero, as in bigMean; the quotient is corrected where the double division rounded up.
  let rounded = Math.floor(numerator / (count * 2));
  if (rounded * count * 2 > numerator) rounded--;
  const negative = sum < 0 && rounded !== 0;
  const digits = String(rounded).padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const text = scale === 0 ? whole : `${whole}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

/** A decimal text as a safe integer count of 10^-scale, or `undefined` when it may not be one. */
function scaledNumber(text: string, scale: number): number | undefined {
  if (text.length > 15) return undefined;
  let value = 0;
  let fraction = -1;
  for (let i = text.charCodeAt(0) === 45 ? 1 : 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46 && fraction < 0) fraction = 0;
    else if (c >= 48 && c <= 57) {
      value = value * 10 + (c - 48);
      if (fraction >= 0) fraction++;
    } else return undefined;
  }
  value *= 10 ** (scale - Math.max(fraction, 0));
  if (!Number.isSafeInteger(value)) return undefined;
  return text.charCodeAt(0) === 45 ? -value : value;
}

/** The mean in BigInt, for values the doubles cannot hold exactly. */
function bigMean(prices: readonly string[], scale: number): string {
  let sum = 0n;
  for (const p of prices) sum += scaled(p, scale);
  const count = BigInt(prices.length);
  const magnitude = sum < 0n ? -sum : sum;
  // Half away from zero: add half the divisor to the magnitude before the integer division.
  const rounded = (magnitude * 2n + count) / (count * 2n);
  return unscaled(sum < 0n ? -rounded : rounded, scale);
}

/** A point to aggregate: its start (epoch ms) and price text. */
export interface PricedStart {
  readonly start: number;
  readonly price: string;
}

/**
 * Groups points (ordered by start) into the given coarser intervals (ordered, non-overlapping) by
 * the interval their start falls in, and answers the mean of each interval that holds any point.
 * Intervals without points are left out, as sparse data is left out at full resolution. Each mean
 * is of whole intervals only where no point's interval runs past the end of the one it starts in:
 * callers refuse coarse grids that would cut a series' intervals (src/domain/time/grid-cut.ts).
 * @example aggregateIntervals(quarterHours, dayIntervals('2026-11-22', 'Europe/Oslo', 'PT1H'))
 */
export function aggregateIntervals(
  points: readonly PricedStart[],
  intervals: readonly Span[],
): { start: number; end: number; price: string }[] {
  const out: { start: number; end: number; price: string }[] = [];
  let i = 0;
  for (const interval of intervals) {
    while (i < points.length && (points[i] as PricedStart).start < interval.start) i++;
    const inside: string[] = [];
    while (i < points.length && (points[i] as PricedStart).start < interval.end) {
      inside.push((points[i] as PricedStart).price);
      i++;
    }
    if (inside.length > 0) out.push({ start: interval.start, end: interval.end, price: decimalMean(inside) });
  }
  return out;
}
