/**
 * GET /api/v1/usage (docs/api.md, docs/keys-and-tiers.md): the calling key's tier, limits and
 * what is left, and it is not counted: asking for it takes nothing from any limit, also when one is
 * used up.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../helpers/harness.js';

interface Usage {
  keyId: string;
  tier: string;
  limits: { name: string; limit: number; windowSeconds: number; remaining: number; resetAt: string }[];
  kinds: string[] | null;
  historyDays: number | null;
  ownLimits: boolean;
  selfRotate: boolean;
  expiresAt: string | null;
  expiryWarning: string | null;
}

let h: Harness;
before(async () => {
  // 2026-11-22T10:15:03.120Z: the minute window ends at 10:16:00Z, the day window at midnight UTC.
  h = await createHarness();
});
after(() => h.close());

function usage(key: string | null, url = '/api/v1/usage') {
  return h.app.inject({ url, headers: key === null ? {} : { 'x-api-key': key } });
}

function today(key: string) {
  return h.app.inject({ url: '/api/v1/prices/today?symbols=NO1', headers: { 'x-api-key': key } });
}

describe('GET /api/v1/usage', () => {
  test("answers the key's id, tier, every limit with what is left and when it resets, kinds and history", async () => {
    const { key, id } = await h.createKey({ tier: 'free' });
    const response = await usage(key);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['cache-control'], 'no-store');
    assert.deepEqual(response.json() as Usage, {
      keyId: id,
      tier: 'free',
      limits: [
        { name: 'minute', limit: 60, windowSeconds: 60, remaining: 60, resetAt: '2026-11-22T10:16:00.000Z' },
        {
          name: 'day',
          limit: 5000,
          windowSeconds: 86400,
          remaining: 5000,
          resetAt: '2026-11-23T00:00:00.000Z',
        },
      ],
      kinds: null,
      historyDays: 31,
      ownLimits: false,
      selfRotate: false,
      expiresAt: null,
      expiryWarning: null,
    });
  });

  test('is not counted: asking twice changes neither the answer nor the headers, counted requests do', async () => {
    const { key } = await h.createKey({ tier: 'free' });
    assert.equal((await today(key)).headers['x-ratelimit-remaining'], '59');
    const first = await usage(key);
    const second = await usage(key);
    for (const response of [first, second]) {
      assert.equal(response.headers['x-ratelimit-remaining'], '59');
      assert.equal(response.headers['x-ratelimit-limit'], '60');
      assert.equal((response.json() as Usage).limits[0]?.remaining, 59);
      assert.equal((response.json() as Usage).limits[1]?.remaining, 4999);
    }
    assert.equal((await today(key)).headers['x-ratelimit-remaining'], '58', 'usage took nothing');
  });

  test('still answers when a limit is used up, showing 0 left and no Retry-After', async () => {
    const { key } = await h.createKey({ tier: 'free' });
    for (let i = 0; i < 60; i++) assert.equal((await today(key)).statusCode, 200, `request ${i}`);
    assert.equal((await today(key)).statusCode, 429);
    const response = await usage(key);
    assert.equal(response.statusCode, 200);
    assert.equal((response.json() as Usage).limits[0]?.remaining, 0);
    assert.equal(response.headers['x-ratelimit-remaining'], '0');
    assert.equal(response.headers['retry-after'], undefined);
    h.clock.advance(60_000);
    assert.equal(((await usage(key)).json() as Usage).limits[0]?.remaining, 60, 'a new minute window');
  });

  test('the demo key is counted per key and client address, and usage shows that count', async () => {
    await today(h.demoKey);
    const body = (await usage(h.demoKey)).json() as Usage;
    assert.equal(body.tier, 'demo');
    assert.equal(body.limits[0]?.remaining, 29);
  });

  test('needs a key: 401 without one or with a bad one', async () => {
    const missing = await usage(null);
    assert.equal(missing.statusCode, 401);
    assert.equal(missing.json().code, 'missing_api_key');
    const bad = await usage('pp_live_NotARealKeyAtAll000000000000');
    assert.equal(bad.statusCode, 401);
    assert.equal(bad.json().code, 'invalid_api_key');
  });

  test('an unknown query parameter is a 400 naming it', async () => {
    const { key } = await h.createKey({ tier: 'free' });
    const response = await usage(key, '/api/v1/usage?verbose=1');
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().parameter, 'verbose');
  });
});
