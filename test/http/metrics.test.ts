/**
 * `GET /metrics` and what a failing store answers (on the embedded engine):
 * requests by route, status and tier, rejections, failed authentications, store errors and a
 * latency histogram, with no key anywhere; a store that fails gives 503, never 401 or 500.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../helpers/harness.js';

function metricValue(text: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && wanted.every((w) => l.includes(w)));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('GET /metrics', () => {
  let h: Harness;
  let tiny: string;
  before(async () => {
    h = await createHarness();
    tiny = (await h.createKey({ tier: 'free' })).key;
  });
  after(() => h.close());

  const scrape = async () => {
    const response = await h.app.inject({ url: '/metrics' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/plain/);
    return response.body;
  };

  test('counts requests by route template, status and tier, failed authentications and rejections', async () => {
    for (let i = 0; i < 3; i++) {
      await h.app.inject({
        url: '/api/v1/prices/2026-11-20?symbols=NO1',
        headers: { 'x-api-key': h.demoKey },
      });
    }
    await h.app.inject({ url: '/api/v1/prices/today' }); // no key
    await h.app.inject({ url: '/api/v1/prices/today', headers: { 'x-api-key': `${tiny}x` } }); // bad key
    for (let i = 0; i < 61; i++) {
      await h.app.inject({ url: '/api/v1/prices/today?symbols=NO1', headers: { 'x-api-key': tiny } });
    }
    const text = await scrape();
    const requests = 'pricepoint_http_requests_total';
    assert.equal(
      metricValue(text, requests, { route: '/api/v1/prices/:date', status: '200', tier: 'demo' }),
      3,
      text,
    );
    assert.equal(
      metricValue(text, requests, { route: '/api/v1/prices/today', status: '401', tier: 'none' }),
      2,
    );
    assert.equal(
      metricValue(text, requests, { route: '/api/v1/prices/today', status: '429', tier: 'free' }),
      1,
    );
    assert.equal(metricValue(text, 'pricepoint_auth_failures_total', { code: 'missing_api_key' }), 1);
    assert.equal(metricValue(text, 'pricepoint_auth_failures_total', { code: 'invalid_api_key' }), 1);
    assert.equal(metricValue(text, 'pricepoint_rate_limit_rejections_total', { tier: 'free' }), 1);
    assert.equal(
      metricValue(text, 'pricepoint_http_request_duration_seconds_count', { route: '/api/v1/prices/:date' }),
      3,
      'a latency histogram by route',
    );
    assert.ok(
      metricValue(text, 'pricepoint_http_request_duration_seconds_bucket', {
        route: '/api/v1/prices/:date',
        le: '+Inf',
      }) === 3,
      'with buckets',
    );
    assert.ok(text.includes('pricepoint_process_resident_memory_bytes'), 'process metrics too');
  });

  test('no key, key id or client address appears in any label', async () => {
    const text = await scrape();
    assert.ok(!/pp_(live|test|demo)_/.test(text), 'no key in the metrics');
    assert.ok(!text.includes('key_'), 'no key id in the metrics');
    assert.ok(!text.includes('127.0.0.1'), 'no client address in the metrics');
  });

  test('a failing price store gives 503 service_unavailable and is counted; nothing says 500', async () => {
    const pricesBetween = h.stores.prices.pricesBetween;
    h.stores.prices.pricesBetween = () => Promise.reject(new Error('connection refused'));
    try {
      // A day nobody read yet, so no cached copy can answer for the store.
      const response = await h.app.inject({
        url: '/api/v1/prices/2026-11-01?symbols=NO1',
        headers: { 'x-api-key': h.demoKey },
      });
      assert.equal(response.statusCode, 503, response.body);
      assert.equal(response.json().code, 'service_unavailable');
      assert.ok(!response.body.includes('connection refused'), 'the cause stays in the logs');
    } finally {
      h.stores.prices.pricesBetween = pricesBetween;
    }
    assert.ok(
      metricValue(await scrape(), 'pricepoint_store_errors_total', { store: 'prices' }) >= 1,
      'counted',
    );
  });

  test('a failing key store: a key verified before keeps working, an unknown one gets 503, never 401', async () => {
    const fresh = (await h.createKey({ tier: 'pro' })).key;
    const other = (await h.createKey({ tier: 'pro' })).key;
    const call = (key: string) => h.app.inject({ url: '/api/v1/series/NO1', headers: { 'x-api-key': key } });
    assert.equal((await call(fresh)).statusCode, 200);
    const findByHash = h.stores.keys.findByHash;
    h.stores.keys.findByHash = () => Promise.reject(new Error('connection refused'));
    try {
      h.clock.advance(60_000); // well past the 2 s key cache
      assert.equal((await call(fresh)).statusCode, 200, 'the verified key is served from the cache');
      const unknown = await call(other);
      assert.equal(unknown.statusCode, 503, unknown.body);
      const failures = metricValue(await scrape(), 'pricepoint_auth_failures_total', {
        code: 'invalid_api_key',
      });
      assert.equal(failures, 1, 'a store failure is no failed authentication');
    } finally {
      h.stores.keys.findByHash = findByHash;
    }
  });
});
