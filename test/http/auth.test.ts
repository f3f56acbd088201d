/**
 * Authentication over HTTP (docs/keys-and-tiers.md): the two header forms, every kind of
 * refusal, the per-address budget of failed authentications, and how keys are stored.
 */
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import type { LightMyRequestResponse } from 'fastify';
import { loadConfig } from '../../src/config/config.js';
import { generateKey } from '../../src/domain/keys/key-format.js';
import { composeApp } from '../../src/server/compose.js';
import { createKeyService } from '../../src/services/key-service.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const TODAY = '/api/v1/prices/today';
const WWW_AUTHENTICATE = 'Bearer realm="pricepoint"';

interface Call {
  readonly headers?: Record<string, string>;
  /** Query string without `?`. */
  readonly query?: string;
  /** Client address; inject's default is 127.0.0.1. */
  readonly from?: string;
}

function getToday(h: Harness, { headers = {}, query, from }: Call = {}): Promise<LightMyRequestResponse> {
  return h.app.inject({
    method: 'GET',
    url: query === undefined ? TODAY : `${TODAY}?${query}`,
    headers,
    ...(from !== undefined && { remoteAddress: from }),
  });
}

/** The problem+json body of an error answer, after checking that it is one. */
function problem(response: LightMyRequestResponse): Record<string, unknown> {
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  const body = response.json() as Record<string, unknown>;
  assert.equal(body.status, response.statusCode);
  return body;
}

function assertRefused(
  response: LightMyRequestResponse,
  status: number,
  code: string,
): Record<string, unknown> {
  assert.equal(response.statusCode, status, response.body);
  const body = problem(response);
  assert.equal(body.code, code, response.body);
  return body;
}

/** The body without the one member that differs per request. */
function bodyWithoutRequestId(response: LightMyRequestResponse): Record<string, unknown> {
  const { requestId: _requestId, ...rest } = response.json() as Record<string, unknown>;
  return rest;
}

/** The headers without the request id and `date` (the HTTP layer's wall clock, not part of the answer). */
function headersWithoutRequestId(response: LightMyRequestResponse): Record<string, unknown> {
  const { 'x-request-id': _id, date: _date, ...rest } = response.headers;
  return rest;
}

/** A valid key with one character of its random part changed, so its checksum no longer matches. */
function withOneCharacterChanged(key: string): string {
  const at = 'pp_live_'.length + 5;
  const replacement = key[at] === 'A' ? 'B' : 'A';
  return key.slice(0, at) + replacement + key.slice(at + 1);
}

/** Counts the key-store lookups the app makes from now on; the real lookup still runs. */
function countLookups(h: Harness): { readonly count: number } {
  const keys = h.stores.keys;
  const original = keys.findByHash.bind(keys);
  const counter = { count: 0 };
  keys.findByHash = async (hash) => {
    counter.count += 1;
    return original(hash);
  };
  return counter;
}

describe('presenting a key', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness();
  });
  afterEach(() => h.close());

  test('a valid key is accepted in x-api-key and in Authorization: Bearer, whatever the case of the scheme', async () => {
    const { key } = await h.createKey();
    assert.equal((await getToday(h, { headers: { 'x-api-key': key } })).statusCode, 200);
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      const response = await getToday(h, { headers: { authorization: `${scheme} ${key}` } });
      assert.equal(response.statusCode, 200, `${scheme}: ${response.body}`);
    }
  });

  test('the demo key of the development data set works in both header forms', async () => {
    assert.equal((await getToday(h, { headers: { 'x-api-key': h.demoKey } })).statusCode, 200);
    assert.equal((await getToday(h, { headers: { authorization: `Bearer ${h.demoKey}` } })).statusCode, 200);
  });

  test('the same key in both headers is accepted', async () => {
    const { key } = await h.createKey();
    const response = await getToday(h, { headers: { 'x-api-key': key, authorization: `Bearer ${key}` } });
    assert.equal(response.statusCode, 200, response.body);
  });

  test('two different keys, one in each header, are refused with 401 conflicting_api_keys', async () => {
    const first = await h.createKey();
    const second = await h.createKey();
    const response = await getToday(h, {
      headers: { 'x-api-key': first.key, authorization: `Bearer ${second.key}` },
    });
    assertRefused(response, 401, 'conflicting_api_keys');
    assert.equal(response.headers['www-authenticate'], WWW_AUTHENTICATE);
  });
});

describe('refused keys', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness({ devData: false });
  });
  afterEach(() => h.close());

  test('a request without a key gets 401 missing_api_key with WWW-Authenticate: Bearer realm="pricepoint"', async () => {
    const response = await getToday(h);
    const body = assertRefused(response, 401, 'missing_api_key');
    assert.equal(response.headers['www-authenticate'], WWW_AUTHENTICATE);
    assert.match(String(body.detail), /x-api-key/);
  });

  test('malformed, mistyped, unknown, revoked and expired keys all get the same 401 invalid_api_key', async () => {
    const revoked = await h.createKey();
    const expiring = await h.createKey({ expiresAt: h.clock.now + 60_000 });
    const valid = await h.createKey();
    // Both work first, so they are also in the verified-key cache when they stop being valid.
    assert.equal((await getToday(h, { headers: { 'x-api-key': revoked.key } })).statusCode, 200);
    assert.equal((await getToday(h, { headers: { 'x-api-key': expiring.key } })).statusCode, 200);
    assert.equal(await h.stores.keys.revoke(revoked.id, h.clock.now), true);
    h.clock.advance(60_000);

    const presented = {
      malformed: 'not-a-pricepoint-key',
      'bad checksum': withOneCharacterChanged(valid.key),
      unknown: generateKey('live'),
      revoked: revoked.key,
      expired: expiring.key,
    };
    const responses = new Map<string, LightMyRequestResponse>();
    for (const [kind, key] of Object.entries(presented)) {
      const response = await getToday(h, { headers: { 'x-api-key': key } });
      assertRefused(response, 401, 'invalid_api_key');
      assert.equal(response.headers['www-authenticate'], WWW_AUTHENTICATE, kind);
      responses.set(kind, response);
    }
    const reference = responses.get('malformed')!;
    for (const [kind, response] of responses) {
      assert.deepEqual(bodyWithoutRequestId(response), bodyWithoutRequestId(reference), kind);
      assert.deepEqual(headersWithoutRequestId(response), headersWithoutRequestId(reference), kind);
    }
    // The comparison above is only meaningful if the key that was not changed still works.
    assert.equal((await getToday(h, { headers: { 'x-api-key': valid.key } })).statusCode, 200);
  });

  test('a revoked key is refused within 5 seconds, even while it is in the verified-key cache', async () => {
    const { key, id } = await h.createKey();
    assert.equal((await getToday(h, { headers: { 'x-api-key': key } })).statusCode, 200);
    await h.stores.keys.revoke(id, h.clock.now);
    h.clock.advance(5_000);
    assertRefused(await getToday(h, { headers: { 'x-api-key': key } }), 401, 'invalid_api_key');
  });

  test('a key works until the millisecond before it expires and is refused from its expiry on', async () => {
    const expiresAt = h.clock.now + 30_000;
    const { key } = await h.createKey({ expiresAt });
    h.clock.set(new Date(expiresAt - 1).toISOString());
    assert.equal((await getToday(h, { headers: { authorization: `Bearer ${key}` } })).statusCode, 200);
    h.clock.set(new Date(expiresAt).toISOString());
    assertRefused(await getToday(h, { headers: { authorization: `Bearer ${key}` } }), 401, 'invalid_api_key');
  });

  test('a key with one character changed fails its checksum and is refused without a key-store lookup', async () => {
    const { key } = await h.createKey();
    const lookups = countLookups(h);
    assertRefused(
      await getToday(h, { headers: { 'x-api-key': withOneCharacterChanged(key) } }),
      401,
      'invalid_api_key',
    );
    assert.equal(lookups.count, 0);
    // A well-formed key with a correct checksum does reach the store: the counter sees lookups.
    assertRefused(
      await getToday(h, { headers: { 'x-api-key': generateKey('live') } }),
      401,
      'invalid_api_key',
    );
    assert.equal(lookups.count, 1);
  });

  test('a key in the query string is refused with 401 api_key_in_query that says to use the header', async () => {
    const { key } = await h.createKey();
    const queries = [
      `api_key=${key}`,
      `apikey=${key}`,
      `access_token=${key}`,
      'token=anything',
      // A value that looks like a key is refused under any parameter name.
      `symbols=${key}`,
      'q=pp_test_abc',
      // Names are compared without case and after decoding, whatever spells them.
      `API_KEY=${key}`,
      `%61pi_key=${key}`,
      `api%5Fkey=${key}`,
      'To%6Ben=anything',
      `\u212Aey=${key}`,
      `q=pp%5Ftest%5Fabc`,
    ];
    // Each refusal counts as a failed login: every query comes from an address of its own, so the
    // address' budget of 20 a minute is never what answers.
    for (const [i, query] of queries.entries()) {
      for (const headers of [{}, { 'x-api-key': key }] as Record<string, string>[]) {
        const response = await getToday(h, { query, headers, from: `10.9.0.${i + 1}` });
        const body = assertRefused(response, 401, 'api_key_in_query');
        assert.match(String(body.detail), /x-api-key/, query);
        assert.match(String(body.detail), /Authorization: Bearer/, query);
        assert.equal(response.headers['www-authenticate'], WWW_AUTHENTICATE);
      }
    }
  });

  test('a key used as the name of a query parameter is refused as a key in the query string', async () => {
    const { key } = await h.createKey();
    for (const headers of [{}, { 'x-api-key': key }] as Record<string, string>[]) {
      const response = await getToday(h, { query: `${key}=1`, headers });
      assertRefused(response, 401, 'api_key_in_query');
      assert.ok(!response.body.includes(key.slice('pp_live_'.length)), 'the answer does not echo the key');
    }
  });
});

describe('failed authentications are limited per client address', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness({ devData: false });
  });
  afterEach(() => h.close());

  async function failFrom(address: string, times: number): Promise<void> {
    for (let i = 0; i < times; i++) {
      const response = await getToday(h, { headers: { 'x-api-key': generateKey('live') }, from: address });
      assertRefused(response, 401, 'invalid_api_key');
    }
  }

  test('after 20 failures in a minute the address gets 429 too_many_auth_failures, even with a valid key, until the minute is over', async () => {
    assert.equal(h.config.authFailuresPerMinute, 20);
    const { key } = await h.createKey();
    const attacker = '198.51.100.7';
    await failFrom(attacker, 20);

    // 10:15:03.120 now: the budget's window ends at 10:16:00.
    const lookups = countLookups(h);
    const refused = await getToday(h, { headers: { 'x-api-key': key }, from: attacker });
    assertRefused(refused, 429, 'too_many_auth_failures');
    assert.equal(refused.headers['retry-after'], '57');
    assert.equal(lookups.count, 0, 'refused before any key lookup');

    const neighbour = await getToday(h, { headers: { 'x-api-key': key }, from: '198.51.100.8' });
    assert.equal(neighbour.statusCode, 200, 'another address is unaffected');

    h.clock.advance(56_000);
    const stillRefused = await getToday(h, { headers: { 'x-api-key': key }, from: attacker });
    assertRefused(stillRefused, 429, 'too_many_auth_failures');
    assert.equal(stillRefused.headers['retry-after'], '1');

    h.clock.advance(1_000);
    const accepted = await getToday(h, { headers: { 'x-api-key': key }, from: attacker });
    assert.equal(accepted.statusCode, 200, accepted.body);
  });

  test('IPv6 addresses in the same /64 share one budget; the next /64 has its own', async () => {
    const { key } = await h.createKey();
    await failFrom('2001:db8:1:2::1', 10);
    await failFrom('2001:db8:1:2:ffff:ffff:ffff:fffe', 10);
    const sameNetwork = await getToday(h, { headers: { 'x-api-key': key }, from: '2001:db8:1:2:abcd::7' });
    assertRefused(sameNetwork, 429, 'too_many_auth_failures');
    const nextNetwork = await getToday(h, { headers: { 'x-api-key': key }, from: '2001:db8:1:3::1' });
    assert.equal(nextNetwork.statusCode, 200, nextNetwork.body);
  });

  test('requests without any key are not counted as failures (a misconfigured client is not a guesser)', async () => {
    const { key } = await h.createKey();
    const client = '192.0.2.44';
    for (let i = 0; i < 30; i++) assertRefused(await getToday(h, { from: client }), 401, 'missing_api_key');
    assert.equal((await getToday(h, { headers: { 'x-api-key': key }, from: client })).statusCode, 200);

    // The same address is limited as soon as it presents bad keys.
    await failFrom(client, 20);
    assertRefused(await getToday(h, { from: client }), 429, 'too_many_auth_failures');
  });

  test('401 answers take nothing from the quota of the key they name', async () => {
    const { key } = await h.createKey();
    const other = await h.createKey();
    const first = await getToday(h, { headers: { 'x-api-key': key } });
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers['x-ratelimit-remaining'], '59');

    const refusals = [
      await getToday(h, { headers: { 'x-api-key': key, authorization: `Bearer ${other.key}` } }),
      await getToday(h, { headers: { 'x-api-key': key }, query: `api_key=${key}` }),
      await getToday(h, { headers: { authorization: `Bearer ${key}` }, query: 'token=x' }),
    ];
    for (const response of refusals) {
      assert.equal(response.statusCode, 401, response.body);
      assert.equal(response.headers['x-ratelimit-remaining'], undefined, 'a 401 shows no quota');
    }

    const next = await getToday(h, { headers: { 'x-api-key': key } });
    assert.equal(next.headers['x-ratelimit-remaining'], '58');
  });
});

describe('stored keys', () => {
  test('the database holds the SHA-256 of a key and its last four characters, never the key', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'pricepoint-keys-'));
    const path = join(dir, 'pricepoint.db');
    const stores = await openEmbeddedStores(path);
    const config = loadConfig({ PRICEPOINT_LOG_LEVEL: 'silent' }, { databasePath: path });
    const clock = () => Date.parse('2026-11-22T10:15:03.120Z');
    const keys = createKeyService({ keys: stores.keys, tiers: config.tiers, keySecret: undefined, clock });
    const { key, record } = await keys.create({ name: 'storage check', tier: 'free' });
    const app = (await composeApp(config, { stores, clock })).app;
    await app.ready();
    const raw = new SQLite(path, { readonly: true });
    t.after(async () => {
      raw.close();
      await app.close();
      await stores.close();
      await rm(dir, { recursive: true, force: true });
    });

    const answer = await app.inject({ url: TODAY, headers: { 'x-api-key': key } });
    assert.equal(answer.statusCode, 200, 'the stored form is enough to authenticate');

    const row = raw.prepare('select * from api_keys where id = ?').get(record.id) as Record<string, unknown>;
    assert.equal(row.hash, createHash('sha256').update(key).digest('hex'));
    assert.equal(row.last4, key.slice(-4));

    const secretPart = key.slice('pp_live_'.length);
    const tables = raw.prepare("select name from sqlite_master where type = 'table'").all() as {
      name: string;
    }[];
    for (const { name } of tables) {
      for (const cells of raw.prepare(`select * from "${name}"`).all() as Record<string, unknown>[]) {
        for (const [column, value] of Object.entries(cells)) {
          assert.ok(!String(value).includes(secretPart), `${name}.${column} holds the key`);
        }
      }
    }
    for (const file of [path, `${path}-wal`].filter((f) => existsSync(f))) {
      assert.ok(!(await readFile(file)).includes(secretPart), `${file} holds the key`);
    }
  });

  test('with PRICEPOINT_KEY_SECRET the stored hash is an HMAC of the key, and the key still works', async (t) => {
    const secret = 'a-server-secret-for-tests';
    const h = await createHarness({ devData: false, env: { PRICEPOINT_KEY_SECRET: secret } });
    t.after(() => h.close());
    const { key, id } = await h.createKey();

    const stored = await h.stores.keys.get(id);
    assert.equal(stored?.hash, createHmac('sha256', secret).update(key).digest('hex'));
    assert.notEqual(stored?.hash, createHash('sha256').update(key).digest('hex'));

    assert.equal((await getToday(h, { headers: { 'x-api-key': key } })).statusCode, 200);
    assert.equal((await getToday(h, { headers: { authorization: `Bearer ${key}` } })).statusCode, 200);
  });
});
