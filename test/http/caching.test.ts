/**
 * Caching and CORS (docs/api.md): an ETag on every 200 that ignores `generatedAt`, 304 for a
 * matching If-None-Match, Cache-Control short while a day can change and long after, ETags that
 * change with every import touching a day, and CORS for browsers on any origin.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { dayIntervals, formatInstant } from '../../src/domain/time/days.js';
import { createHarness, type Harness } from '../helpers/harness.js';

describe('ETag, If-None-Match and Cache-Control', () => {
  let h: Harness;
  let key: string; // a tier whose limits these tests never reach
  before(async () => {
    h = await createHarness({ now: '2026-11-22T10:15:03.120Z' });
    key = (await h.createKey({ tier: 'enterprise' })).key;
  });
  after(() => h.close());

  const get = async (url: string, headers: Record<string, string> = {}) => {
    const response = await h.app.inject({ url, headers: { 'x-api-key': key, ...headers } });
    assert.ok(response.statusCode === 200 || response.statusCode === 304, `${url}: ${response.body}`);
    return response;
  };

  test('every read 200 carries a quoted ETag and private Cache-Control', async () => {
    for (const url of [
      '/api/v1/prices/today',
      '/api/v1/prices/2026-11-20',
      '/api/v1/prices?from=2026-11-20&to=2026-11-21',
      '/api/v1/prices/latest',
      '/api/v1/series',
      '/api/v1/series/NO1',
    ]) {
      const response = await get(url);
      assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
      assert.match(String(response.headers.etag), /^"[\w-]{27}"$/, url);
      assert.match(String(response.headers['cache-control']), /^private, max-age=\d+$/, url);
    }
  });

  test('the ETag names the content, not the moment: it stays while generatedAt moves on', async () => {
    const first = await get('/api/v1/prices/today?symbols=NO1');
    h.clock.advance(1_000);
    // An answer is built once and served as built until its data or its day changes:
    // generatedAt says when that was.
    const again = await get('/api/v1/prices/today?symbols=NO1');
    assert.equal(again.body, first.body, 'a repeated request gets the answer as it was built');
    // Writing the very same value again drops the built answer: rebuilt later, same content, same tag.
    const writer = (await h.createKey({ scopes: ['write'], tier: 'pro' })).key;
    const point = first.json().series[0].prices[7] as { start: string; price: number };
    const put = await h.app.inject({
      method: 'PUT',
      url: '/api/v1/series/NO1/prices',
      headers: { 'x-api-key': writer, 'content-type': 'text/csv' },
      payload: `start,price\n${point.start},${point.price}\n`,
    });
    assert.equal(put.statusCode, 200, put.body);
    const second = await get('/api/v1/prices/today?symbols=NO1');
    assert.notEqual(first.json().generatedAt, second.json().generatedAt, 'the answer was built again');
    assert.equal(first.headers.etag, second.headers.etag, 'with the same content, the same ETag');
    const csv = await get('/api/v1/prices/today?symbols=NO1&format=csv');
    assert.notEqual(csv.headers.etag, first.headers.etag, 'CSV and JSON are different answers');
    const other = await get('/api/v1/prices/today?symbols=DE-LU');
    assert.notEqual(other.headers.etag, first.headers.etag);
  });

  test('If-None-Match with the ETag answers 304 without a body, still with limits and validators', async () => {
    const first = await get('/api/v1/prices/2026-11-20?symbols=NO1');
    const etag = String(first.headers.etag);
    for (const header of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
      const again = await get('/api/v1/prices/2026-11-20?symbols=NO1', { 'if-none-match': header });
      assert.equal(again.statusCode, 304, header);
      assert.equal(again.body, '', header);
      assert.equal(again.headers.etag, etag, header);
      assert.equal(again.headers['cache-control'], first.headers['cache-control'], header);
      assert.ok(again.headers['x-ratelimit-remaining'] !== undefined, 'a 304 is counted and says so');
    }
    const changed = await get('/api/v1/prices/2026-11-20?symbols=NO1', { 'if-none-match': '"other"' });
    assert.equal(changed.statusCode, 200);
  });

  test('Cache-Control is short for today, tomorrow and latest, long for days that have ended', async () => {
    const maxAge = async (url: string) => (await get(url)).headers['cache-control'];
    assert.equal(await maxAge('/api/v1/prices/today'), 'private, max-age=60');
    assert.equal(await maxAge('/api/v1/prices/tomorrow'), 'private, max-age=60');
    assert.equal(await maxAge('/api/v1/prices/latest'), 'private, max-age=60');
    assert.equal(await maxAge('/api/v1/series'), 'private, max-age=60');
    assert.equal(await maxAge('/api/v1/prices/yesterday'), 'private, max-age=86400');
    assert.equal(await maxAge('/api/v1/prices/2026-11-01'), 'private, max-age=86400');
    assert.equal(await maxAge('/api/v1/prices?from=2026-11-01&to=2026-11-21'), 'private, max-age=86400');
    assert.equal(await maxAge('/api/v1/prices?from=2026-11-01&to=2026-11-22'), 'private, max-age=60');
  });

  test('an import changes the ETag of every day it touches, and of no other day', async () => {
    const writer = (await h.createKey({ scopes: ['write'], tier: 'pro' })).key;
    const urls = [
      '/api/v1/prices/2026-11-19?symbols=NO1',
      '/api/v1/prices/2026-11-20?symbols=NO1',
      '/api/v1/prices/2026-11-21?symbols=NO1',
      '/api/v1/prices?from=2026-11-19&to=2026-11-21&symbols=NO1',
      '/api/v1/prices/2026-11-20?symbols=NO1&resolution=P1D',
      '/api/v1/prices/2026-11-21?symbols=DE-LU',
    ];
    const before = await Promise.all(urls.map(async (u) => (await get(u)).headers.etag));
    const start = (date: string, i: number) =>
      formatInstant(dayIntervals(date, 'Europe/Oslo', 'PT15M')[i]!.start, 'Europe/Oslo');
    const put = await h.app.inject({
      method: 'PUT',
      url: '/api/v1/series/NO1/prices',
      headers: { 'x-api-key': writer, 'content-type': 'text/csv' },
      payload: `start,price\n${start('2026-11-20', 10)},123.45\n${start('2026-11-21', 90)},-1.5\n`,
    });
    assert.equal(put.statusCode, 200, put.body);
    const after = await Promise.all(urls.map(async (u) => (await get(u)).headers.etag));
    assert.deepEqual(
      urls.map((u, i) => [u, before[i] !== after[i]]),
      [
        [urls[0], false],
        [urls[1], true],
        [urls[2], true],
        [urls[3], true],
        [urls[4], true],
        [urls[5], false],
      ],
    );
  });

  test('a built answer ends with its day: after local midnight "today" is the next day', async () => {
    const before = await get('/api/v1/prices/today?symbols=NO1');
    assert.equal(before.json().series[0].date, '2026-11-22', 'today before midnight in Oslo');
    // 10:15:03Z to 23:00:00Z, midnight in Oslo; the clock of the harness moves, the data does not.
    h.clock.set('2026-11-22T22:59:59.999Z');
    const late = await get('/api/v1/prices/today?symbols=NO1');
    assert.equal(late.json().series[0].date, '2026-11-22', 'a millisecond before midnight: still the 22nd');
    h.clock.advance(1);
    const after = await get('/api/v1/prices/today?symbols=NO1');
    assert.equal(after.json().series[0].date, '2026-11-23', 'at midnight in Oslo today is the 23rd');
    assert.notEqual(after.headers.etag, before.headers.etag, 'another day, another ETag');
    h.clock.set('2026-11-22T10:15:03.120Z');
  });

  test('Brotli and gzip: the same bytes compressed, each coding with its own ETag', async () => {
    const plain = await get('/api/v1/prices/today');
    for (const [accept, coding, decode] of [
      ['gzip, deflate, br', 'br', brotliDecompressSync],
      ['gzip', 'gzip', gunzipSync],
      ['br;q=0.5, gzip;q=0.9', 'gzip', gunzipSync],
    ] as const) {
      const packed = await get('/api/v1/prices/today', { 'accept-encoding': accept });
      assert.equal(packed.headers['content-encoding'], coding, accept);
      assert.equal(decode(packed.rawPayload).toString(), plain.body, `${accept}: the same answer`);
      assert.ok(
        packed.rawPayload.length * 5 < plain.rawPayload.length,
        `${accept}: at least 5 times smaller`,
      );
      assert.equal(packed.headers.etag, `${String(plain.headers.etag).slice(0, -1)}-${coding}"`, accept);
      assert.match(String(packed.headers.vary), /accept-encoding/, accept);
      const held = await get('/api/v1/prices/today', {
        'accept-encoding': accept,
        'if-none-match': String(packed.headers.etag),
      });
      assert.equal(held.statusCode, 304, `${accept}: If-None-Match with the compressed tag`);
    }
    const refused = await get('/api/v1/prices/today', { 'accept-encoding': 'br;q=0, gzip;q=0' });
    assert.equal(refused.headers['content-encoding'], undefined, 'no coding the client accepts: identity');
    assert.equal(refused.body, plain.body, 'identity body');
  });

  test('errors are never cached', async () => {
    const response = await h.app.inject({ url: '/api/v1/prices/today' });
    assert.equal(response.statusCode, 401);
    assert.equal(response.headers['cache-control'], 'no-store');
    assert.equal(response.headers.etag, undefined);
  });
});

describe('CORS', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness();
  });
  after(() => h.close());

  test('a simple GET from any origin may be read, with the rate-limit and cache headers exposed', async () => {
    const response = await h.app.inject({
      url: '/api/v1/prices/today?symbols=NO1',
      headers: { 'x-api-key': h.demoKey, origin: 'https://dashboard.example' },
    });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['access-control-allow-origin'], '*');
    const exposed = String(response.headers['access-control-expose-headers'])
      .split(',')
      .map((s) => s.trim());
    for (const name of ['etag', 'ratelimit', 'x-ratelimit-remaining', 'retry-after', 'x-request-id']) {
      assert.ok(exposed.includes(name), `${name} is exposed: ${exposed.join(',')}`);
    }
  });

  test('errors can be read by a browser too', async () => {
    const response = await h.app.inject({
      url: '/api/v1/prices/today',
      headers: { origin: 'https://dashboard.example' },
    });
    assert.equal(response.statusCode, 401);
    assert.equal(response.headers['access-control-allow-origin'], '*');
  });

  test('a preflight allows x-api-key and Authorization, needs no key and is not counted', async () => {
    const usage = async () =>
      (await h.app.inject({ url: '/api/v1/usage', headers: { 'x-api-key': h.demoKey } })).json().limits[0]
        .remaining;
    const before = await usage();
    const response = await h.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/prices/today',
      headers: {
        origin: 'https://dashboard.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'x-api-key, authorization',
      },
    });
    assert.equal(response.statusCode, 204, response.body);
    assert.equal(response.headers['access-control-allow-origin'], '*');
    assert.match(String(response.headers['access-control-allow-methods']), /GET/);
    const allowed = String(response.headers['access-control-allow-headers'])
      .split(',')
      .map((s) => s.trim());
    assert.ok(
      allowed.includes('x-api-key') && allowed.includes('authorization'),
      `allowed headers: ${allowed.join(',')}`,
    );
    assert.equal(await usage(), before, 'the preflight took nothing from the limits');
  });

  test('paths that do not exist are still 404, not 405, with CORS in place', async () => {
    const response = await h.app.inject({ url: '/api/v1/nothing-here', headers: { 'x-api-key': h.demoKey } });
    assert.equal(response.statusCode, 404);
    const wrongMethod = await h.app.inject({ method: 'POST', url: '/api/v1/prices/today' });
    assert.equal(wrongMethod.statusCode, 405);
    assert.equal(wrongMethod.headers.allow, 'GET, HEAD');
  });
});
