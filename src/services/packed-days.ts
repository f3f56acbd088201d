/**
 * Days as the read cache keeps them: a few objects per cached read instead of four per interval.
 *
 * A day as served holds an object and two or three strings per interval: 400 objects for a day of
 * quarter hours. Thousands of such days in a cache are thousands of objects that each minor GC
 * (scavenge) has to copy while they are young, which is where the long pauses of a busy cache came
 * from (bench/README.md, data scale). Packed, the texts of every interval of a read sit in one
 * string, with one typed array of where each ends (its memory is outside the JS heap), and each day
 * keeps one object for its series fields and date.
 */
import type { SeriesDay, ServedPrice } from './served-days.js';

export interface PackedDays {
  /** Each day without its prices: its series fields and date, in the order they were read. */
  readonly days: readonly Omit<SeriesDay, 'prices'>[];
  /** How many intervals each day has. */
  readonly counts: Uint32Array;
  /** The start, end and price text of every interval, one after another. */
  readonly text: string;
  /** Where each of those texts ends in `text`: three per interval. */
  readonly ends: Uint32Array;
}

/** Whether `value` is days as the price service reads them (what `packDays` takes). */
export function areDays(value: unknown): value is readonly SeriesDay[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every(
      (day: unknown) =>
        typeof day === 'object' &&
        day !== null &&
        typeof (day as SeriesDay).date === 'string' &&
        Array.isArray((day as SeriesDay).prices),
    )
  );
}

/** @example unpackDays(packDays(days)) // equal to `days`, in new objects */
export function packDays(days: readonly SeriesDay[]): PackedDays {
  const counts = new Uint32Array(days.length);
  let intervals = 0;
  for (const [d, day] of days.entries()) {
    counts[d] = day.prices.length;
    intervals += day.prices.length;
  }
  const ends = new Uint32Array(intervals * 3);
  const texts: string[] = [];
  let length = 0;
  let n = 0;
  const add = (text: string) => {
    texts.push(text);
    length += text.length;
    ends[n++] = length;
  };
  const metas = days.map(({ prices, ...meta }) => {
    for (const p of prices) {
      add(p.start);
      add(p.end);
      add(p.price);
    }
    return meta;
  });
  return { days: metas, counts, text: texts.join(''), ends };
}

/** The days `packDays` packed, as new objects (the texts are slices of the one packed string). */
export function unpackDays(packed: PackedDays): SeriesDay[] {
  const { text, ends } = packed;
  let at = 0;
  let n = 0;
  const next = () => {
    const end = ends[n++] as number;
    const slice = text.slice(at, end);
    at = end;
    return slice;
  };
  return packed.days.map((meta, d) => {
    const count = packed.counts[d] as number;
    const prices: ServedPrice[] = [];
    for (let i = 0; i < count; i++) prices.push({ start: next(), end: next(), price: next() });
    return { ...meta, prices };
  });
}
