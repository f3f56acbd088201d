/**
 * Writes the events of an SQLite import inside its transaction, after its days were recorded
 * (docs/events.md): synchronous, on the connection that holds the transaction.
 */
import type SQLite from 'better-sqlite3';
import type { DayMark } from '../sql/day-marks.js';
import { byDay, eventFor, type StoredDay } from '../sql/outbox.js';

/** Adds to `events` what the days in `marks` now call for; `now` is the commit time (epoch ms). */
export function writeSqliteEvents(conn: SQLite.Database, marks: readonly DayMark[], now: number): void {
  const complete = conn.prepare<[number, string], { complete: number }>(
    'SELECT complete FROM main.day_provenance WHERE series_id = ? AND date = ?',
  );
  const series = conn.prepare<[number], { symbol: string; timezone: string }>(
    'SELECT symbol, timezone FROM main.series WHERE id = ?',
  );
  const prices = conn
    .prepare<[number, number, number], [number, string]>(
      'SELECT start_ms, price FROM main.prices WHERE series_id = ? AND start_ms >= ? AND start_ms < ? ORDER BY start_ms',
    )
    .raw();
  const last = conn
    .prepare<[number, string], string>(
      'SELECT etag FROM main.events WHERE series_id = ? AND date = ? ORDER BY seq DESC LIMIT 1',
    )
    .pluck();
  const insert = conn.prepare(
    'INSERT INTO main.events (type, time, series_id, symbol, date, timezone, intervals, etag) ' +
      'VALUES (@type, @time, @seriesId, @symbol, @date, @timezone, @intervals, @etag)',
  );
  // A series' days are announced oldest first, whatever order the import wrote them in.
  for (const mark of [...marks].sort(byDay)) {
    if (complete.get(mark.seriesId, mark.date)?.complete !== 1) continue;
    const info = series.get(mark.seriesId);
    if (info === undefined) continue;
    const day: StoredDay = {
      seriesId: mark.seriesId,
      symbol: info.symbol,
      date: mark.date,
      timezone: info.timezone,
      intervals: mark.intervals,
      prices: prices.all(mark.seriesId, mark.start, mark.end),
      lastEtag: last.get(mark.seriesId, mark.date),
    };
    const event = eventFor(day, now);
    if (event !== undefined) insert.run(event);
  }
}
