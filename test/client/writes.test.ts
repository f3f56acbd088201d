/**
 * `@pricepoint/client`'s writes against a real server over HTTPS (the test harness, fake clock at
 * 2026-11-22T10:15:03.120Z): `upsertSeries` and `uploadPrices` read back through the client, exact
 * price text kept, a bad point named, and the key calls (`createKey`, `listKeys`, `getKey`,
 * `rotateKey`, `revokeKey`) seen working by the keys they make. Plus which calls are sent again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type FetchLike,
  type FetchResponseLike,
  PricepointClient,
  PricepointError,
} from '@pricepoint/client';
import { fetch as undiciFetch } from 'undici';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';

const NOW = '2026-11-22T10:15:03.120Z';
const SYMBOL = 'CLIENT-UP';

async function rejection(promise: Promise<unknown>): Promise<PricepointError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof PricepointError, `expected a PricepointError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the call to fail');
}

let h: Harness;
let server: Awaited<ReturnType<typeof listenHttps>>;
let bodies: (string | undefined)[];

function clientFor(apiKey: string): PricepointClient {
  const fetch: FetchLike = (url, init) => {
    bodies.push(init.body);
    return undiciFetch(url, { ...init, dispatcher: server.agent });
  };
  return new PricepointClient({ baseUrl: server.base, apiKey, fetch, maxRetries: 0 });
}

let admin: PricepointClient;

before(async () => {
  h = await createHarness({ https: true, now: NOW });
  server = await listenHttps(h);
  bodies = [];
  admin = clientFor((await h.createKey({ name: 'admin', tier: 'enterprise', scopes: ['admin'] })).key);
});
after(async () => {
  await server.close();
  await h.close();
});

describe('upsertSeries and uploadPrices', () => {
  test('a series created, prices uploaded and read back, the exact price text kept', async () => {
    const created = await admin.upsertSeries(SYMBOL, {
      name: 'Client upload test',
      kind: 'electricity',
      currency: 'EUR',
      unit: 'MWh',
      timezone: 'UTC',
      resolution: 'PT1H',
    });
    assert.equal(created.symbol, SYMBOL);
    assert.equal(created.coverage, null);
    const renamed = await admin.upsertSeries(SYMBOL, { name: 'Client upload test, renamed' });
    assert.equal(renamed.name, 'Client upload test, renamed');
    assert.equal(renamed.timezone, 'UTC', 'the fields left out are kept');

    const result = await admin.uploadPrices(SYMBOL, [
      { start: '2026-11-21T00:00:00Z', price: '41.270' },
      { start: '2026-11-21T01:00:00Z', price: -3.5 },
      { start: '2026-11-21T02:00:00Z', end: '2026-11-21T03:00:00Z', price: 1e3, currency: 'EUR' },
    ]);
    assert.deepEqual(result, { symbol: SYMBOL, written: 3 });
    // A standard JSON document, one point per line.
    assert.deepEqual(JSON.parse(bodies.at(-1) ?? '').length, 3);

    const day = await admin.day('2026-11-21', { symbols: [SYMBOL] });
    assert.deepEqual(
      day.series[0]?.prices.map((p) => [p.start, p.price]),
      [
        ['2026-11-21T00:00:00+00:00', 41.27],
        ['2026-11-21T01:00:00+00:00', -3.5],
        ['2026-11-21T02:00:00+00:00', 1000],
      ],
    );
    const csv = await admin.day('2026-11-21', { symbols: [SYMBOL], format: 'csv' });
    assert.match(
      csv,
      /^CLIENT-UP,2026-11-21,2026-11-21T00:00:00\+00:00,2026-11-21T01:00:00\+00:00,41\.270,/m,
    );
    assert.equal((await admin.seriesInfo(SYMBOL)).coverage?.first, '2026-11-21');
  });

  test('the points of a read answer upload as they are', async () => {
    const { series } = await admin.today({ symbols: ['NO1'] });
    const prices = series[0]?.prices ?? [];
    assert.equal(prices.length, 96);
    const result = await admin.uploadPrices('no1', prices);
    assert.deepEqual(result, { symbol: 'NO1', written: 96 });
  });

  test('a bad point fails the upload by its line and nothing is written', async () => {
    const error = await rejection(
      admin.uploadPrices(SYMBOL, [
        { start: '2026-11-23T00:00:00Z', price: 10 },
        { start: '2026-11-23T00:30:00Z', price: 11 },
      ]),
    );
    assert.equal(error.status, 422);
    assert.equal(error.code, 'invalid_prices');
    assert.equal(error.problem['errorCount'], 1);
    assert.match(JSON.stringify(error.problem['errors']), /"line":3/, 'point 1 is on line 3');
    const day = await admin.day('2026-11-23', { symbols: [SYMBOL] });
    assert.deepEqual(day.series[0]?.prices, []);
  });

  test('a price that is no number is refused before anything is sent', async () => {
    const sentBefore = bodies.length;
    await assert.rejects(
      admin.uploadPrices(SYMBOL, [{ start: '2026-11-23T00:00:00Z', price: Number.NaN }]),
      /points\[0\]\.price must be a finite number/,
    );
    await assert.rejects(
      admin.uploadPrices(SYMBOL, [{ start: '2026-11-23T00:00:00Z', price: '1,5' }]),
      /points\[0\]\.price must be a finite number or a decimal string/,
    );
    assert.equal(bodies.length, sentBefore);
  });

  test('a read key may not upload: 403 insufficient_scope', async () => {
    const reader = clientFor(h.demoKey);
    const error = await rejection(reader.uploadPrices(SYMBOL, [{ start: '2026-11-23T00:00:00Z', price: 1 }]));
    assert.equal(error.status, 403);
    assert.equal(error.code, 'insufficient_scope');
  });
});

describe('key calls', () => {
  test('create, list, get, rotate and revoke, each seen by the key it makes', async () => {
    const created = await admin.createKey({
      name: 'dashboard',
      tier: 'free',
      scopes: ['read'],
      expiresAt: new Date('2030-01-01T00:00:00Z'),
    });
    assert.match(created.key, /^pp_/);
    assert.equal(created.last4, created.key.slice(-4));
    assert.equal(created.expiresAt, '2030-01-01T00:00:00.000Z');
    assert.deepEqual(created.scopes, ['read']);
    const user = clientFor(created.key);
    assert.equal((await user.usage()).keyId, created.id);

    const listed = await admin.listKeys();
    const { key: _key, ...view } = created;
    assert.deepEqual(
      listed.find((k) => k.id === created.id),
      view,
    );
    assert.doesNotMatch(JSON.stringify(listed), new RegExp(created.key));
    assert.equal((await admin.getKey(created.id)).name, 'dashboard');

    const rotated = await admin.rotateKey(created.id, { graceSeconds: 0 });
    assert.notEqual(rotated.key, created.key);
    assert.equal(rotated.previous.id, created.id);
    assert.equal((await clientFor(rotated.key).usage()).keyId, rotated.id);
    assert.equal((await rejection(user.usage())).code, 'invalid_api_key', 'no grace: the old key is done');

    const revoked = await admin.revokeKey(rotated.id);
    assert.equal(revoked.revokedAt, NOW);
    assert.equal((await rejection(clientFor(rotated.key).usage())).code, 'invalid_api_key');
  });

  test('an unknown id is 404 not_found; a bad field is 400 naming it', async () => {
    assert.equal((await rejection(admin.getKey('nope'))).code, 'not_found');
    const bad = await rejection(
      admin.createKey({ name: 'x', tier: 'free', expiresAt: '2001-01-01T00:00:00Z' }),
    );
    assert.equal(bad.status, 400);
    assert.equal(bad.problem['parameter'], 'expiresAt');
  });

  test('a read key may not list keys: 403 insufficient_scope', async () => {
    assert.equal((await rejection(clientFor(h.demoKey).listKeys())).code, 'insufficient_scope');
  });
});

describe('which calls are sent again', () => {
  /** A fetch that answers `statuses` in turn (then 200 `{}`), counting calls per method. */
  function scripted(statuses: number[], calls: string[]): FetchLike {
    return async (_url, init) => {
      calls.push(init.method);
      const status = statuses.shift() ?? 200;
      const answer: FetchResponseLike = {
        status,
        statusText: '',
        headers: { get: (name) => (name === 'retry-after' && status !== 200 ? '0' : null) },
        text: async () => (status === 200 ? '{"symbol":"X","written":1}' : '{}'),
      };
      return answer;
    };
  }
  const options = { baseUrl: 'https://localhost:1', apiKey: 'pp_test_x', retryBaseDelayMs: 1 };

  test('an upload (idempotent) is sent again after a 503; a key creation is not', async () => {
    const calls: string[] = [];
    const client = new PricepointClient({ ...options, fetch: scripted([503], calls) });
    await client.uploadPrices('X', [{ start: '2026-11-22T00:00:00Z', price: 1 }]);
    assert.deepEqual(calls, ['PUT', 'PUT']);

    calls.length = 0;
    const once = new PricepointClient({ ...options, fetch: scripted([503], calls) });
    assert.equal((await rejection(once.createKey({ name: 'x', tier: 'free' }))).status, 503);
    assert.deepEqual(calls, ['POST']);
  });

  test('a key creation refused with 429 (nothing done) is sent again', async () => {
    const calls: string[] = [];
    const client = new PricepointClient({ ...options, fetch: scripted([429], calls) });
    await client.createKey({ name: 'x', tier: 'free' });
    assert.deepEqual(calls, ['POST', 'POST']);
  });
});
