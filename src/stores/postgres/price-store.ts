/**
 * Series and prices in PostgreSQL: the shared SQL store (../sql/price-store.ts), plus a change
 * token, so that cached days and answers live until the data changes (docs/scale-out.md "Notices").
 *
 * Every price and series write moves one counter in its own transaction (migration
 * `0006_price_changes`). Change notices tell every instance at once which series changed; the
 * counter is the safety net for a notice that was lost (Redis away, no Redis, a `pricepoint import`
 * beside the servers): an instance reads it when a request asks for the token and the last read is
 * older than `checkMs`, so such a change is served at most `checkMs` (plus one query) late, and an
 * idle instance asks nothing. A read that fails keeps the last token: while PostgreSQL is away,
 * nothing can be written to it either.
 */
import { type Compilable, CompiledQuery, type Kysely, sql } from 'kysely';
import type { SqlEngine } from '../sql/engine.js';
import { SqlPriceStore } from '../sql/price-store.js';
import type { Series } from '../types.js';
import type { Database } from './database.js';
import { COUNT_CHANGE } from './price-write-session.js';

/** The default of `PRICEPOINT_CHANGE_CHECK_MS`. */
export const DEFAULT_CHANGE_CHECK_MS = 5_000;

const countChange: Compilable = { compile: () => CompiledQuery.raw(COUNT_CHANGE) };

export class PostgresPriceStore extends SqlPriceStore {
  /** The counter as last read; `unread` until the first read answers. */
  private version = 'unread';
  /** `performance.now()` when the last read began. */
  private checkedAt = Number.NEGATIVE_INFINITY;
  private checking = false;
  /** A write committed while a read was under way: that read may predate it, so read again. */
  private again = false;

  constructor(
    db: Kysely<Database>,
    engine: SqlEngine,
    private readonly checkMs: number = DEFAULT_CHANGE_CHECK_MS,
  ) {
    super(db, engine);
  }

  /**
   * The change counter as last read, read again in the background when that is `checkMs` old.
   * Writes through this store read it again at once after they commit.
   */
  changeToken(): string {
    if (!this.checking && performance.now() - this.checkedAt >= this.checkMs) void this.check();
    return this.version;
  }

  protected override seriesWrites(series: Series): Compilable[] {
    return [...super.seriesWrites(series), countChange];
  }

  /** A write through this store committed: read the counter again at once. */
  protected override committed(): void {
    void this.check();
  }

  /** Reads the counter now (on opening, so that the first token is already the database's). */
  async check(): Promise<void> {
    if (this.checking) {
      this.again = true;
      return;
    }
    this.checking = true;
    try {
      do {
        this.again = false;
        this.checkedAt = performance.now();
        try {
          const { rows } = await sql<{
            version: number;
          }>`select version from price_changes where id = 1`.execute(this.db);
          if (rows[0] !== undefined) this.version = String(rows[0].version);
        } catch {
          // PostgreSQL is away for a moment: keep the token, and read again after `checkMs`.
        }
      } while (this.again);
    } finally {
      this.checking = false;
    }
  }
}
