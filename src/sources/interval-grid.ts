/**
 * Priced intervals of known length put on one series grid, for upstreams whose answers carry plain
 * (start, length, price) rows rather than periods. The series' resolution is the operator's
 * `resolution`, else the length of the rows; rows of several lengths (a window across the 15-minute
 * switch of 1 October 2025) need `fillQuarters`, which repeats an hourly price over its four
 * quarters. A shorter row never fills a longer interval: prices are never averaged. A row without a
 * price is missing, never 0.
 */
import { RESOLUTIONS, type Resolution } from '../domain/time/days.js';
import type { SourcePoint } from './types.js';

const MINUTE_MS = 60_000;

/** One upstream row: its start (epoch ms), its length in minutes and its price, if it has one. */
export interface TimedPrice {
  readonly start: number;
  readonly minutes: number;
  /** The price as checked decimal text, or `undefined` for an interval the upstream left empty. */
  readonly price: string | undefined;
}

export type GridPoints =
  /** `resolution` is absent only when there are no rows and no resolution was set: nothing to place. */
  | { readonly ok: true; readonly resolution: Resolution | undefined; readonly points: SourcePoint[] }
  | { readonly ok: false; readonly reason: string };

/** The resolution of a row length in minutes (60 is `PT1H`), if Pricepoint has one. */
export function resolutionOfMinutes(minutes: number): Resolution | undefined {
  return (Object.keys(RESOLUTIONS) as Resolution[]).find((r) => r !== 'P1D' && RESOLUTIONS[r] === minutes);
}

/**
 * The points of `rows` on one grid, ordered by start, or why they do not fit one.
 * @example onGrid([{ start, minutes: 60, price: '41.2' }], undefined, false) // { ok: true, resolution: 'PT1H', points: [...] }
 */
export function onGrid(
  rows: readonly TimedPrice[],
  resolution: Resolution | undefined,
  fillQuarters: boolean,
): GridPoints {
  const lengths = [...new Set(rows.map((row) => row.minutes))].sort((a, b) => a - b);
  for (const minutes of lengths) {
    if (resolutionOfMinutes(minutes) === undefined) {
      return { ok: false, reason: `an interval of ${minutes} minutes is not PT15M, PT30M or PT1H` };
    }
  }
  let target = resolution;
  if (target === undefined) {
    if (lengths.length > 1 && !fillQuarters) {
      return {
        ok: false,
        reason: `the answer mixes intervals of ${lengths.join(' and ')} minutes: set fillQuarters to repeat hourly prices over quarters, or ask for a window on one side of the change`,
      };
    }
    target = resolutionOfMinutes(lengths[0] ?? Number.NaN);
    if (target === undefined) return { ok: true, resolution: undefined, points: [] };
  }
  const step = RESOLUTIONS[target];
  const byStart = new Map<number, string>();
  for (const row of rows) {
    const at = new Date(row.start).toISOString();
    if (row.minutes < step) {
      return {
        ok: false,
        reason: `an interval of ${row.minutes} minutes at ${at} cannot fill a ${target} series (prices are never averaged)`,
      };
    }
    if (row.minutes > step && !fillQuarters) {
      return {
        ok: false,
        reason: `an interval of ${row.minutes} minutes at ${at} for a ${target} series: set fillQuarters to repeat each price over its ${row.minutes / step} intervals`,
      };
    }
    if (row.minutes % step !== 0) {
      return {
        ok: false,
        reason: `an interval of ${row.minutes} minutes at ${at} is not whole ${target} intervals`,
      };
    }
    if (row.price === undefined) continue;
    for (let t = row.start; t < row.start + row.minutes * MINUTE_MS; t += step * MINUTE_MS) {
      if (byStart.has(t)) return { ok: false, reason: `two prices for ${new Date(t).toISOString()}` };
      byStart.set(t, row.price);
    }
  }
  const points = [...byStart].map(([start, price]) => ({ start, price })).sort((a, b) => a.start - b.start);
  return { ok: true, resolution: target, points };
}
