/**
 * The admin API for keys (docs/using-the-api.md "Admin API", docs/keys-and-tiers.md, docs/errors.md): create, list, show, revoke
 * and rotate, for admin keys only. Per route the happy, error and security cases; across all of
 * them, no answer but create and rotate ever carries a key, and none carries a hash.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { DEFAULT_TIERS, type Tier } from '../../src/domain/limits/tiers.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const TODAY = '/api/v1/prices/today?symbols=NO1';
const KEY_LIKE = /pp_(?:live|test|demo)_[0-9A-Za-z]+/;
const HASH_LIKE = /[0-9a-f]{64}/;

interface View {
  id: string;
  last4: string;
  name: string;
  tier: string;
  scopes: string[];
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
}
type Created = View & { key: string };
type Rotated = Created & { previous: View };

let h: Harness;
let admin: string;
/** Every key any test saw in clear: no later answer may contain one. */
const seenKeys: string[] = [];

function call(method: 'GET' | 'POST' | 'DELETE', url: string, key: string | undefined, payload?: object) {
  return h.app.inject({
    method,
    url,
    headers: key === undefined ? {} : { 'x-api-key': key },
    ...(payload !== undefined && { payload }),
  });
}

/** A body that may not contain any key or hash (everything but create and rotate). */
function assertNoSecrets(response: LightMyRequestResponse, what: string): void {
  assert.doesNotMatch(response.body, KEY_LIKE, `${what}: no key in the body`);
  assert.doesNotMatch(response.body, HASH_LIKE, `${what}: no hash in the body`);
  for (const key of seenKeys) assert.equal(response.body.includes(key), false, `${what}: no key seen before`);
}

async function create(body: object): Promise<Created> {
  const response = await call('POST', '/api/v1/keys', admin, body);
  assert.equal(response.statusCode, 201, response.body);
  const created = response.json() as Created;
  seenKeys.push(created.key);
  return created;
}

/** The operator's tier: roomy enough that this file's requests are never rate limited. */
const OPS: Tier = {
  name: 'ops',
  limits: [{ name: 'minute', limit: 100_000, windowSeconds: 60 }],
  countPer: 'key',
  kinds: null,
  historyDays: null,
  streams: 3,
};

before(async () => {
  h = await createHarness({ config: { tiers: { ...DEFAULT_TIERS, ops: OPS } } });
  const made = await h.createKey({ name: 'operator', tier: 'ops', scopes: ['admin'] });
  admin = made.key;
  seenKeys.push(admin, h.demoKey);
});
after(() => h.close());

describe('POST /api/v1/keys', () => {
  test('creates a key, shown once in the 201 answer, that works at once', async () => {
    const response = await call('POST', '/api/v1/keys', admin, {
      name: 'dashboard',
      tier: 'free',
      scopes: ['read', 'write'],
      expiresAt: '2030-01-01T01:00:00+01:00',
    });
    assert.equal(response.statusCode, 201, response.body);
    assert.equal(response.headers['cache-control'], 'no-store');
    const created = response.json() as Created & Record<string, unknown>;
    seenKeys.push(created.key);
    assert.match(created.key, /^pp_live_[0-9A-Za-z]{28,}$/);
    assert.match(created.id, /^key_[0-9A-Za-z]+$/);
    assert.equal(created.last4, created.key.slice(-4));
    assert.equal(created.name, 'dashboard');
    assert.equal(created.tier, 'free');
    assert.deepEqual(created.scopes, ['read', 'write']);
    assert.equal(created.expiresAt, '2030-01-01T00:00:00.000Z', 'the offset is applied, the answer is UTC');
    assert.equal(created.createdAt, new Date(h.clock.now).toISOString());
    assert.equal(created.revokedAt, null);
    assert.equal('hash' in created, false, 'no hash property');
    assert.doesNotMatch(response.body, HASH_LIKE);

    const use = await call('GET', TODAY, created.key);
    assert.equal(use.statusCode, 200, use.body);
  });

  test('defaults to the read scope and no expiry', async () => {
    const created = await create({ name: 'reader', tier: 'free' });
    assert.deepEqual(created.scopes, ['read']);
    assert.equal(created.expiresAt, null);
  });

  test('a bad body is a 400 invalid_parameter naming the field, and creates nothing', async () => {
    const before = ((await call('GET', '/api/v1/keys', admin)).json() as View[]).length;
    const cases: [object, string][] = [
      [{ tier: 'free' }, 'name'],
      [{ name: 'x' }, 'tier'],
      [{ name: '', tier: 'free' }, 'name'],
      [{ name: 'x', tier: 'gold' }, 'tier'],
      [{ name: 'x', tier: 'free', scopes: ['read', 'root'] }, 'scopes'],
      [{ name: 'x', tier: 'free', scopes: [] }, 'scopes'],
      [{ name: 'x', tier: 'free', expiresAt: 'next week' }, 'expiresAt'],
      [{ name: 'x', tier: 'free', expiresAt: '2030-02-30T00:00:00Z' }, 'expiresAt'],
      [{ name: 'x', tier: 'free', expiresAt: '2020-01-01T00:00:00Z' }, 'expiresAt'],
      [{ name: 'x', tier: 'free', key: 'pp_live_mine' }, 'key'],
      [{ name: 'x', tier: 'free', hash: 'abc' }, 'hash'],
    ];
    for (const [body, field] of cases) {
      const response = await call('POST', '/api/v1/keys', admin, body);
      assert.equal(response.statusCode, 400, `${JSON.stringify(body)}: ${response.body}`);
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
      const problem = response.json() as { code: string; parameter: string; detail: string };
      assert.equal(problem.code, 'invalid_parameter');
      assert.equal(problem.parameter, field, `${JSON.stringify(body)} names ${field}: ${problem.detail}`);
      assertNoSecrets(response, JSON.stringify(body));
    }
    const afterwards = ((await call('GET', '/api/v1/keys', admin)).json() as View[]).length;
    assert.equal(afterwards, before, 'no key was created');
  });

  test('a body that is not JSON is refused', async () => {
    const response = await h.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: { 'x-api-key': admin, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=x&tier=free',
    });
    assert.equal(response.statusCode, 415, response.body);
    assert.equal((response.json() as { code: string }).code, 'unsupported_media_type');
  });
});

describe('GET /api/v1/keys and GET /api/v1/keys/{id}', () => {
  test('list every key and one key, without any key or hash', async () => {
    const mine = await create({ name: 'listed', tier: 'pro', scopes: ['write'] });
    const list = await call('GET', '/api/v1/keys', admin);
    assert.equal(list.statusCode, 200, list.body);
    assert.equal(list.headers['cache-control'], 'no-store');
    assertNoSecrets(list, 'list');
    const views = list.json() as (View & Record<string, unknown>)[];
    const listed = views.find((k) => k.id === mine.id);
    assert.ok(listed, `${mine.id} is listed`);
    assert.equal(listed.last4, mine.key.slice(-4));
    assert.ok(
      views.every((k) => !('hash' in k) && !('key' in k)),
      'no hash or key property',
    );
    assert.ok(
      views.some((k) => k.tier === 'demo'),
      'the demo key of the development data is listed too',
    );

    const one = await call('GET', `/api/v1/keys/${mine.id}`, admin);
    assert.equal(one.statusCode, 200, one.body);
    assertNoSecrets(one, 'show');
    const { key: _key, ...view } = mine;
    assert.deepEqual(one.json(), view);
  });

  test('an unknown id is a 404 not_found', async () => {
    const response = await call('GET', '/api/v1/keys/key_doesNotExist', admin);
    assert.equal(response.statusCode, 404, response.body);
    assert.equal((response.json() as { code: string }).code, 'not_found');
    assertNoSecrets(response, 'unknown id');
  });

  test('an unknown query parameter is a 400 naming it', async () => {
    const response = await call('GET', '/api/v1/keys?all=1', admin);
    assert.equal(response.statusCode, 400, response.body);
    assert.equal((response.json() as { parameter: string }).parameter, 'all');
  });
});

describe('DELETE /api/v1/keys/{id}', () => {
  test('revokes: 200 with the revoked view, and the key is refused from then on', async () => {
    const victim = await create({ name: 'victim', tier: 'free' });
    assert.equal((await call('GET', TODAY, victim.key)).statusCode, 200, 'works before');
    const response = await call('DELETE', `/api/v1/keys/${victim.id}`, admin);
    assert.equal(response.statusCode, 200, response.body);
    assertNoSecrets(response, 'revoke');
    const revoked = response.json() as View;
    assert.equal(revoked.id, victim.id);
    assert.equal(revoked.revokedAt, new Date(h.clock.now).toISOString());

    // This instance forgets its cached copy at once; no clock advance is needed.
    const refused = await call('GET', TODAY, victim.key);
    assert.equal(refused.statusCode, 401, refused.body);
    assert.equal((refused.json() as { code: string }).code, 'invalid_api_key');

    const again = await call('DELETE', `/api/v1/keys/${victim.id}`, admin);
    assert.equal(again.statusCode, 200, 'revoking twice is harmless');
    assert.equal((again.json() as View).revokedAt, revoked.revokedAt, 'and keeps the first time');
  });

  test('an unknown id is a 404 not_found', async () => {
    const response = await call('DELETE', '/api/v1/keys/key_doesNotExist', admin);
    assert.equal(response.statusCode, 404, response.body);
    assert.equal((response.json() as { code: string }).code, 'not_found');
  });
});

describe('POST /api/v1/keys/{id}/rotate', () => {
  test('issues a new key with the same name, tier, scopes and expiry; the old one lives for the grace period', async () => {
    const old = await create({
      name: 'importer',
      tier: 'pro',
      scopes: ['read', 'write'],
      expiresAt: '2030-01-01T00:00:00Z',
    });
    const response = await call('POST', `/api/v1/keys/${old.id}/rotate`, admin, { graceSeconds: 600 });
    assert.equal(response.statusCode, 201, response.body);
    assert.doesNotMatch(response.body, HASH_LIKE);
    assert.equal(response.body.includes(old.key), false, 'the old key is not shown again');
    const rotated = response.json() as Rotated;
    seenKeys.push(rotated.key);
    assert.notEqual(rotated.id, old.id);
    assert.notEqual(rotated.key, old.key);
    assert.equal(rotated.name, 'importer');
    assert.equal(rotated.tier, 'pro');
    assert.deepEqual(rotated.scopes, ['read', 'write']);
    assert.equal(rotated.expiresAt, '2030-01-01T00:00:00.000Z');
    assert.equal(rotated.previous.id, old.id);
    assert.equal(rotated.previous.expiresAt, new Date(h.clock.now + 600_000).toISOString());
    assert.equal(rotated.previous.revokedAt, null);

    assert.equal((await call('GET', TODAY, rotated.key)).statusCode, 200, 'the new key works at once');
    assert.equal((await call('GET', TODAY, old.key)).statusCode, 200, 'the old key works in the grace');
    h.clock.advance(599_000);
    assert.equal((await call('GET', TODAY, old.key)).statusCode, 200, 'still, one second before its end');
    h.clock.advance(1_000);
    const late = await call('GET', TODAY, old.key);
    assert.equal(late.statusCode, 401, `the old key is refused when the grace ends: ${late.body}`);
    assert.equal((late.json() as { code: string }).code, 'invalid_api_key');
    assert.equal((await call('GET', TODAY, rotated.key)).statusCode, 200, 'the new key still works');
  });

  test('without a body the grace is 24 hours; an earlier expiry of the old key is kept', async () => {
    const plain = await create({ name: 'plain', tier: 'free' });
    const response = await call('POST', `/api/v1/keys/${plain.id}/rotate`, admin);
    assert.equal(response.statusCode, 201, response.body);
    const rotated = response.json() as Rotated;
    seenKeys.push(rotated.key);
    assert.equal(rotated.previous.expiresAt, new Date(h.clock.now + 86_400_000).toISOString());

    const soon = new Date(h.clock.now + 3_600_000).toISOString();
    const brief = await create({ name: 'brief', tier: 'free', expiresAt: soon });
    const again = await call('POST', `/api/v1/keys/${brief.id}/rotate`, admin, { graceSeconds: 86_400 });
    assert.equal(again.statusCode, 201, again.body);
    const second = again.json() as Rotated;
    seenKeys.push(second.key);
    assert.equal(second.previous.expiresAt, soon, 'a grace never extends a key');
    assert.equal(second.expiresAt, soon, 'the new key keeps the expiry');
  });

  test('a revoked or unknown key is not rotated; a bad grace is a 400 naming graceSeconds', async () => {
    const gone = await create({ name: 'gone', tier: 'free' });
    await call('DELETE', `/api/v1/keys/${gone.id}`, admin);
    const revoked = await call('POST', `/api/v1/keys/${gone.id}/rotate`, admin, {});
    assert.equal(revoked.statusCode, 400, revoked.body);
    assert.equal((revoked.json() as { code: string }).code, 'invalid_parameter');
    assert.match((revoked.json() as { detail: string }).detail, /revoked/);
    assertNoSecrets(revoked, 'rotate revoked');

    const unknown = await call('POST', '/api/v1/keys/key_doesNotExist/rotate', admin, {});
    assert.equal(unknown.statusCode, 404, unknown.body);

    const live = await create({ name: 'live', tier: 'free' });
    for (const graceSeconds of [-1, 1.5, '60', 31 * 86_400]) {
      const bad = await call('POST', `/api/v1/keys/${live.id}/rotate`, admin, { graceSeconds });
      assert.equal(bad.statusCode, 400, `${graceSeconds}: ${bad.body}`);
      assert.equal((bad.json() as { parameter: string }).parameter, 'graceSeconds');
    }
    const listed = (await call('GET', '/api/v1/keys', admin)).json() as View[];
    assert.equal(
      listed.filter((k) => k.name === 'live').length,
      1,
      'no key was issued by a refused rotation',
    );
  });
});

describe('security: only admin keys reach the admin API', () => {
  const routes: ['GET' | 'POST' | 'DELETE', string, object?][] = [
    ['POST', '/api/v1/keys', { name: 'x', tier: 'free' }],
    ['GET', '/api/v1/keys'],
    ['GET', '/api/v1/keys/key_any'],
    ['DELETE', '/api/v1/keys/key_any'],
    ['POST', '/api/v1/keys/key_any/rotate', {}],
  ];

  test('a missing key is a 401 missing_api_key, before the body is looked at', async () => {
    for (const [method, url, body] of routes) {
      const response = await call(
        method,
        url,
        undefined,
        body ?? (method === 'POST' ? { bad: 1 } : undefined),
      );
      assert.equal(response.statusCode, 401, `${method} ${url}: ${response.body}`);
      assert.equal((response.json() as { code: string }).code, 'missing_api_key');
      assert.equal(response.headers['www-authenticate'], 'Bearer realm="pricepoint"');
    }
  });

  test('an invalid, revoked or expired key is a 401 invalid_api_key', async () => {
    const revoked = await create({ name: 'revoked admin', tier: 'pro', scopes: ['admin'] });
    await call('DELETE', `/api/v1/keys/${revoked.id}`, admin);
    const expiring = await create({
      name: 'expiring admin',
      tier: 'pro',
      scopes: ['admin'],
      expiresAt: new Date(h.clock.now + 60_000).toISOString(),
    });
    h.clock.advance(60_000);
    for (const key of ['pp_live_notAKeyAtAll', revoked.key, expiring.key]) {
      for (const [method, url, body] of routes) {
        const response = await call(method, url, key, body);
        assert.equal(response.statusCode, 401, `${method} ${url}: ${response.body}`);
        assert.equal((response.json() as { code: string }).code, 'invalid_api_key');
        assertNoSecrets(response, `${method} ${url}`);
      }
    }
  });

  test('read and write keys are a 403 insufficient_scope on every route, and change nothing', async () => {
    const reader = await create({ name: 'reader', tier: 'ops', scopes: ['read'] });
    const writer = await create({ name: 'writer', tier: 'ops', scopes: ['read', 'write'] });
    const target = await create({ name: 'target', tier: 'free' });
    const targeted = routes.map(
      ([method, url, body]) => [method, url.replace('key_any', target.id), body] as const,
    );
    for (const key of [reader.key, writer.key, h.demoKey]) {
      for (const [method, url, body] of targeted) {
        const response = await call(method, url, key, body);
        assert.equal(response.statusCode, 403, `${method} ${url}: ${response.body}`);
        const problem = response.json() as { code: string; requiredScope: string };
        assert.equal(problem.code, 'insufficient_scope');
        assert.equal(problem.requiredScope, 'admin');
        assertNoSecrets(response, `${method} ${url}`);
      }
    }
    const after = (await call('GET', `/api/v1/keys/${target.id}`, admin)).json() as View;
    assert.equal(after.revokedAt, null, 'the target was not revoked');
    assert.equal(after.expiresAt, null, 'nor rotated');
  });

  test('no log line carries a key or a hash', () => {
    for (const line of h.rawLogs) {
      assert.doesNotMatch(line, KEY_LIKE, line);
      assert.doesNotMatch(line, HASH_LIKE, line);
    }
  });
});
