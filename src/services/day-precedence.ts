/**
 * Which source's prices a stored day keeps when a series names several sources in order, best first
 * (docs/sources.md, "Several sources for one series"). A source writes a day that no higher-ranked
 * source wrote; into a day a higher-ranked source wrote, it only fills the intervals still missing,
 * and a day that source delivered complete it leaves alone. A source missing from the list (`import`:
 * a file) ranks below every listed one.
 */
import { type CalendarDate, dayBounds, localDate } from '../domain/time/days.js';
import type { DayProvenance, ImportPoint, PriceStore, Series } from '../stores/types.js';

/** `write`: every incoming point; `fill`: only intervals not stored yet; `skip`: none. */
export type DayDecision = 'write' | 'fill' | 'skip';

/** The position of `source` in `ranking`; after every listed one when it is not listed. */
export function rankOf(source: string, ranking: readonly string[]): number {
  const rank = ranking.indexOf(source);
  return rank === -1 ? ranking.length : rank;
}

/**
 * What an import from `source` may do to a stored day, given what the store recorded of it.
 * @example decideDay({ source: 'entsoe', complete: true }, 'backup', ['entsoe', 'backup']) // 'skip'
 */
export function decideDay(
  existing: Pick<DayProvenance, 'source' | 'complete'> | undefined,
  source: string,
  ranking: readonly string[],
): DayDecision {
  if (existing === undefined) return 'write';
  // The same source, or one ranked above: a revision replaces what is there.
  if (rankOf(existing.source, ranking) >= rankOf(source, ranking)) return 'write';
  return existing.complete ? 'skip' : 'fill';
}

/** The sources ranked above `source`: a day one of them wrote keeps its name when `source` fills it. */
export function rankedAbove(source: string, ranking: readonly string[]): string[] {
  return ranking.slice(0, rankOf(source, ranking));
}

/**
 * The points of an import from `source` that it may write under `ranking`, day by day in each
 * series' zone, in the order given.
 */
export async function pointsToWrite(
  prices: PriceStore,
  points: readonly ImportPoint[],
  seriesOf: (symbol: string) => Series,
  source: string,
  ranking: readonly string[],
): Promise<ImportPoint[]> {
  const days = new Map<string, { symbol: string; date: CalendarDate; points: ImportPoint[] }>();
  for (const point of points) {
    const date = localDate(point.start, seriesOf(point.symbol).timezone);
    const key = `${point.symbol}|${date}`;
    let day = days.get(key);
    if (day === undefined) {
      day = { symbol: point.symbol, date, points: [] };
      days.set(key, day);
    }
    day.points.push(point);
  }
  const recorded = new Map<string, DayProvenance>();
  for (const symbol of new Set(points.map((p) => p.symbol))) {
    const dates = [...days.values()].filter((d) => d.symbol === symbol).map((d) => d.date);
    const first = dates.reduce((a, b) => (a < b ? a : b));
    const last = dates.reduce((a, b) => (a > b ? a : b));
    for (const day of (await prices.dayProvenance?.(symbol, first, last)) ?? []) {
      recorded.set(`${symbol}|${day.date}`, day);
    }
  }
  const allowed = new Set<ImportPoint>();
  for (const [key, day] of days) {
    const decision = decideDay(recorded.get(key), source, ranking);
    if (decision === 'skip') continue;
    if (decision === 'write') {
      for (const p of day.points) allowed.add(p);
      continue;
    }
    const { start, end } = dayBounds(day.date, seriesOf(day.symbol).timezone);
    const stored = new Set((await prices.pricesBetween(day.symbol, start, end)).map((p) => p.start));
    for (const p of day.points) if (!stored.has(p.start)) allowed.add(p);
  }
  return points.filter((p) => allowed.has(p));
}
