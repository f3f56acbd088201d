/**
 * The local days a scheduled run asks for, and whether the next day is complete: every interval of
 * tomorrow's local day of every series the run filled holds a price (the day-ahead auction is done).
 */
import { addDays, dayBounds, dayIntervals, localDate } from '../domain/time/days.js';
import type { PriceStore } from '../stores/types.js';
import type { SourcePlan } from './source-plans.js';
import type { SourceWindow } from './types.js';

/** From the start of `daysBack` days before today to the end of `daysAhead` days after it, in the plan's zone. */
export function scheduledWindow(plan: SourcePlan, now: number): SourceWindow {
  const { zone, daysBack, daysAhead } = plan.window;
  const today = localDate(now, zone);
  return {
    from: dayBounds(addDays(today, -daysBack), zone).start,
    to: dayBounds(addDays(today, daysAhead), zone).end,
  };
}

/** Tomorrow, in each series' own zone, has a price in every interval of each of `symbols`. */
export async function tomorrowComplete(
  prices: PriceStore,
  symbols: readonly string[],
  now: number,
): Promise<boolean> {
  if (symbols.length === 0) return false;
  for (const symbol of symbols) {
    const series = await prices.getSeries(symbol);
    if (series === undefined) return false;
    const tomorrow = addDays(localDate(now, series.timezone), 1);
    const { start, end } = dayBounds(tomorrow, series.timezone);
    const stored = await prices.pricesBetween(symbol, start, end);
    if (stored.length < dayIntervals(tomorrow, series.timezone, series.resolution).length) return false;
  }
  return true;
}

/**
 * The start (epoch ms) of the newest local day that is complete in every one of `symbols`, looked
 * for from two weeks back through tomorrow; undefined when one of them has none, or the store keeps
 * no record of completeness.
 */
export async function newestCompleteDay(
  prices: PriceStore,
  symbols: readonly string[],
  now: number,
): Promise<number | undefined> {
  if (symbols.length === 0 || prices.dayProvenance === undefined) return undefined;
  let newest: number | undefined;
  for (const symbol of symbols) {
    const series = await prices.getSeries(symbol);
    if (series === undefined) return undefined;
    const today = localDate(now, series.timezone);
    const days = await prices.dayProvenance(symbol, addDays(today, -14), addDays(today, 1));
    const last = days.filter((d) => d.complete).at(-1);
    if (last === undefined) return undefined;
    const start = dayBounds(last.date, series.timezone).start;
    newest = newest === undefined ? start : Math.min(newest, start);
  }
  return newest;
}
