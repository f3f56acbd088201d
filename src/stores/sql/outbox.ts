/**
 * What the engines share when they write price events in the transaction that wrote the prices
 * (docs/events.md): the day's ETag, which event a stored day calls for, and the event's public form.
 */
import { createHash } from 'node:crypto';
import type { PriceEvent, PriceEventType } from '../event-types.js';

/** A complete day as it is stored now, beside the ETag of the last event written for it. */
export interface StoredDay {
  readonly seriesId: number;
  readonly symbol: string;
  readonly date: string;
  readonly timezone: string;
  readonly intervals: number;
  /** The day's prices in start order, as `[start_ms, price]`. */
  readonly prices: readonly (readonly [number, string])[];
  /** The ETag of the last event written for this day; undefined before its first. */
  readonly lastEtag: string | undefined;
}

/** A row of the `events` table. */
export interface EventRow {
  readonly seq: number;
  readonly type: string;
  readonly time: number;
  readonly symbol: string;
  readonly date: string;
  readonly timezone: string;
  readonly intervals: number;
  readonly etag: string;
}

/** An event to insert, without its sequence number (the table gives it). */
export type NewEventRow = Omit<EventRow, 'seq'> & { readonly seriesId: number };

/**
 * The ETag of a day of one series: a strong tag over its stored starts and prices, so it changes
 * exactly when a price of the day does (docs/events.md, "The etag").
 * @example dayEtag([[1764028800000, '42.1']]) // '"q3…"'
 */
export function dayEtag(prices: readonly (readonly [number, string])[]): string {
  // One update of the whole text: a hundred small updates cost several times more.
  let text = '';
  for (const [start, price] of prices) text += `${start} ${price}\n`;
  return `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`;
}

/** The event a complete day calls for: published the first time, revised when its prices changed, else none. */
export function eventFor(day: StoredDay, time: number): NewEventRow | undefined {
  const etag = dayEtag(day.prices);
  if (etag === day.lastEtag) return undefined;
  const type: PriceEventType = day.lastEtag === undefined ? 'day.published' : 'day.revised';
  const { seriesId, symbol, date, timezone, intervals } = day;
  return { seriesId, type, time, symbol, date, timezone, intervals, etag };
}

/** Days in the order their events are written: by series, then date, so a series' days come oldest first. */
export function byDay<T extends { readonly seriesId: number; readonly date: string }>(a: T, b: T): number {
  return a.seriesId - b.seriesId || (a.date < b.date ? -1 : a.date > b.date ? 1 : 0);
}

/** Opaque to clients, ordered for people reading logs. */
export function eventId(seq: number): string {
  return `evt_${String(seq).padStart(12, '0')}`;
}

/** The sequence number an event id stands for; undefined for anything that is not one. */
export function seqOfId(id: string | undefined): number | undefined {
  const match = /^evt_(\d{1,15})$/.exec(id?.trim() ?? '');
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

export function toEvent(row: EventRow): PriceEvent {
  const seq = Number(row.seq);
  return {
    id: eventId(seq),
    seq,
    type: row.type as PriceEventType,
    time: new Date(Number(row.time)).toISOString(),
    data: {
      symbol: row.symbol,
      date: row.date,
      timezone: row.timezone,
      intervals: Number(row.intervals),
      etag: row.etag,
    },
  };
}
