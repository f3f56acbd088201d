/**
 * The hot path (src/speed/fast-entry.ts) over real HTTPS: a repeated read of a cached day by a verified key
 * is answered before Fastify runs, with the same bytes, headers, limits, log line and metrics as the
 * full path; everything else (a refused limit, a revoked key, a changed day, too many failed
 * logins, HEAD) still gets the full path's answer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync } from 'node:zlib';
import { dayIntervals, formatInstant } from '../../src/domain/time/days.js';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';

const TODAY = '/api/v1/prices/today?symbols=NO1';
/** Headers that differ between any two answers by design. */
const PER_REQUEST = new Set(['x-request-id', 'date', 'ratelimit', 'x-ratelimit-remaining']);

/** `key` with its last character changed: one in 62 keys ends in any given character, so not a fixed one. */
const mistyped = (key: string) => `${key.slice(0, -1)}${key.endsWith('X') ? 'Y' : 'X'}`;

describe('the fast path', () => {
  let h: Harness;
  let client: Awaited<ReturnType<typeof listenHttps>>;
  let key: string;

  before(async () => {
    h = await createHarness({ https: true });
    client = await listenHttps(h, 16);
    key = (await h.createKey({ tier: 'enterprise' })).key;
  });
  after(async () => {
    await client.close();
    await h.close();
  });

  const fastAnswers = async (): Promise<number> => {
    const metric = await h.app.inject({ url: '/metrics' });
    const line = metric.body.split('\n').find((l) => l.startsWith('pricepoint_fast_path_answers_total{'));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  };
  const stable = (headers: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(headers).filter(([name]) => !PER_REQUEST.has(name)));

  test('a repeated request is served before the framework, with the same bytes and headers', async () => {
    const origin = { 'x-api-key': key, origin: 'https://dashboard.example' };
    const first = await client.get(TODAY, origin);
    assert.equal(first.status, 200, first.text);
    const fastBefore = await fastAnswers();
    const second = await client.get(TODAY, origin);
    assert.equal(await fastAnswers(), fastBefore + 1, 'the second answer came from the fast path');
    assert.equal(second.text, first.text, 'the same body');
    assert.deepEqual(stable(second.headers), stable(first.headers), 'the same headers');
    assert.equal(
      Number(second.headers['x-ratelimit-remaining']),
      Number(first.headers['x-ratelimit-remaining']) - 1,
      'and each request counted once',
    );
    assert.notEqual(second.headers['x-request-id'], first.headers['x-request-id'], 'a request id of its own');
  });

  test('Bearer keys, compression and If-None-Match are served fast too', async () => {
    const bearer = { authorization: `Bearer ${key}` };
    const plain = await client.get(TODAY, bearer);
    const fastBefore = await fastAnswers();
    const held = await client.get(TODAY, { ...bearer, 'if-none-match': String(plain.headers.etag) });
    assert.equal(held.status, 304, 'If-None-Match with the current tag');
    assert.equal(held.text, '', '304 has no body');
    assert.equal(held.headers.etag, plain.headers.etag, 'a 304 names the tag');
    // The first Brotli request waits on the full path while the body is compressed; later ones are fast.
    await client.get('/api/v1/prices/today', { ...bearer, 'accept-encoding': 'br' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const packed = await client.request('GET', '/api/v1/prices/today', {
      headers: { ...bearer, 'accept-encoding': 'br' },
    });
    assert.equal(packed.headers['content-encoding'], 'br', 'compressed from the cache');
    // The first request for the whole day built its answer on the full path; the others were fast.
    assert.equal(await fastAnswers(), fastBefore + 2, 'the 304 and the Brotli answer from the fast path');
    const full = await h.app.inject({ url: '/api/v1/prices/today', headers: { 'x-api-key': key } });
    assert.equal(brotliDecompressSync(packed.raw).toString(), full.body, 'the same answer, compressed');
    assert.equal(
      packed.headers.etag,
      `${String(full.headers.etag).slice(0, -1)}-br"`,
      'the compressed body has its own tag',
    );
  });

  test('every fast answer writes its log line and metrics, and no key', async () => {
    const before = h.logs.filter((l) => l.msg === 'request').length;
    await client.get(TODAY, { 'x-api-key': key });
    await client.get(TODAY, { 'x-api-key': key });
    const lines = h.logs.filter((l) => l.msg === 'request').slice(before);
    assert.equal(lines.length, 2, 'one line per request');
    for (const line of lines) {
      assert.equal(line.url, TODAY, 'the URL');
      assert.equal(line.status, 200, 'the status');
      assert.equal(line.tier, 'enterprise', 'the tier');
      assert.equal(typeof line.keyId, 'string', 'the key id');
      assert.equal(typeof line.reqId, 'string', 'the request id');
      assert.equal(typeof line.latencyMs, 'number', 'the latency');
    }
    assert.ok(!h.rawLogs.some((l) => l.includes(key)), 'no log line holds the key');
    const metrics = await h.app.inject({ url: '/metrics' });
    assert.match(
      metrics.body,
      /pricepoint_http_requests_total\{route="\/api\/v1\/prices\/today",method="GET",status="200",tier="enterprise"\} \d+/,
      'requests are counted by route, status and tier',
    );
    assert.ok(!metrics.body.includes(key), 'no metric holds the key');
  });

  test("the fast path's log line is the full path's line, field for field", async () => {
    const url = '/api/v1/prices/today?symbols=NO1&tz=UTC';
    const before = h.logs.length;
    const fastBefore = await fastAnswers();
    await client.get(url, { 'x-api-key': key }); // builds the answer on the full path
    await client.get(url, { 'x-api-key': key }); // served from the cache
    assert.equal(await fastAnswers(), fastBefore + 1, 'the second request was served fast');
    const [full, fast] = h.logs.slice(before).filter((l) => l.msg === 'request' && l.url === url);
    assert.ok(full !== undefined && fast !== undefined, 'both requests logged');
    assert.deepEqual(Object.keys(fast), Object.keys(full), 'the same fields in the same order');
    const same = (line: Record<string, unknown>) => {
      const { time, reqId, latencyMs, ...rest } = line;
      return rest;
    };
    assert.deepEqual(same(fast), same(full), 'the same level, process, URL, status, key, tier and address');
    assert.equal(typeof fast.time, 'number', 'a time in epoch milliseconds, as pino writes it');
    assert.ok(Math.abs(Number(fast.time) - Number(full.time)) < 60_000, 'a current time');
  });

  test('past the limit the answer is the full 429, and nothing extra is counted', async () => {
    const { key: limited } = await h.createKey({ tier: 'demo' }); // 30 a minute
    const statuses: number[] = [];
    for (let i = 0; i < 32; i++) statuses.push((await client.get(TODAY, { 'x-api-key': limited })).status);
    assert.deepEqual(statuses, [...Array(30).fill(200), 429, 429], 'exactly 30 served, then refused');
    const refused = await client.get(TODAY, { 'x-api-key': limited });
    assert.equal(refused.status, 429, 'still refused');
    assert.equal(
      refused.headers['content-type'],
      'application/problem+json; charset=utf-8',
      'a problem body',
    );
    assert.equal(JSON.parse(refused.text).code, 'rate_limited', 'rate_limited');
    assert.ok(Number(refused.headers['retry-after']) >= 1, 'with Retry-After');
  });

  test('a revoked key is refused at once, not served from the cache', async () => {
    const admin = (await h.createKey({ scopes: ['admin'], tier: 'pro' })).key;
    const victim = await h.createKey({ tier: 'enterprise' });
    assert.equal((await client.get(TODAY, { 'x-api-key': victim.key })).status, 200, 'served');
    assert.equal((await client.get(TODAY, { 'x-api-key': victim.key })).status, 200, 'served fast');
    const revoke = await h.app.inject({
      method: 'DELETE',
      url: `/api/v1/keys/${victim.id}`,
      headers: { 'x-api-key': admin },
    });
    assert.equal(revoke.statusCode, 200, revoke.body);
    const after = await client.get(TODAY, { 'x-api-key': victim.key });
    assert.equal(after.status, 401, 'refused right after the revocation');
    assert.equal(JSON.parse(after.text).code, 'invalid_api_key', 'as an invalid key');
  });

  test('an import is served at once: the cached answer is dropped', async () => {
    const writer = (await h.createKey({ scopes: ['write'], tier: 'pro' })).key;
    await client.get(TODAY, { 'x-api-key': key });
    const start = formatInstant(dayIntervals('2026-11-22', 'Europe/Oslo', 'PT15M')[3]!.start, 'Europe/Oslo');
    const put = await client.request('PUT', '/api/v1/series/NO1/prices', {
      headers: { 'x-api-key': writer, 'content-type': 'text/csv' },
      body: `start,price\n${start},777.125\n`,
    });
    assert.equal(put.status, 200, put.text);
    const after = await client.get(TODAY, { 'x-api-key': key });
    const point = JSON.parse(after.text).series[0].prices[3] as { start: string; price: number };
    assert.deepEqual(point.price, 777.125, 'the new price');
  });

  test('other keys, methods and refusals still get the full answers', async () => {
    await client.get(TODAY, { 'x-api-key': key });
    const other = await h.createKey({ tier: 'enterprise' });
    const conflicting = await client.get(TODAY, { 'x-api-key': key, authorization: `Bearer ${other.key}` });
    assert.equal(JSON.parse(conflicting.text).code, 'conflicting_api_keys', 'two different keys: 401');
    const head = await client.request('HEAD', TODAY, { headers: { 'x-api-key': key } });
    assert.equal(head.status, 200, 'HEAD answers');
    assert.equal(head.text, '', 'without a body');
    const unknown = await client.get(TODAY.replace('NO1', 'NOPE'), { 'x-api-key': key });
    assert.equal(unknown.status, 404, 'an unknown series is still 404');
    const csv = await client.get(TODAY, { 'x-api-key': key, accept: 'text/csv' });
    assert.match(
      csv.text,
      /^symbol,date,start,end,price,currency,unit\r\n/,
      'Accept: text/csv is its own answer',
    );
  });

  test('a refused key that came in by the fast entry point is counted once', async () => {
    await client.get(TODAY, { 'x-api-key': key });
    h.clock.advance(60_000); // a new minute: the address' budget of 20 failures is whole again
    assert.equal((await client.get(TODAY, { 'x-api-key': key })).status, 200, 'served');
    const bad = { 'x-api-key': mistyped(key) };
    for (let i = 0; i < 19; i++) {
      const refused = await client.get(TODAY, bad);
      assert.equal(JSON.parse(refused.text).code, 'invalid_api_key', `failure ${i + 1} is a 401`);
    }
    assert.equal((await client.get(TODAY, { 'x-api-key': key })).status, 200, '19 failures: still served');
    assert.equal(JSON.parse((await client.get(TODAY, bad)).text).code, 'invalid_api_key', 'the 20th');
    const after = await client.get(TODAY, { 'x-api-key': key });
    assert.equal(JSON.parse(after.text).code, 'too_many_auth_failures', '20 failures: the budget is used up');
    h.clock.advance(60_000);
  });

  test('an address past its failed-login budget is refused even with a cached valid key', async () => {
    await client.get(TODAY, { 'x-api-key': key });
    for (let i = 0; i < 20; i++) await client.get(TODAY, { 'x-api-key': mistyped(key) });
    const refused = await client.get(TODAY, { 'x-api-key': key });
    assert.equal(refused.status, 429, 'refused');
    assert.equal(JSON.parse(refused.text).code, 'too_many_auth_failures', 'for too many failures');
  });
});
