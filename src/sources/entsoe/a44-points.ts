/**
 * The prices of A44 periods on a series' grid. Curve type A01 writes every position; A03 leaves out a
 * position whose price repeats the one before it, so a left-out position takes the previous
 * position's price, within its own period only (a period's first position has nothing before it,
 * and nothing is carried past the period's end). A point without an amount is missing, and so are
 * the left-out positions after it. An hourly period fills a finer series only when the operator
 * says so (`fillQuarters`).
 */
import { checkPrice } from '../../domain/prices/decimal.js';
import { RESOLUTIONS, type Resolution } from '../../domain/time/days.js';
import type { SourcePoint } from '../types.js';
import type { A44Period } from './a44-document.js';

const MINUTE_MS = 60_000;
/** ENTSO-E resolutions to Pricepoint's. */
const PERIOD_RESOLUTIONS: Record<string, Resolution> = { PT15M: 'PT15M', PT30M: 'PT30M', PT60M: 'PT1H' };

/** The Pricepoint resolution of an A44 period resolution (`PT60M` is `PT1H`), if it has one. */
export function periodResolution(resolution: string): Resolution | undefined {
  return PERIOD_RESOLUTIONS[resolution];
}

/**
 * The points of one period on a `target` grid, or why it cannot be mapped.
 * @example periodPoints(period, 'A03', 'PT15M', true) // [{ start, price: '41.27' }, ...]
 */
export function periodPoints(
  period: A44Period,
  curveType: string,
  target: Resolution,
  fillQuarters: boolean,
): SourcePoint[] | string {
  const own = periodResolution(period.resolution);
  if (own === undefined) return `period resolution ${period.resolution} is not supported`;
  const step = RESOLUTIONS[own] * MINUTE_MS;
  const targetStep = RESOLUTIONS[target] * MINUTE_MS;
  if (targetStep > step) {
    return `a ${period.resolution} period cannot fill a ${target} series (prices are never averaged)`;
  }
  if (targetStep < step && !fillQuarters) {
    return `a ${period.resolution} period for a ${target} series: set fillQuarters to repeat each price over its ${step / targetStep} intervals, or make the series ${own}`;
  }
  const length = period.end - period.start;
  if (length % step !== 0) return `the period is not a whole number of ${period.resolution} intervals`;
  const positions = length / step;
  for (const position of period.points.keys()) {
    if (position > positions)
      return `position ${position} lies past the period's end (${positions} positions)`;
  }
  const points: SourcePoint[] = [];
  let previous: string | undefined;
  for (let position = 1; position <= positions; position++) {
    let price: string | undefined;
    if (period.points.has(position)) {
      price = period.points.get(position);
      previous = price;
    } else if (curveType === 'A03') {
      price = previous;
    }
    if (price === undefined) continue;
    const checked = checkPrice(price);
    if (!checked.ok) return `position ${position}: ${checked.reason}`;
    const start = period.start + (position - 1) * step;
    for (let t = start; t < start + step; t += targetStep) points.push({ start: t, price: checked.text });
  }
  return points;
}
