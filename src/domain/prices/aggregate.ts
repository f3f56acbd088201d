/**
 * Coarser output (DESIGN section 2, `resolution`): the mean of the finer intervals inside each
 * coarser one, computed exactly on the decimal texts and rounded to the largest number of decimals
 * seen in its inputs (DESIGN section 1).
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
  const scale = Math.max(...prices.map(decimals));
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
 * Intervals without points are left out, as sparse data is left out at full resolution.
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
