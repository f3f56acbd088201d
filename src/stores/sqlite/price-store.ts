/** Series and prices in SQLite. */
import type SQLite from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import type { Resolution } from '../../domain/time/days.js';
import type { PriceStore, PriceWriteSession, Series, StoredPrice } from '../types.js';
import type { Database, SeriesTable } from './database.js';
import { openSqliteWriteSession } from './price-write-session.js';

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

export class SqlitePriceStore implements PriceStore {
  /** Price and series writes made through this store, counted as they commit. */
  private writes = 0;
  /** Moves with other connections' commits (a CLI import): a few microseconds, as it reads the WAL index. */
  private readonly dataVersion: SQLite.Statement<[], number>;
  /** `data_version` as read in this turn of the event loop; cleared when the turn ends. */
  private otherChanges: number | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly raw: SQLite.Database,
  ) {
    this.dataVersion = raw.prepare<[], number>('pragma data_version').pluck();
  }

  /**
   * Changes whenever the data may have: at once for writes through this store, and for another
   * process' commits from the next turn of the event loop on. Requests that arrive in one turn
   * share one read of `data_version`, which under load saves most of its cost. Key writes on this
   * connection (last-used times) do not move it, so they never drop cached answers.
   */
  changeToken(): string {
    if (this.otherChanges === undefined) {
      this.otherChanges = this.dataVersion.get() ?? 0;
      setImmediate(() => {
        this.otherChanges = undefined;
      });
    }
    return `${this.writes}:${this.otherChanges}`;
  }

  /** A write through this store committed: the token moves now, and `data_version` is read again. */
  private wrote(): void {
    this.writes += 1;
    this.otherChanges = undefined;
  }

  async listSeries(): Promise<Series[]> {
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
    const values = { ...series, updated_at: Date.now() };
    await this.db
      .insertInto('series')
      .values(values)
      .onConflict((oc) => oc.column('symbol').doUpdateSet(values))
      .execute();
    this.wrote();
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
    // The same all-or-nothing write an import does, in one synchronous transaction.
    const session = openSqliteWriteSession(this.raw, true);
    await session.write(points.map((p) => ({ symbol, start: p.start, price: p.price })));
    await session.commit();
    this.wrote();
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

  async beginPriceWrites(options: { readonly small?: boolean } = {}): Promise<PriceWriteSession> {
    const session = openSqliteWriteSession(this.raw, options.small === true);
    return {
      write: (points) => session.write(points),
      commit: async () => {
        await session.commit();
        this.wrote();
      },
      rollback: () => session.rollback(),
    };
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }
}
