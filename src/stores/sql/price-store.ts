/**
 * Series and prices in SQL, the same queries on SQLite and PostgreSQL (Kysely compiles them for
 * each). What differs, how writes and imports reach the database, comes in as a `SqlEngine`.
 */
import { type Compilable, type Kysely, sql } from 'kysely';
import type { CalendarDate, Resolution } from '../../domain/time/days.js';
import type {
  DayProvenance,
  PriceStore,
  PriceWriteSession,
  Series,
  StoredPrice,
  WriteProvenance,
} from '../types.js';
import type { SqlEngine } from './engine.js';
import type { SeriesTable, SqlTables } from './schema.js';

function toSeries(row: Omit<SeriesTable, 'id' | 'updated_at'>): Series {
  return {
    symbol: row.symbol,
    name: row.name,
    kind: row.kind,
    currency: row.currency,
    unit: row.unit,
    timezone: row.timezone,
    resolution: row.resolution as Resolution,
  };
}

const SERIES_COLUMNS = ['symbol', 'name', 'kind', 'currency', 'unit', 'timezone', 'resolution'] as const;

/** @example const prices = new SqlPriceStore(db, engine) */
export class SqlPriceStore implements PriceStore {
  constructor(
    protected readonly db: Kysely<SqlTables>,
    protected readonly engine: SqlEngine,
  ) {}

  async listSeries(): Promise<Series[]> {
    // Code-point order on both: SQLite's BINARY, PostgreSQL's "C" collation on `symbol`.
    const rows = await this.db.selectFrom('series').select(SERIES_COLUMNS).orderBy('symbol').execute();
    return rows.map(toSeries);
  }

  async getSeries(symbol: string): Promise<Series | undefined> {
    const row = await this.db
      .selectFrom('series')
      .select(SERIES_COLUMNS)
      .where('symbol', '=', symbol)
      .executeTakeFirst();
    return row && toSeries(row);
  }

  async upsertSeries(series: Series): Promise<void> {
    await this.engine.writeAll([this.seriesUpsert(series)]);
  }

  /** The statement that writes `series`, for an engine that writes more in the same transaction. */
  protected seriesUpsert(series: Series): Compilable {
    const values = { ...series, updated_at: Date.now() };
    return this.db
      .insertInto('series')
      .values(values)
      .onConflict((oc) => oc.column('symbol').doUpdateSet(values));
  }

  async pricesBetween(symbol: string, from: number, to: number): Promise<StoredPrice[]> {
    return this.db
      .selectFrom('prices')
      .innerJoin('series', 'series.id', 'prices.series_id')
      .select(['prices.start_ms as start', 'prices.price'])
      .where('series.symbol', '=', symbol)
      .where('prices.start_ms', '>=', from)
      .where('prices.start_ms', '<', to)
      .orderBy('prices.start_ms')
      .execute();
  }

  async latestPrice(symbol: string, at: number, from: number): Promise<StoredPrice | undefined> {
    return this.db
      .selectFrom('prices')
      .innerJoin('series', 'series.id', 'prices.series_id')
      .select(['prices.start_ms as start', 'prices.price'])
      .where('series.symbol', '=', symbol)
      .where('prices.start_ms', '>=', from)
      .where('prices.start_ms', '<=', at)
      .orderBy('prices.start_ms', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  async upsertPrices(symbol: string, points: readonly StoredPrice[]): Promise<number> {
    // The same all-or-nothing write a bounded HTTP import does.
    const session = await this.beginPriceWrites({ small: true });
    await session.write(points.map((p) => ({ symbol, start: p.start, price: p.price })));
    await session.commit();
    return points.length;
  }

  async coverage(symbol: string): Promise<{ first: number; last: number } | undefined> {
    const row = await this.db
      .selectFrom('prices')
      .innerJoin('series', 'series.id', 'prices.series_id')
      .select((eb) => [eb.fn.min('prices.start_ms').as('first'), eb.fn.max('prices.start_ms').as('last')])
      .where('series.symbol', '=', symbol)
      .executeTakeFirst();
    // min and max of no rows are NULL, not a missing row.
    return row?.first == null || row.last == null ? undefined : { first: row.first, last: row.last };
  }

  async dayProvenance(symbol: string, from: CalendarDate, to: CalendarDate): Promise<DayProvenance[]> {
    const rows = await this.db
      .selectFrom('day_provenance')
      .innerJoin('series', 'series.id', 'day_provenance.series_id')
      .select([
        'day_provenance.date',
        'day_provenance.source',
        'day_provenance.fetched_at',
        'day_provenance.complete',
      ])
      .where('series.symbol', '=', symbol)
      .where('day_provenance.date', '>=', from)
      .where('day_provenance.date', '<=', to)
      .orderBy('day_provenance.date')
      .execute();
    return rows.map((r) => ({
      date: r.date,
      source: r.source,
      fetchedAt: r.fetched_at,
      complete: r.complete === 1,
    }));
  }

  async beginPriceWrites(
    options: { readonly small?: boolean; readonly provenance?: WriteProvenance } = {},
  ): Promise<PriceWriteSession> {
    // Direct writes (the dev data, `series` uploads without a source) are imports as well.
    const provenance = options.provenance ?? { source: 'import', fetchedAt: Date.now() };
    return this.engine.openPriceWrites(options.small === true, provenance);
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }
}
