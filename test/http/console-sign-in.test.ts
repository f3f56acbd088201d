/**
 * The console's sign-in over real HTTPS (docs/audit.md, "Console sign-ins"): an admin key learns who it
 * is and leaves a `console.sign_in` entry with its address and outcome; a non-admin key is refused and
 * recorded with its id; a wrong key is refused and recorded as `anonymous`, never with the key, and
 * only as often as the failed-login budget allows; bad input is problem+json.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';

const BUDGET = 3;

interface Entry {
  actor: string;
  address: string | null;
  action: string;
  target: string | null;
  outcome: { status: number | null; code: string | null };
}

let h: Harness;
let client: Awaited<ReturnType<typeof listenHttps>>;
let admin: { key: string; id: string };

const signIn = (headers: Record<string, string>, body?: string, path = '/api/v1/console/sign-in') =>
  client.request('POST', path, {
    headers: { ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    ...(body !== undefined && { body }),
  });
const entries = async (query = 'action=console.sign_in') => {
  const answer = await client.get(`/api/v1/audit?${query}`, { 'x-api-key': admin.key });
  assert.equal(answer.status, 200, answer.text);
  return (JSON.parse(answer.text) as { entries: Entry[] }).entries;
};

before(async () => {
  h = await createHarness({ https: true, env: { PRICEPOINT_AUTH_FAILURES_PER_MINUTE: String(BUDGET) } });
  client = await listenHttps(h, 4);
  admin = await h.createKey({
    name: 'operator',
    tier: 'enterprise',
    scopes: ['admin'],
    expiresAt: Date.parse('2027-01-01T00:00:00Z'),
  });
});
after(async () => {
  await client.close();
  await h.close();
});

test('an admin key learns who it is, and the sign-in is in the audit log with its address', async () => {
  const answer = await signIn({ 'x-api-key': admin.key });
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.headers['cache-control'], 'no-store');
  assert.deepEqual(JSON.parse(answer.text), {
    id: admin.id,
    name: 'operator',
    tier: 'enterprise',
    scopes: ['admin'],
    expiresAt: '2027-01-01T00:00:00.000Z',
  });
  // With a Bearer header and an empty object the same.
  const bearer = await signIn({ authorization: `Bearer ${admin.key}` }, '{}');
  assert.equal(bearer.status, 200, bearer.text);
  const [last, first] = await entries();
  for (const entry of [first, last]) {
    assert.deepEqual(entry, {
      ...entry,
      actor: admin.id,
      address: '127.0.0.1',
      action: 'console.sign_in',
      target: admin.id,
      outcome: { status: 200, code: null },
    });
  }
});

test('a key without the admin scope is refused and recorded with its id', async () => {
  const reader = await h.createKey({ name: 'customer', tier: 'pro', scopes: ['read', 'write'] });
  const answer = await signIn({ 'x-api-key': reader.key });
  assert.equal(answer.status, 403);
  assert.equal(JSON.parse(answer.text).code, 'insufficient_scope');
  const [entry] = await entries(`actor=${reader.id}`);
  assert.deepEqual(entry?.outcome, { status: 403, code: 'insufficient_scope' });
  assert.equal(entry?.action, 'console.sign_in');
});

test('a wrong key is recorded as anonymous, never the key, and no more often than the failed-login budget', async () => {
  h.clock.advance(60_000); // a fresh budget window
  const wrong = 'pp_live_WrongKeyTypedIntoTheConsole00000000';
  const statuses: number[] = [];
  for (let n = 0; n < BUDGET + 3; n++) statuses.push((await signIn({ 'x-api-key': wrong })).status);
  assert.deepEqual(statuses, [401, 401, 401, 429, 429, 429]);
  // No key at all: a misconfigured client, not a guess; not counted, so not recorded.
  h.clock.advance(60_000);
  assert.equal((await signIn({})).status, 401);
  const unknown = await entries('actor=anonymous');
  assert.equal(unknown.length, BUDGET);
  for (const entry of unknown) {
    assert.deepEqual(entry, {
      ...entry,
      actor: 'anonymous',
      address: '127.0.0.1',
      action: 'console.sign_in',
      target: null,
      outcome: { status: 401, code: 'invalid_api_key' },
    });
  }
  const table = JSON.stringify(await h.stores.audit?.list({ limit: 1000 }));
  assert.ok(!table.includes('WrongKeyTypedIntoTheConsole'), 'the wrong key is nowhere in the log');
  assert.ok(!table.includes(admin.key.slice(8)), 'nor the admin key');
});

test('bad input is a problem, never a 500', async () => {
  h.clock.advance(60_000);
  const cases: [Record<string, string>, string | undefined, string, number, string][] = [
    [{}, '{"remember": true}', '/api/v1/console/sign-in', 400, 'invalid_parameter'],
    [{}, '{', '/api/v1/console/sign-in', 400, 'invalid_parameter'],
    [{}, '[]', '/api/v1/console/sign-in', 400, 'invalid_parameter'],
    [{ 'content-type': 'text/plain' }, 'hello', '/api/v1/console/sign-in', 400, 'invalid_parameter'],
    [
      { 'content-type': 'application/xml' },
      '<in/>',
      '/api/v1/console/sign-in',
      415,
      'unsupported_media_type',
    ],
    [{}, undefined, '/api/v1/console/sign-in?next=/console', 400, 'invalid_parameter'],
    [{}, JSON.stringify({ pad: 'x'.repeat(2_000_000) }), '/api/v1/console/sign-in', 413, 'payload_too_large'],
  ];
  for (const [headers, body, path, status, code] of cases) {
    const answer = await signIn({ 'x-api-key': admin.key, ...headers }, body, path);
    assert.equal(answer.status, status, `${path} ${body?.slice(0, 30)}: ${answer.text}`);
    assert.match(String(answer.headers['content-type']), /^application\/problem\+json/);
    assert.equal(JSON.parse(answer.text).code, code);
  }
  const get = await client.get('/api/v1/console/sign-in', { 'x-api-key': admin.key });
  assert.equal(get.status, 405);
  const actor = await client.get('/api/v1/audit?actor=someone', { 'x-api-key': admin.key });
  assert.equal(actor.status, 400);
});
