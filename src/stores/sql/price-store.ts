/**
 * Series and prices in SQL, the same queries on SQLite and PostgreSQL (Kysely compiles them for
 * each). What differs, how writes and imports reach the database, comes in as a `SqlEngine`.
 */
import { type Compilable, type CompiledQuery, type Kysely, sql } from 'kysely';
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

/**
 * A query built and compiled once, then run with other values: Kysely builds and compiles a query
 * on every call, which cost more than running the reads of a day (bench/README.md "Uncached
 * reads"). `build` is called once with `markers`, one distinct value per parameter; where each
 * marker lands among the compiled parameters is where its value goes.
 * @example const between = compiledOnce((s: string) => db.selectFrom('series').selectAll().where('symbol', '=', s), ['\0s'])
 */
export function compiledOnce<V extends readonly unknown[], R>(
  build: (...values: V) => Compilable<R>,
  markers: V,
): (...values: V) => CompiledQuery<R> {
  const compiled = build(...markers).compile();
  const at = markers.map((marker) => compiled.parameters.indexOf(marker));
  if (compiled.parameters.length !== markers.length || new Set(at).size !== at.length || at.includes(-1)) {
    throw new Error(`a compiled query must take each value once as a parameter: ${compiled.sql}`);
  }
  return (...values) => {
    const parameters: unknown[] = new Array(values.length);
    for (let n = 0; n < at.length; n++) parameters[at[n] as number] = values[n];
    return { ...compiled, parameters };
  };
}

/** Markers for `compiledOnce`: never a symbol, date or time a caller passes. */
const SYMBOL = '\0symbol';
const FROM_DATE = '\0from';
const TO_DATE = '\0to';
const FROM_MS = Number.MIN_SAFE_INTEGER;
const TO_MS = Number.MIN_SAFE_INTEGER + 1;

/** @example const prices = new SqlPriceStore(db, engine) */
export class SqlPriceStore implements PriceStore {
  // The reads of every day answer, compiled once (see `compiledOnce`).
  private readonly allSeries;
  private readonly between;
  private readonly recorded;

  constructor(
    protected readonly db: Kysely<SqlTables>,
    protected readonly engine: SqlEngine,
  ) {
    // Code-point order on both: SQLite's BINARY, PostgreSQL's "C" collation on `symbol`.
    this.allSeries = compiledOnce(() => db.selectFrom('series').select(SERIES_COLUMNS).orderBy('symbol'), []);
    this.between = compiledOnce(
      (symbol: string, from: number, to: number) =>
        db
          .selectFrom('prices')
          .innerJoin('series', 'series.id', 'prices.series_id')
          .select(['prices.start_ms as start', 'prices.price'])
          .where('series.symbol', '=', symbol)
          .where('prices.start_ms', '>=', from)
          .where('prices.start_ms', '<', to)
          .orderBy('prices.start_ms'),
      [SYMBOL, FROM_MS, TO_MS],
    );
    this.recorded = compiledOnce(
      (symbol: string, from: CalendarDate, to: CalendarDate) =>
        db
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
          .orderBy('day_provenance.date'),
      [SYMBOL, FROM_DATE, TO_DATE],
    );
  }

  async listSeries(): Promise<Series[]> {
    const { rows } = await this.db.executeQuery(this.allSeries());
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
    await this.engine.writeAll(this.seriesWrites(series));
    this.committed();
  }

  /** The statements that write `series`, in one transaction; an engine may add its own. */
  protected seriesWrites(series: Series): Compilable[] {
    return [this.seriesUpsert(series)];
  }

  /**
   * Called after a series or price write through this store commits: an engine whose change token
   * (`changeToken`) must move at once overrides it.
   */
  protected committed(): void {}

  private seriesUpsert(series: Series): Compilable {
    const values = { ...series, updated_at: Date.now() };
    return this.db
      .insertInto('series')
      .values(values)
      .onConflict((oc) => oc.column('symbol').doUpdateSet(values));
  }

  async pricesBetween(symbol: string, from: number, to: number): Promise<StoredPrice[]> {
    return (await this.db.executeQuery(this.between(symbol, from, to))).rows;
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
    const { rows } = await this.db.executeQuery(this.recorded(symbol, from, to));
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
    const session = await this.engine.openPriceWrites(options.small === true, provenance);
    return {
      write: (points) => session.write(points),
      commit: async () => {
        await session.commit();
        this.committed();
      },
      rollback: () => session.rollback(),
    };
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }
}
