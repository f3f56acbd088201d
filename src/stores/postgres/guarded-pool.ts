/**
 * The `pg` pool as the stores use it: every call has a client-side deadline and goes through a
 * circuit breaker (docs/operating.md "Running several instances"), so a PostgreSQL that stops answering
 * (stopped by SIGSTOP, a dead network path: the connection stays open and nothing comes back) is
 * noticed by the first call past its deadline, and every later call is refused at once until a
 * background probe finds the database again.
 *
 * - Connect and acquire: the pool's `connectionTimeoutMillis` bounds both making a connection and
 *   waiting for a free one. A connection that cannot be made trips the breaker; a wait for a busy
 *   pool does not (the database answers, the pool is just full) and only fails that call.
 * - Queries: `timeoutMs`, or a longer deadline the caller names for statements that may rightly
 *   run long (an import's batches, the wait for another import's lock). A query past its deadline
 *   trips the breaker, and its connection is destroyed rather than reused: the late answer would
 *   otherwise arrive for the next query on it.
 * - An error PostgreSQL itself sends (a constraint, a statement timeout) proves that it answers and
 *   trips nothing, unless it says the server is going away or refuses connections.
 */
import pg from 'pg';
import { CircuitBreaker, CircuitOpenError } from '../circuit-breaker.js';
import { cutConnection } from './cut-connection.js';

/** The default of `PRICEPOINT_DATABASE_TIMEOUT_MS`. */
export const DEFAULT_DATABASE_TIMEOUT_MS = 1_000;

/** A call that got no answer from PostgreSQL within its deadline. */
export class DatabaseDeadlineError extends Error {
  constructor(what: string, ms: number) {
    super(`PostgreSQL did not answer ${what} within ${ms} ms`);
    this.name = 'DatabaseDeadlineError';
  }
}

/** pg-pool's words for a wait for a free connection that ran out (not for a failed connect). */
const POOL_FULL = 'timeout exceeded when trying to connect';

/**
 * SQLSTATEs that mean the server is away although it answered: connection exceptions (08),
 * shutting down or refusing connections (57P01-57P05), too many connections (53300).
 */
const GOING_AWAY = /^(08|57P0)|^53300$/;

/** Whether `error` says PostgreSQL cannot be used just now (rather than that one call was wrong). */
function meansUnavailable(error: unknown): boolean {
  if (error instanceof CircuitOpenError) return false; // already tripped
  if (error instanceof pg.DatabaseError) return GOING_AWAY.test(error.code ?? '');
  return !(error instanceof Error && error.message === POOL_FULL);
}

/** A checked-out connection. `query` is what Kysely calls; `timeoutMs` is ours. */
export interface GuardedClient {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: readonly unknown[],
    timeoutMs?: number,
  ): Promise<pg.QueryResult<R>>;
  /**
   * Back to the pool; destroyed instead when `discard` is given (a connection in doubt) or a call
   * on it failed for want of the database.
   */
  release(discard?: unknown): void;
}

export interface GuardedPool {
  readonly breaker: CircuitBreaker;
  /** The deadline of a call that names none. */
  readonly timeoutMs: number;
  connect(): Promise<GuardedClient>;
  end(): Promise<void>;
}

export interface GuardedPoolOptions {
  /** The deadline of connect, acquire and every query that names no other. */
  readonly timeoutMs: number;
  /** Pause between probes while the breaker is open (default 500 ms). */
  readonly probeEveryMs?: number;
  /** Told when PostgreSQL stops answering (with the error that showed it) and when it answers again. */
  readonly onChange?: (open: boolean, error: unknown) => void;
}

/**
 * `work`, or a `DatabaseDeadlineError` once `ms` have passed. The expiry waits one more turn of the
 * event loop (`setImmediate`, after the poll for I/O): when the process itself was blocked past the
 * deadline, an answer that arrived meanwhile is read first and wins, so a busy instance does not
 * take its own stall for the database's.
 */
function withDeadline<T>(work: Promise<T>, ms: number, what: string, onExpire: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (settled) return;
          settled = true;
          onExpire();
          reject(new DatabaseDeadlineError(what, ms));
        }),
      ms,
    );
    work.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * Wraps `pool` (made with `connectionTimeoutMillis` equal to `options.timeoutMs`).
 * @example const db = new Kysely({ dialect: new PostgresDialect({ pool: guardPool(pool, { timeoutMs: 1000 }) }) })
 */
export function guardPool(pool: pg.Pool, options: GuardedPoolOptions): GuardedPool {
  const { timeoutMs } = options;
  // Every connection, and those handed out: `end` and a trip drop the others a frozen server holds.
  const clients = new Set<pg.PoolClient>();
  const checkedOut = new Set<pg.PoolClient>();
  pool.on('connect', (client) => clients.add(client));
  pool.on('remove', (client) => {
    clients.delete(client);
    checkedOut.delete(client);
  });

  /** `client` with deadlines; `checked`: refuse its queries while the breaker is open (the probe's is not). */
  function wrap(client: pg.PoolClient, checked: boolean): GuardedClient {
    let broken: Error | undefined;
    return {
      async query<R extends pg.QueryResultRow>(
        text: string,
        values?: readonly unknown[],
        ms = timeoutMs,
      ): Promise<pg.QueryResult<R>> {
        try {
          if (broken !== undefined) throw broken;
          if (checked) breaker.check();
          const pending = client.query<R>(text, values as unknown[] | undefined);
          return await withDeadline(pending, ms, 'a query', () => cutConnection(client));
        } catch (error) {
          // Also a refusal by the breaker: the connection may be inside a transaction that can no
          // longer be rolled back, so it is never handed out again.
          if (!(error instanceof pg.DatabaseError)) broken ??= error as Error;
          if (meansUnavailable(error)) breaker.trip(error);
          throw error;
        }
      },
      release(discard?: unknown) {
        checkedOut.delete(client);
        const reason = broken ?? (discard ? new Error('discarded', { cause: discard }) : undefined);
        client.release(reason);
        if (broken !== undefined) cutConnection(client);
      },
    };
  }

  async function acquire(checked: boolean): Promise<GuardedClient> {
    if (checked) breaker.check();
    try {
      // pg-pool bounds both the connect and the wait (`connectionTimeoutMillis`), so no timer here.
      const client = await pool.connect();
      checkedOut.add(client);
      return wrap(client, checked);
    } catch (error) {
      if (meansUnavailable(error)) breaker.trip(error);
      throw error;
    }
  }

  const breaker: CircuitBreaker = new CircuitBreaker({
    name: 'PostgreSQL',
    probeEveryMs: options.probeEveryMs,
    onChange(open, error) {
      // Idle connections went silent with the busy one, or died with it: drop them rather than
      // have each trip the breaker once more when it is next handed out.
      if (open) for (const client of clients) if (!checkedOut.has(client)) cutConnection(client);
      options.onChange?.(open, error);
    },
    async probe() {
      const client = await acquire(false);
      try {
        await client.query('select 1');
      } finally {
        client.release();
      }
    },
  });

  return {
    breaker,
    timeoutMs,
    connect: () => acquire(true),
    async end() {
      breaker.stop();
      // A polite end waits for the server to close each connection; a frozen one never does.
      let timer: NodeJS.Timeout | undefined;
      const ended = pool.end();
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), timeoutMs);
      });
      if ((await Promise.race([ended, late])) === 'late') {
        for (const client of clients) cutConnection(client);
        await ended;
      }
      clearTimeout(timer);
    },
  };
}
