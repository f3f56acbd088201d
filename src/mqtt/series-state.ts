/**
 * What the MQTT publisher sends for one series at one instant (docs/mqtt.md "Topics"): the current
 * interval's price (and under a tariff its fees, VAT and total), its rank and level, the "in the
 * cheapest N hours today" flags, and today's and tomorrow's prices as one JSON document. Built from
 * the price service's answer for today and tomorrow with `tariff` and `include=rank`, so every value
 * is the one the API answers. Knows nothing of MQTT.
 */
import { dayIntervals, instantOf, localDate, RESOLUTIONS } from '../domain/time/days.js';
import type { AnsweredDay, AnsweredPoint } from '../services/price-service.js';

/** What a numeric or enum sensor is sent when there is no value: Home Assistant shows "unknown". */
export const NO_VALUE = 'None';

/** One retained message: its topic below `{topicPrefix}/{symbol}/`, and its payload. */
export interface StateMessage {
  readonly topic: string;
  readonly payload: string;
}

/** The tariff's parts published beside the price, each on a topic of its own. */
export const TARIFF_PARTS = ['fees', 'vat', 'total'] as const;

/**
 * The messages of one series at `now`, from its `days` as answered (today, then tomorrow, in the
 * series' own zone).
 * @example seriesMessages(answer.series, Date.now(), [1, 3]) // price, rank, level, cheapest/1, cheapest/3, prices
 */
export function seriesMessages(
  days: readonly AnsweredDay[],
  now: number,
  cheapestHours: readonly number[],
): StateMessage[] {
  const [today, tomorrow] = days;
  const current = today?.prices.find((p) => instantOf(p.start) <= now && now < instantOf(p.end));
  const text = (value: string | undefined | null) => value ?? NO_VALUE;
  const messages: StateMessage[] = [{ topic: 'price', payload: text(current?.price) }];
  if (today?.tariff !== undefined) {
    for (const part of TARIFF_PARTS) messages.push({ topic: part, payload: text(current?.[part]) });
  }
  messages.push(
    { topic: 'rank', payload: current?.rank === undefined ? NO_VALUE : String(current.rank) },
    { topic: 'level', payload: text(current?.level) },
  );
  const minutes = RESOLUTIONS[today?.resolution ?? 'PT1H'];
  for (const hours of cheapestHours) {
    // The cheapest N hours are this many intervals of the day; equal prices share a rank, so a tie at
    // the edge counts every interval in it (docs/mqtt.md).
    const count = Math.ceil((hours * 60) / minutes);
    const on = current?.rank !== undefined && current.rank <= count;
    messages.push({
      topic: `cheapest/${hours}`,
      payload: current === undefined ? NO_VALUE : on ? 'ON' : 'OFF',
    });
  }
  messages.push({ topic: 'prices', payload: JSON.stringify(pricesDocument(today, tomorrow, current)) });
  return messages;
}

/** Today's and tomorrow's prices with the current interval: the JSON document of `{symbol}/prices`. */
function pricesDocument(
  today: AnsweredDay | undefined,
  tomorrow: AnsweredDay | undefined,
  current: AnsweredPoint | undefined,
) {
  const day = (d: AnsweredDay | undefined) =>
    d === undefined ? null : { date: d.date, complete: d.complete, prices: d.prices.map(point) };
  return {
    symbol: today?.symbol,
    name: today?.name,
    currency: today?.currency,
    unit: today?.unit,
    timezone: today?.timezone,
    resolution: today?.resolution,
    tariff: today?.tariff ?? null,
    current: current === undefined ? null : point(current),
    today: day(today),
    tomorrow: day(tomorrow),
  };
}

/** An interval as the API's JSON writes it: prices as numbers, parts and rank where present. */
function point(p: AnsweredPoint) {
  return {
    start: p.start,
    end: p.end,
    price: Number(p.price),
    ...(p.total !== undefined && {
      spot: Number(p.spot),
      fees: Number(p.fees),
      vat: Number(p.vat),
      total: Number(p.total),
    }),
    ...(p.rank !== undefined && { rank: p.rank, level: p.level ?? null }),
  };
}

/**
 * The first interval boundary of the series after `now`: a start of one of the real intervals of
 * its local day or the next (so a DST day's 23 or 25 hours, and its 92 or 100 quarter hours, are
 * followed as they are), never a fixed step.
 * @example nextBoundary(Date.parse('2026-03-29T00:30:00Z'), 'Europe/Oslo', 'PT1H') // 01:00Z, 03:00+02:00
 */
export function nextBoundary(now: number, timeZone: string, resolution: keyof typeof RESOLUTIONS): number {
  // Today's intervals cover the whole local day, so one of them ends after now (the last at midnight).
  const ends = dayIntervals(localDate(now, timeZone), timeZone, resolution).map((span) => span.end);
  return ends.find((end) => end > now) ?? now + RESOLUTIONS[resolution] * 60_000;
}
