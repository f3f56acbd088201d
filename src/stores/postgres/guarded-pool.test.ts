/**
 * The guarded pool against a real PostgreSQL reached through a TCP proxy the tests freeze (no byte
 * moves, connections stay open) and cut: deadlines, the circuit breaker, and its background probe.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { TEST_DATABASE_URL } from '../../../test/helpers/postgres.js';
import { within } from '../../../test/helpers/scale.js';
import { describeOrSkip } from '../../../test/helpers/skip.js';
import { startTcpProxy } from '../../../test/helpers/tcp-proxy.js';
import { CircuitOpenError } from '../circuit-breaker.js';
import { createPool } from './database.js';
import { DatabaseDeadlineError, guardPool } from './guarded-pool.js';

const DEADLINE_MS = 300;

async function unreachable(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 2_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    return undefined;
  } catch (error) {
    const reason = `PostgreSQL is unreachable (${(error as Error).message})`;
    if (process.env['CI'] === 'true') throw new Error(`${reason}; on CI PostgreSQL tests must run`);
    return reason;
  } finally {
    await client.end().catch(() => {});
  }
}

/** A guarded pool of `max` connections through a proxy of its own; both closed after the test. */
async function guardedThroughProxy(t: TestContext, max = 4) {
  const proxy = await startTcpProxy(Number(new URL(TEST_DATABASE_URL).port || 5432));
  const url = new URL(TEST_DATABASE_URL);
  url.port = String(proxy.port);
  const changes: boolean[] = [];
  const pool = guardPool(createPool(url.href, { max, connectTimeoutMs: DEADLINE_MS }), {
    timeoutMs: DEADLINE_MS,
    probeEveryMs: 100,
    onChange: (open) => changes.push(open),
  });
  t.after(async () => {
    await proxy.close();
    await pool.end().catch(() => {}); // a test may have ended it already
  });
  /** One query on a connection of its own, returned to the pool (or destroyed) afterwards. */
  const ask = async (text: string) => {
    const client = await pool.connect();
    try {
      return (await client.query<{ n: number }>(text)).rows[0]?.n;
    } finally {
      client.release();
    }
  };
  return { proxy, pool, changes, ask };
}

/** How long `work` took to settle, ms, and its error if it rejected. */
async function timed(work: () => Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const started = performance.now();
  try {
    await work();
    return { ms: performance.now() - started, error: undefined };
  } catch (error) {
    return { ms: performance.now() - started, error };
  }
}

describeOrSkip('guarded PostgreSQL pool', { skip: await unreachable() }, () => {
  test('frozen: the first query fails at its deadline, later calls at once; a probe closes the breaker after the thaw', async (t) => {
    const { proxy, pool, changes, ask } = await guardedThroughProxy(t);
    assert.equal(await ask('select 1 as n'), 1);
    proxy.stall();
    const first = await timed(() => ask('select 2 as n'));
    assert.ok(first.error instanceof DatabaseDeadlineError, `the deadline: ${String(first.error)}`);
    assert.ok(first.ms >= DEADLINE_MS - 20, `not before the deadline: ${first.ms.toFixed(0)} ms`);
    assert.equal(pool.breaker.open, true, 'the breaker is open');
    // Generous: "at once" means without waiting for a deadline of its own (300 ms here).
    for (let i = 0; i < 5; i++) {
      const later = await timed(() => ask('select 3 as n'));
      assert.ok(later.error instanceof CircuitOpenError, `refused by the breaker: ${String(later.error)}`);
      assert.ok(later.ms < DEADLINE_MS / 2, `refused without waiting: ${later.ms.toFixed(0)} ms`);
    }
    await sleep(DEADLINE_MS * 2); // probes keep failing meanwhile, with no request at all
    assert.equal(pool.breaker.open, true, 'still open while frozen');
    await proxy.restore();
    await within(5_000, 'the probe closing the breaker', async () => !pool.breaker.open);
    assert.deepEqual(changes, [true, false], 'told once when it opened and once when it closed');
    // The timed-out connection was destroyed: its late answer (2) never reaches another query.
    const answers = await Promise.all([4, 5, 6, 7].map((n) => ask(`select ${n} as n`)));
    assert.deepEqual(answers, [4, 5, 6, 7]);
  });

  test('connections silent for good (a dead network path): the probe finds the database over new ones', async (t) => {
    const { proxy, pool, ask } = await guardedThroughProxy(t);
    assert.deepEqual(await Promise.all([ask('select 1 as n'), ask('select 2 as n')]), [1, 2]);
    proxy.strand(); // nothing to restore: the pooled connections never answer again, new ones do
    const first = await timed(() => ask('select 3 as n'));
    assert.ok(first.error instanceof DatabaseDeadlineError, String(first.error));
    await within(5_000, 'the probe closing the breaker', async () => !pool.breaker.open);
    assert.deepEqual(await Promise.all([4, 5, 6].map((n) => ask(`select ${n} as n`))), [4, 5, 6]);
  });

  test('cut: a refused connection trips the breaker at once, and the probe closes it after the restore', async (t) => {
    const { proxy, pool, ask } = await guardedThroughProxy(t);
    assert.equal(await ask('select 1 as n'), 1);
    await proxy.cut();
    const cut = await timed(() => ask('select 2 as n'));
    assert.ok(cut.error instanceof Error && !(cut.error instanceof CircuitOpenError), String(cut.error));
    assert.equal(pool.breaker.open, true);
    await proxy.restore();
    await within(5_000, 'the probe closing the breaker', async () => !pool.breaker.open);
    assert.equal(await ask('select 3 as n'), 3);
  });

  test('an error PostgreSQL sends, or a wait for a full pool, fails that call only', async (t) => {
    const { pool, ask } = await guardedThroughProxy(t, 1);
    await assert.rejects(ask('select * from no_such_table'), pg.DatabaseError);
    assert.equal(pool.breaker.open, false, 'a server error proves the server answers');
    const held = await pool.connect();
    const waited = await timed(() => pool.connect());
    assert.match(String(waited.error), /timeout exceeded when trying to connect/);
    assert.equal(pool.breaker.open, false, 'a full pool is not a database away');
    held.release();
    assert.equal(await ask('select 1 as n'), 1);
  });

  test('closing while frozen does not wait for the frozen server', async (t) => {
    const { proxy, pool, ask } = await guardedThroughProxy(t);
    assert.deepEqual(await Promise.all([ask('select 1 as n'), ask('select 2 as n')]), [1, 2]);
    proxy.stall();
    const closing = await timed(() => pool.end());
    assert.equal(closing.error, undefined);
    assert.ok(closing.ms < 2_000, `closed after about one deadline: ${closing.ms.toFixed(0)} ms`);
  });

  test('a statement may be given a longer deadline of its own', async (t) => {
    const { pool } = await guardedThroughProxy(t);
    const client = await pool.connect();
    try {
      const slow = await client.query<{ n: number }>('select pg_sleep(0.5), 1 as n', [], 5_000);
      assert.equal(slow.rows[0]?.n, 1);
    } finally {
      client.release();
    }
    assert.equal(pool.breaker.open, false);
  });
});
