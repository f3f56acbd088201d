/**
 * A long `pricepoint import` beside a running server on the same SQLite file (docs/operating.md "Importing
 * prices"): while a separate process imports 2.4 million points, the server keeps answering
 * `/healthz` and reads of committed data at once, its admin writes (key create and revoke, series
 * upsert, a price upload) all succeed, and every revoked key is refused from then on, with a key
 * cache of ten minutes. Before, each admin write blocked the server's event loop for the 5 s busy
 * timeout and then answered 503, and `/healthz` stalled with it.
 *
 * Bounds are generous (2 s for an answer that takes milliseconds): the machine is shared, and a
 * write that blocks the event loop on the lock stalls every answer for seconds.
 */
import assert from 'node:assert/strict';
import { createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Answer,
  cleanUp,
  httpsClient,
  onlyJson,
  runCli,
  spawnCli,
  startServer,
  tempDir,
} from '../helpers/process.js';

const SERIES = Array.from({ length: 24 }, (_, n) => `IMP${n}`);
const POINTS_PER_SERIES = 100_000;
const QUARTER_HOUR_MS = 900_000;
const FROM = Date.parse('2020-01-01T00:00:00Z');
/** An answer that takes milliseconds; a write blocked on the lock held it for 5 s. */
const QUICK_MS = 2_000;

after(cleanUp);

/** Writes the import file: every series, every quarter hour from 2020 on, series by series per instant. */
async function writeImportFile(file: string): Promise<number> {
  const out = createWriteStream(file);
  const write = (text: string) =>
    new Promise<void>((resolve, reject) => out.write(text, (error) => (error ? reject(error) : resolve())));
  await write('symbol,start,price\n');
  for (let i = 0; i < POINTS_PER_SERIES; i += 1_000) {
    let chunk = '';
    for (let j = i; j < i + 1_000; j++) {
      const start = `${new Date(FROM + j * QUARTER_HOUR_MS).toISOString().slice(0, 19)}Z`;
      for (const [n, symbol] of SERIES.entries()) chunk += `${symbol},${start},${(j % 997) + n}.25\n`;
    }
    await write(chunk);
  }
  await new Promise<void>((resolve, reject) =>
    out.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
  return SERIES.length * POINTS_PER_SERIES;
}

function pricesOf(answer: Answer): unknown {
  assert.equal(answer.status, 200, answer.text);
  return (JSON.parse(answer.text) as { series: { prices: unknown }[] }).series.map((s) => s.prices);
}

interface Timed {
  readonly what: string;
  readonly status: number;
  readonly ms: number;
}

test('a multi-million-point import beside the server: no answer waits for it, and revocations hold', async (t) => {
  const dir = await tempDir('pricepoint-beside-');
  // Revoked keys are tried often: the failed-login budget must not answer for them.
  // A tier whose limits the test never reaches: it measures waiting, not rate limits.
  const config = join(dir, 'tiers.json');
  await writeFile(
    config,
    JSON.stringify({ tiers: { bulk: { limits: [{ name: 'second', limit: 1_000_000, windowSeconds: 1 }] } } }),
  );
  const settings = {
    PRICEPOINT_CONFIG: config,
    PRICEPOINT_DATA_DIR: dir,
    PRICEPOINT_KEY_CACHE_MS: '600000',
    PRICEPOINT_AUTH_FAILURES_PER_MINUTE: '1000000',
  };
  const operator = await runCli(
    ['keys', 'create', '--tier', 'bulk', '--name', 'operator', '--scopes', 'read,write,admin', '--json'],
    settings,
  );
  assert.equal(operator.code, 0, operator.stderr);
  const admin = (onlyJson(operator) as { key: string }).key;
  const server = await startServer(['serve'], settings);
  const client = httpsClient(join(dir, 'tls', 'localhost-cert.pem'));
  const headers = (key: string, type?: string): Record<string, string> =>
    type === undefined ? { 'x-api-key': key } : { 'x-api-key': key, 'content-type': type };
  const json = (key: string, method: 'PUT' | 'POST' | 'DELETE', path: string, body?: object) =>
    client.send(
      method,
      `${server.url}${path}`,
      headers(key, body && 'application/json'),
      body && JSON.stringify(body),
    );
  const series = {
    name: 'Imported',
    kind: 'electricity',
    currency: 'EUR',
    unit: 'MWh',
    timezone: 'UTC',
    resolution: 'PT15M',
  };
  for (const symbol of [...SERIES, 'KEEP']) {
    const answer = await json(admin, 'PUT', `/api/v1/series/${symbol}`, series);
    assert.equal(answer.status, 201, answer.text);
  }
  const day = `start,price\n${Array.from({ length: 96 }, (_, n) => `2024-03-01T${String(Math.floor(n / 4)).padStart(2, '0')}:${String((n % 4) * 15).padStart(2, '0')}:00Z,${n}.5`).join('\n')}\n`;
  const seeded = await client.send(
    'PUT',
    `${server.url}/api/v1/series/KEEP/prices`,
    headers(admin, 'text/csv'),
    day,
  );
  assert.equal(seeded.status, 200, seeded.text);
  const committed = await client.get(`${server.url}/api/v1/prices/2024-03-01?symbols=KEEP`, {
    'x-api-key': admin,
  });
  assert.equal(committed.status, 200, committed.text);

  const file = join(dir, 'big.csv');
  const points = await writeImportFile(file);
  const startedAt = performance.now();
  const importer = spawnCli(['import', file, '--json'], settings);
  let importing = true;
  const imported = importer.closed.finally(() => {
    importing = false;
  });

  const timed: Timed[] = [];
  const time = async (what: string, call: () => Promise<Answer>): Promise<Answer> => {
    const began = performance.now();
    const answer = await call();
    timed.push({ what, status: answer.status, ms: performance.now() - began });
    return answer;
  };

  /** `/healthz` and a read of committed prices, about every 50 ms. */
  const reads = (async () => {
    while (importing) {
      const health = await time('healthz', () => client.get(`${server.url}/healthz`));
      assert.equal(health.status, 200, health.text);
      const read = await time('read', () =>
        client.get(`${server.url}/api/v1/prices/2024-03-01?symbols=KEEP`, { 'x-api-key': admin }),
      );
      assert.deepEqual(pricesOf(read), pricesOf(committed), 'the committed day is served as it was');
      await sleep(50);
    }
  })();

  /**
   * Admin writes, one after another: a key is created and used (so the server caches it for ten
   * minutes), then revoked while another request keeps using it; from the first refusal on, and
   * after the revocation is answered, the key is refused. A series upsert and a price upload too.
   */
  let revocations = 0;
  let refusedBeforeAnswer = 0;
  const writes = (async () => {
    for (let round = 0; importing; round++) {
      const created = await time('key create', () =>
        json(admin, 'POST', '/api/v1/keys', { name: `k${round}`, tier: 'bulk' }),
      );
      assert.equal(created.status, 201, `key create ${round}: ${created.text}`);
      const { id, key } = JSON.parse(created.text) as { id: string; key: string };
      const usage = () => client.get(`${server.url}/api/v1/usage`, { 'x-api-key': key });
      assert.equal((await usage()).status, 200, 'a new key works at once');
      let answered = false;
      const revoke = time('key revoke', () => json(admin, 'DELETE', `/api/v1/keys/${id}`)).finally(() => {
        answered = true;
      });
      let refused = false;
      while (!answered) {
        const status = (await usage()).status;
        if (refused) assert.equal(status, 401, 'once refused, a revoked key stays refused');
        if (status === 401 && !refused) {
          refused = true;
          if (!answered) refusedBeforeAnswer++;
        }
        await sleep(10);
      }
      const revoked = await revoke;
      assert.equal(revoked.status, 200, `key revoke ${round}: ${revoked.text}`);
      assert.equal((await usage()).status, 401, 'a revoked key is refused once the revocation is answered');
      revocations++;
      const upsert = await time('series upsert', () =>
        json(admin, 'PUT', '/api/v1/series/KEEP', { name: `Kept ${round}` }),
      );
      assert.equal(upsert.status, 200, `series upsert ${round}: ${upsert.text}`);
      const upload = await time('price upload', () =>
        client.send(
          'PUT',
          `${server.url}/api/v1/series/KEEP/prices`,
          headers(admin, 'text/csv'),
          day.replaceAll('2024-03-01', '2024-03-02'),
        ),
      );
      assert.equal(upload.status, 200, `price upload ${round}: ${upload.text}`);
    }
  })();

  const [output] = await Promise.all([imported, reads, writes]);
  const importMs = performance.now() - startedAt;
  assert.equal(output.code, 0, output.stderr);
  assert.equal((JSON.parse(output.stdout) as { written: number }).written, points, 'every point is imported');

  const worst = new Map<string, Timed>();
  for (const answer of timed) {
    if ((worst.get(answer.what)?.ms ?? -1) < answer.ms) worst.set(answer.what, answer);
  }
  t.diagnostic(
    `import of ${points} points: ${Math.round(importMs)} ms; ${timed.length} timed requests; slowest: ${[...worst.values()].map((w) => `${w.what} ${Math.round(w.ms)} ms`).join(', ')}`,
  );
  t.diagnostic(
    `${revocations} revocations, ${refusedBeforeAnswer} of them refused before the DELETE was answered`,
  );
  assert.ok(revocations >= 2, `several keys were revoked during the import (${revocations})`);
  for (const what of ['healthz', 'read']) {
    const slow = timed.filter((a) => a.what === what && a.ms > QUICK_MS);
    assert.deepEqual(slow, [], `every ${what} during the import is answered within ${QUICK_MS} ms`);
  }
  assert.ok(timed.filter((a) => a.what === 'healthz').length >= 20, 'health was asked throughout the import');

  const served = await client.get(`${server.url}/api/v1/prices/2020-01-02?symbols=IMP0,IMP23`, {
    'x-api-key': admin,
  });
  assert.equal(served.status, 200, served.text);
  const bodies = JSON.parse(served.text) as { series: { prices: unknown[] }[] };
  assert.deepEqual(
    bodies.series.map((s) => s.prices.length),
    [96, 96],
    'the imported days are served',
  );
});
