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

/**
 * `SqlPriceStore.pricesBetween`'s rows as `start,price,start,price,…` (NULL for none), in the order
 * the primary key is scanned, which is by start. `group_concat(… order by start_ms)` would sort them
 * again in a temporary b-tree: a third of the cost of reading a month (bench/README.md "Uncached
 * reads"). SQLite does not promise that order, so `pricesBetween` checks it.
 */
const JOINED_PRICES =
  "select group_concat(p.start_ms || ',' || p.price, ',') from prices p " +
  'join series s on s.id = p.series_id where s.symbol = ? and p.start_ms >= ? and p.start_ms < ?';

/**
 * The rows of a `JOINED_PRICES` text. Each start is read digit by digit: `Number()` of a 13-digit
 * text takes V8's general decimal parser, which cost as much as SQLite's whole scan. Starts are
 * integers well inside 2^53 and prices decimal text, so neither holds the comma.
 */
export function splitJoinedPrices(joined: string): StoredPrice[] {
  const rows: StoredPrice[] = [];
  let at = 0;
  while (at < joined.length) {
    const negative = joined.charCodeAt(at) === 45; // '-'
    if (negative) at++;
    let start = 0;
    for (let c = joined.charCodeAt(at); c !== 44; c = joined.charCodeAt(++at)) start = start * 10 + (c - 48);
    at++; // the comma after the start
    let end = joined.indexOf(',', at);
    if (end < 0) end = joined.length;
    rows.push({ start: negative ? -start : start, price: joined.slice(at, end) });
    at = end + 1;
  }
  return rows;
}

/** `rows` ordered by start: as they are when they already are (one pass), else sorted. */
export function inStartOrder(rows: StoredPrice[]): StoredPrice[] {
  for (let i = 1; i < rows.length; i++) {
    if ((rows[i] as StoredPrice).start < (rows[i - 1] as StoredPrice).start) {
      return rows.sort((a, b) => a.start - b.start);
    }
  }
  return rows;
}

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
   * (bench/README.md "Uncached reads").
   */
  override async pricesBetween(symbol: string, from: number, to: number): Promise<StoredPrice[]> {
    const joined = this.joinedPrices.get(symbol, from, to);
    if (joined == null) return [];
    return inStartOrder(splitJoinedPrices(joined));
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
