/**
 * What a coarse read must answer, computed from the independent TZif reader and plain BigInt
 * (nothing from `src/`): the series' own intervals around some local days, the coarse intervals of
 * those days in the zone they are read in, whether any series interval runs across a coarse
 * boundary (then the read must be refused), and otherwise the exact mean of the points lying inside
 * each coarse interval, rounded half away from zero to the most decimals among them (
 * docs/using-the-api.md "Reading prices").
 */
import { addDays, type ReferenceDays, type SubDailyResolution } from '../time/reference-days.js';

export type CoarseResolution = SubDailyResolution | 'P1D';

export interface Span {
  readonly start: number;
  readonly end: number;
}

/** The intervals of `resolution` on the local days `from` to `to` of `zone`, in order. */
export function gridIntervals(
  zone: ReferenceDays,
  resolution: CoarseResolution,
  from: string,
  to: string,
): Span[] {
  const starts: number[] = [];
  for (let date = from; date <= to; date = addDays(date, 1)) {
    if (resolution === 'P1D') starts.push(zone.dayStart(date));
    else starts.push(...zone.intervalStarts(date, resolution));
  }
  const end = zone.dayStart(addDays(to, 1));
  return starts.map((start, i) => ({ start, end: starts[i + 1] ?? end }));
}

/** The first series interval that a coarse interval begins (or the last one ends) inside of. */
export function crossing(series: readonly Span[], coarse: readonly Span[]): Span | undefined {
  const boundaries = [...coarse.map((c) => c.start), coarse.at(-1)?.end ?? 0];
  return series.find((s) => boundaries.some((b) => s.start < b && b < s.end));
}

/** A decimal text as an integer count of 10^-scale. */
function units(text: string, scale: number): bigint {
  const [whole = '', fraction = ''] = text.replace('-', '').split('.');
  const value = BigInt(whole + fraction.padEnd(scale, '0'));
  return text.startsWith('-') ? -value : value;
}

/** The exact mean, rounded half away from zero to the most decimals among the prices. */
export function exactMean(prices: readonly string[]): string {
  const scale = Math.max(...prices.map((p) => p.split('.')[1]?.length ?? 0));
  const sum = prices.reduce((total, p) => total + units(p, scale), 0n);
  const n = BigInt(prices.length);
  const magnitude = sum < 0n ? -sum : sum;
  let rounded = magnitude / n;
  if ((magnitude % n) * 2n >= n) rounded += 1n;
  const digits = rounded.toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return sum < 0n && rounded !== 0n ? `-${text}` : text;
}

/** Mulberry32: the same prices and gaps for the same seed, so a failing case can be replayed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A price text with 0 to 3 decimals, negative now and then (electricity prices can be). */
export function randomPrice(random: () => number): string {
  const scale = Math.floor(random() * 4);
  const value = Math.floor(random() * 2_000_000) - 200_000;
  const digits = Math.abs(value)
    .toString()
    .padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return value < 0 ? `-${text}` : text;
}

/** Points at a share `density` of the given intervals, with random prices. */
export function randomPoints(
  intervals: readonly Span[],
  density: number,
  random: () => number,
): { start: number; price: string }[] {
  return intervals
    .filter(() => random() < density)
    .map((s) => ({ start: s.start, price: randomPrice(random) }));
}

/**
 * The coarse intervals of one day as they must be served: for each with points, the exact mean of
 * the points whose whole interval lies inside it; `counted` says how many points were taken, each
 * at most once.
 */
export function expectedMeans(
  series: readonly Span[],
  points: readonly { start: number; price: string }[],
  coarse: readonly Span[],
): { means: { start: number; end: number; price: string }[]; counted: number } {
  const endOf = new Map(series.map((s) => [s.start, s.end]));
  const means: { start: number; end: number; price: string }[] = [];
  let counted = 0;
  for (const c of coarse) {
    const inside = points.filter((p) => c.start <= p.start && (endOf.get(p.start) ?? Number.NaN) <= c.end);
    counted += inside.length;
    if (inside.length > 0) means.push({ ...c, price: exactMean(inside.map((p) => p.price)) });
  }
  return { means, counted };
}
