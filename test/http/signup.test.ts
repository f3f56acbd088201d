/**
 * Open sign-up over real HTTPS (docs/invitations.md "Open sign-up"): off by default (403
 * signup_closed); on, it makes keys of its one tier, so many per client address and window (429
 * rate_limited with Retry-After past them), counted in the rate-limit store so every instance
 * sharing it (Redis when scaled out) holds the same count; bad input is problem+json and counts nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { SignupRules } from '../../src/domain/keys/signup-rules.js';
import { composeApp } from '../../src/server/compose.js';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';

const RULES: SignupRules = {
  tier: 'free',
  scopes: ['read'],
  perAddress: { limit: 2, windowSeconds: 3600 },
  keyExpiresInMs: 30 * 86_400_000,
};

interface Made {
  key: string;
  id: string;
  name: string;
  tier: string;
  scopes: string[];
  expiresAt: string | null;
  createdAt: string;
}

function problem(
  response: { status: number; headers: Record<string, unknown>; text: string },
  status: number,
  code: string,
) {
  assert.equal(response.status, status, response.text);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  const body = JSON.parse(response.text) as Record<string, unknown>;
  assert.equal(body.code, code, response.text);
  return body;
}

describe('open sign-up, off', () => {
  let h: Harness;
  let server: Awaited<ReturnType<typeof listenHttps>>;
  before(async () => {
    h = await createHarness({ https: true });
    server = await listenHttps(h);
  });
  after(async () => {
    await server.close();
    await h.close();
  });

  test('is refused with 403 signup_closed and makes no key', async () => {
    const before = (await h.services.keys.list()).length;
    const response = await server.request('POST', '/api/v1/signup', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'hopeful' }),
    });
    const body = problem(response, 403, 'signup_closed');
    assert.match(String(body.detail), /invitation/);
    assert.equal((await h.services.keys.list()).length, before);
    const entries = (await h.stores.audit?.list({ limit: 100 })) ?? [];
    assert.equal(entries.filter((e) => e.action === 'signup').length, 0, 'a refusal is no entry');
  });
});

describe('open sign-up, on for the free tier', () => {
  let h: Harness;
  let server: Awaited<ReturnType<typeof listenHttps>>;
  const made: string[] = [];

  before(async () => {
    h = await createHarness({
      https: true,
      env: { PRICEPOINT_TRUST_PROXY: '127.0.0.1' },
      config: { signup: RULES },
    });
    server = await listenHttps(h);
  });
  after(async () => {
    await server.close();
    await h.close();
  });

  async function signup(body: unknown, from: string, raw?: string) {
    const response = await server.request('POST', '/api/v1/signup', {
      headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
      body: raw ?? JSON.stringify(body),
    });
    if (response.status === 201) made.push((JSON.parse(response.text) as Made).key);
    return response;
  }

  test('makes a key of the tier, with its expiry, shown once, that reads prices at once', async () => {
    const response = await signup({ name: 'weekend project' }, '192.0.2.10');
    assert.equal(response.status, 201, response.text);
    assert.equal(response.headers['cache-control'], 'no-store');
    const key = JSON.parse(response.text) as Made;
    assert.match(key.key, /^pp_live_/);
    assert.deepEqual(
      { name: key.name, tier: key.tier, scopes: key.scopes },
      { name: 'weekend project', tier: 'free', scopes: ['read'] },
    );
    assert.equal(Date.parse(key.expiresAt ?? '') - Date.parse(key.createdAt), RULES.keyExpiresInMs);
    const prices = await server.get('/api/v1/prices/today?symbols=NO1', { 'x-api-key': key.key });
    assert.equal(prices.status, 200, prices.text);
    const entry = (await h.stores.audit?.list({ limit: 100, action: 'signup' }))?.[0];
    assert.deepEqual(
      {
        actor: entry?.actor,
        target: entry?.target,
        keyId: entry?.keyId,
        address: entry?.address,
        status: entry?.status,
      },
      { actor: 'anonymous', target: key.id, keyId: key.id, address: '192.0.2.10', status: 201 },
    );
    assert.equal(JSON.stringify(entry).includes(key.key), false, 'never the key');
  });

  test('an address gets its limit of keys per window, then 429 with Retry-After; other addresses are not held', async () => {
    const from = '192.0.2.20';
    assert.equal((await signup({ name: 'one' }, from)).status, 201);
    assert.equal((await signup({ name: 'two' }, from)).status, 201);
    const refused = await signup({ name: 'three' }, from);
    const body = problem(refused, 429, 'rate_limited');
    assert.deepEqual(body['violated-policies'], ['signup']);
    const wait = Number(refused.headers['retry-after']);
    assert.ok(wait >= 1 && wait <= 3600, `Retry-After ${wait}`);
    // IPv6 neighbours in one /64 count as one address, as for the failed-login budget.
    assert.equal((await signup({ name: 'v6 a' }, '2001:db8:1:2::1')).status, 201);
    assert.equal((await signup({ name: 'v6 b' }, '2001:db8:1:2::2')).status, 201);
    problem(await signup({ name: 'v6 c' }, '2001:db8:1:2::3'), 429, 'rate_limited');
    assert.equal((await signup({ name: 'elsewhere' }, '192.0.2.21')).status, 201);
    // The next window lets the address in again.
    h.clock.advance(wait * 1000);
    assert.equal((await signup({ name: 'next window' }, from)).status, 201);
  });

  test('bad input is a 400 and takes nothing from the address', async () => {
    const from = '192.0.2.30';
    for (const [body, raw] of [
      [{}, undefined],
      [{ name: '' }, undefined],
      [{ name: 'x'.repeat(201) }, undefined],
      [{ name: 'line\nfeed' }, undefined],
      [{ name: `holds ${made[0]}` }, undefined],
      [{ name: 'ok', tier: 'enterprise' }, undefined],
      [{ name: 7 }, undefined],
      [undefined, '{"name":'],
      [undefined, '[]'],
    ] as const) {
      const response = await signup(body, from, raw);
      problem(response, 400, 'invalid_parameter');
      for (const key of made) assert.equal(response.text.includes(key), false, 'no key echoed');
    }
    assert.equal((await signup({ name: 'first' }, from)).status, 201);
    assert.equal((await signup({ name: 'second' }, from)).status, 201);
  });
});

test('the per-address count is kept in the rate-limit store, so two instances sharing it share the count', async () => {
  const h = await createHarness({ config: { signup: RULES } });
  // A second app over the same stores: as two instances over one PostgreSQL and one Redis.
  const { app: second } = await composeApp(h.config, { stores: h.stores, clock: h.clock.read });
  try {
    const ask = (app: typeof second, name: string) =>
      app.inject({ method: 'POST', url: '/api/v1/signup', remoteAddress: '192.0.2.50', payload: { name } });
    assert.equal((await ask(h.app, 'on the first')).statusCode, 201);
    assert.equal((await ask(second, 'on the second')).statusCode, 201);
    const third = await ask(h.app, 'one too many');
    assert.equal(third.statusCode, 429, third.body);
    assert.equal((third.json() as { code: string }).code, 'rate_limited');
  } finally {
    await second.close();
    await h.close();
  }
});
