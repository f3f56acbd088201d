/**
 * Series and prices in SQLite: the shared SQL store (../sql/price-store.ts), plus what only the
 * embedded engine can tell cheaply: a change token, and whether the disk is full; and its prices
 * read as one text.
 */
import type SQLite from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { SqlEngine } from '../sql/engine.js';
import { SqlPriceStore } from '../sql/price-store.js';
import type { StoredPrice } from '../types.js';
import type { Database } from './database.js';
import type { SqliteWriter } from './write-lock.js';

/** `SqlPriceStore.pricesBetween`'s rows, in order, as `start,price,start,price,…` (NULL for none). */
const JOINED_PRICES =
  "select group_concat(p.start_ms || ',' || p.price, ',' order by p.start_ms) from prices p " +
  'join series s on s.id = p.series_id where s.symbol = ? and p.start_ms >= ? and p.start_ms < ?';

export class SqlitePriceStore extends SqlPriceStore {
  /** Price and series writes made through this store, counted as they commit. */
  private writes = 0;
  /** Moves with other connections' commits (a CLI import): a few microseconds, as it reads the WAL index. */
  private readonly dataVersion: SQLite.Statement<[], number>;
  /** `data_version` as read in this turn of the event loop; cleared when the turn ends. */
  private otherChanges: number | undefined;
  /** `pricesBetween` as one text (see there). */
  private readonly joinedPrices: SQLite.Statement<[string, number, number], string | null>;

  /** `raw`: the connection under `db`, on which `writer` takes the write lock; `engine` writes through them. */
  constructor(
    db: Kysely<Database>,
    engine: SqlEngine,
    raw: SQLite.Database,
    private readonly writer: SqliteWriter,
  ) {
    super(db, engine);
    this.dataVersion = raw.prepare<[], number>('pragma data_version').pluck();
    this.joinedPrices = raw.prepare<[string, number, number], string | null>(JOINED_PRICES).pluck();
  }

  /**
   * The same rows as the shared query, read as one text and split here: better-sqlite3 builds each
   * row object through V8's API, which cost twice the whole read for a month of quarter hours
   * (bench/README.md "Uncached reads"). Starts are integers and prices decimal text, so neither
   * holds the comma.
   */
  override async pricesBetween(symbol: string, from: number, to: number): Promise<StoredPrice[]> {
    const joined = this.joinedPrices.get(symbol, from, to);
    if (joined == null) return [];
    const parts = joined.split(',');
    const rows: StoredPrice[] = new Array(parts.length / 2);
    for (let i = 0; i < rows.length; i++) {
      rows[i] = { start: Number(parts[2 * i]), price: parts[2 * i + 1] as string };
    }
    return rows;
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
  protected override committed(): void {
    this.writes += 1;
    this.otherChanges = undefined;
  }

  /** True from a write that failed for a full disk until a price upload commits (`/readyz`). */
  diskFull(): boolean {
    return this.writer.diskFull();
  }
}
