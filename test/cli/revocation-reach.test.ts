/**
 * A revocation from the CLI reaches a running server on the same SQLite file within 5 seconds,
 * whatever its key cache time (docs/settings.md, `PRICEPOINT_KEY_CACHE_MS`): the server reads a
 * counter of key changes every second and forgets the keys it verified when it moves. Before, a
 * server with a long key cache kept accepting the revoked key until the cache ran out.
 *
 * And a revocation the server accepts while another process holds the write lock (an import
 * committing) is in force at once: the key is refused before the revocation is written, and the
 * answer comes once it is. Before, the server blocked for the 5 s busy timeout and answered 503.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import { cleanUp, httpsClient, onlyJson, runCli, startServer, tempDir } from '../helpers/process.js';

after(cleanUp);

const REACH_MS = 5_000;

test('a CLI revocation reaches a server with a ten-minute key cache within 5 seconds', async (t) => {
  const dir = await tempDir('pricepoint-reach-');
  const settings = { PRICEPOINT_DATA_DIR: dir, PRICEPOINT_KEY_CACHE_MS: '600000' };
  const created = await runCli(['keys', 'create', '--tier', 'pro', '--name', 'client', '--json'], settings);
  assert.equal(created.code, 0, created.stderr);
  const { id, key } = onlyJson(created) as { id: string; key: string };
  const server = await startServer(['serve'], settings);
  const client = httpsClient(join(dir, 'tls', 'localhost-cert.pem'));
  const usage = async () => (await client.get(`${server.url}/api/v1/usage`, { 'x-api-key': key })).status;
  // Used twice, so the second answer came from the server's cache of verified keys.
  assert.equal(await usage(), 200, 'the key works');
  assert.equal(await usage(), 200, 'the key works from the cache');

  const revoked = await runCli(['keys', 'revoke', id], settings);
  assert.equal(revoked.code, 0, revoked.stderr);
  const written = performance.now();
  let status = await usage();
  while (status !== 401 && performance.now() - written < REACH_MS + 5_000) {
    await sleep(100);
    status = await usage();
  }
  const reachedMs = performance.now() - written;
  t.diagnostic(`the revocation reached the server ${Math.round(reachedMs)} ms after the CLI wrote it`);
  assert.equal(status, 401, 'the revoked key is refused');
  assert.ok(
    reachedMs < REACH_MS,
    `refused within ${REACH_MS} ms of the revocation (${Math.round(reachedMs)} ms)`,
  );
  await sleep(1_500);
  assert.equal(await usage(), 401, 'and stays refused');
});

test('a revocation while another process holds the write lock is in force at once and answered once written', async (t) => {
  const dir = await tempDir('pricepoint-reach-');
  const settings = {
    PRICEPOINT_DATA_DIR: dir,
    PRICEPOINT_KEY_CACHE_MS: '600000',
    PRICEPOINT_AUTH_FAILURES_PER_MINUTE: '1000000',
  };
  const keys: { id: string; key: string }[] = [];
  for (const name of ['admin', 'client']) {
    const scopes = name === 'admin' ? 'read,write,admin' : 'read';
    const created = await runCli(
      ['keys', 'create', '--tier', 'pro', '--name', name, '--scopes', scopes, '--json'],
      settings,
    );
    assert.equal(created.code, 0, created.stderr);
    keys.push(onlyJson(created) as { id: string; key: string });
  }
  const [admin, user] = keys as [{ id: string; key: string }, { id: string; key: string }];
  const server = await startServer(['serve'], settings);
  const client = httpsClient(join(dir, 'tls', 'localhost-cert.pem'));
  const usage = async () =>
    (await client.get(`${server.url}/api/v1/usage`, { 'x-api-key': user.key })).status;
  assert.equal(await usage(), 200, 'the key works');
  assert.equal(await usage(), 200, 'the key works from the cache');

  // The write lock, held the way an import's final copy holds it.
  const holder = new SQLite(join(dir, 'pricepoint.db'));
  holder.exec('BEGIN IMMEDIATE');
  let answered = false;
  const revoke = client
    .send('DELETE', `${server.url}/api/v1/keys/${user.id}`, { 'x-api-key': admin.key })
    .finally(() => {
      answered = true;
    });
  const asked = performance.now();
  let status = await usage();
  while (status !== 401 && performance.now() - asked < 2_000) status = await usage();
  const refusedMs = performance.now() - asked;
  assert.equal(status, 401, 'the key is refused while its revocation waits for the lock');
  assert.equal(answered, false, 'the revocation is not answered before it is written');
  const health = performance.now();
  assert.equal((await client.get(`${server.url}/healthz`)).status, 200);
  assert.ok(performance.now() - health < 1_000, 'the server answers other requests meanwhile');
  await sleep(1_000);
  assert.equal(answered, false, 'the revocation still waits for the lock');
  holder.exec('COMMIT');
  holder.close();
  const answer = await revoke;
  assert.equal(answer.status, 200, `the revocation is answered once written: ${answer.text}`);
  t.diagnostic(`refused ${Math.round(refusedMs)} ms after the revocation was asked, while the lock was held`);
  assert.equal(await usage(), 401, 'the key stays refused');
  const shown = await runCli(['keys', 'show', user.id, '--json'], settings);
  assert.notEqual(
    (JSON.parse(shown.stdout) as { revokedAt: unknown }).revokedAt,
    null,
    'the revocation is stored',
  );
});
