/**
 * Writes the events of a PostgreSQL import inside its transaction, after its days were recorded
 * (docs/events.md). Imports into one schema hold an advisory lock until they commit
 * (./price-write-session.ts), so sequence numbers are taken in commit order and a
 * reader's cursor never passes an event that commits later.
 */
import type { DayMark } from '../sql/day-marks.js';
import { byDay, eventFor, type NewEventRow } from '../sql/outbox.js';
import type { GuardedClient } from './guarded-pool.js';

/** Days looked at per statement. */
const DAYS_PER_STATEMENT = 2_000;

/** The marked days that are complete now, with their prices and the ETag of their last event. */
const COMPLETE_DAYS =
  'select d.series_id, d.date, d.intervals, s.symbol, s.timezone, ' +
  '(select coalesce(array_agg(p.start_ms order by p.start_ms), array[]::bigint[]) from prices p ' +
  'where p.series_id = d.series_id and p.start_ms >= d.start_ms and p.start_ms < d.end_ms) as starts, ' +
  '(select coalesce(array_agg(p.price order by p.start_ms), array[]::text[]) from prices p ' +
  'where p.series_id = d.series_id and p.start_ms >= d.start_ms and p.start_ms < d.end_ms) as prices, ' +
  '(select e.etag from events e where e.series_id = d.series_id and e.date = d.date order by e.seq desc limit 1) as last_etag ' +
  'from unnest($1::int[], $2::text[], $3::bigint[], $4::bigint[], $5::int[]) as d(series_id, date, start_ms, end_ms, intervals) ' +
  'join day_provenance dp on dp.series_id = d.series_id and dp.date = d.date and dp.complete = 1 ' +
  'join series s on s.id = d.series_id';

const INSERT_EVENTS =
  'insert into events (type, time, series_id, symbol, date, timezone, intervals, etag) ' +
  'select type, time, series_id, symbol, date, timezone, intervals, etag from unnest($1::text[], $2::bigint[], $3::int[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[]) ' +
  'with ordinality as e(type, time, series_id, symbol, date, timezone, intervals, etag, n) order by n';

interface DayRow {
  series_id: number;
  date: string;
  intervals: number;
  symbol: string;
  timezone: string;
  starts: (number | string)[];
  prices: string[];
  last_etag: string | null;
}

/** Adds to `events` what the days in `marks` now call for; `now` is the commit time (epoch ms). */
export async function writePostgresEvents(
  client: GuardedClient,
  longMs: number,
  marks: readonly DayMark[],
  now: number,
): Promise<void> {
  for (let i = 0; i < marks.length; i += DAYS_PER_STATEMENT) {
    const chunk = marks.slice(i, i + DAYS_PER_STATEMENT);
    const { rows } = await client.query<DayRow>(
      COMPLETE_DAYS,
      [
        chunk.map((d) => d.seriesId),
        chunk.map((d) => d.date),
        chunk.map((d) => d.start),
        chunk.map((d) => d.end),
        chunk.map((d) => d.intervals),
      ],
      longMs,
    );
    const events: NewEventRow[] = [];
    for (const row of rows) {
      const event = eventFor(
        {
          seriesId: row.series_id,
          symbol: row.symbol,
          date: row.date,
          timezone: row.timezone,
          intervals: row.intervals,
          prices: row.starts.map((start, n) => [Number(start), row.prices[n] ?? ''] as const),
          lastEtag: row.last_etag ?? undefined,
        },
        now,
      );
      if (event !== undefined) events.push(event);
    }
    // The join gives no order: a series' days are announced oldest first.
    events.sort(byDay);
    if (events.length === 0) continue;
    const column = <K extends keyof NewEventRow>(key: K) => events.map((e) => e[key]);
    await client.query(
      INSERT_EVENTS,
      [
        column('type'),
        column('time'),
        column('seriesId'),
        column('symbol'),
        column('date'),
        column('timezone'),
        column('intervals'),
        column('etag'),
      ],
      longMs,
    );
  }
}
