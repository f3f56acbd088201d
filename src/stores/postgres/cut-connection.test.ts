/**
 * `cutConnection` finds pg's socket and closes it: a query waiting on the server fails at once
 * instead of when the server answers, which is what the guarded pool needs of a database that
 * stopped answering.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { TEST_DATABASE_URL } from '../../../test/helpers/postgres.js';
import { describeOrSkip } from '../../../test/helpers/skip.js';
import { cutConnection } from './cut-connection.js';

async function connected(): Promise<pg.Client | string> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 2_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    return client;
  } catch (error) {
    const reason = `PostgreSQL is unreachable (${(error as Error).message})`;
    if (process.env['CI'] === 'true') throw new Error(`${reason}; on CI PostgreSQL tests must run`);
    return reason;
  }
}

const client = await connected();

describeOrSkip('cutting a pg connection', { skip: typeof client === 'string' ? client : undefined }, () => {
  test('a query waiting on the server fails as soon as its connection is cut', async () => {
    const c = client as pg.Client;
    const waiting = c.query('select pg_sleep(30)');
    const outcome = waiting.then(
      () => 'answered',
      () => 'failed',
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(cutConnection(c), true, 'the socket was found');
    const first = await Promise.race([
      outcome,
      new Promise((resolve) => setTimeout(resolve, 5_000, 'still waiting')),
    ]);
    assert.equal(first, 'failed');
  });
});
