import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../domain/errors/api-error.js';
import { DEFAULT_TIERS } from '../domain/limits/tiers.js';
import { rateLimitHeaders } from '../http/pipeline/rate-limit-headers.js';
import { MemoryRateLimitStore } from '../stores/memory/rate-limit-store.js';
import type { KeyRecord } from '../stores/types.js';
import { createRateLimiter } from './rate-limiter.js';

const NOW = Date.parse('2026-11-22T10:15:03.120Z');
const IP = '192.0.2.1';

function proKey(id: string): KeyRecord {
  return {
    id,
    hash: 'h',
    last4: 'abcd',
    name: 'a pro key',
    tier: 'pro',
    scopes: ['read'],
    createdAt: NOW,
    expiresAt: null,
    revokedAt: null,
    lastUsedAt: null,
  };
}

/** The pro tier: 20 a second and 1,200 a minute. */
function limiter() {
  const store = new MemoryRateLimitStore();
  return createRateLimiter({ store, tiers: DEFAULT_TIERS, clock: () => NOW });
}

async function remaining(limits: ReturnType<typeof limiter>, key: KeyRecord): Promise<number[]> {
  return (await limits.peek(key, IP)).states.map((s) => s.remaining);
}

describe('RateLimiter.take: a heavy request counts by its weight', () => {
  test('a request of weight 12 takes 12 units of every limit; the answer says what it took', async () => {
    const limits = limiter();
    const key = proKey('heavy');
    const taken = await limits.take(key, IP, 12);
    const headers = rateLimitHeaders(taken.decision, taken.nowMs, taken.cost);
    assert.equal(
      headers['ratelimit-policy'],
      '"second";q=20;w=1;pricepoint-cost=12, "minute";q=1200;w=60;pricepoint-cost=12',
    );
    assert.equal(headers['ratelimit'], '"second";r=8;t=1');
    assert.equal(headers['x-ratelimit-remaining'], '8');
    assert.deepEqual(await remaining(limits, key), [8, 1188]);
  });

  test('a weight the limits cannot pay is refused with 429, headers and Retry-After, and takes nothing', async () => {
    const limits = limiter();
    const key = proKey('too-heavy');
    await limits.take(key, IP, 16); // 4 left this second
    const refused = await limits.take(key, IP, 6).then(
      () => assert.fail('not refused'),
      (error: unknown) => error,
    );
    assert.ok(refused instanceof ApiError);
    assert.equal(refused.code, 'rate_limited');
    assert.match(
      refused.message,
      /second limit of tier pro \(20\) has fewer units left than this request weighs \(6\)/,
    );
    assert.equal(refused.options.retryAfterSeconds, 1);
    const report = refused.options.limits;
    assert.ok(report, 'the refusal carries the decision');
    assert.equal(report.decision.states[0]?.remaining, 4, 'four units left this second');
    assert.equal(rateLimitHeaders(report.decision, report.nowMs, report.cost)['retry-after'], '1');
    assert.deepEqual(refused.options.extra, { 'violated-policies': ['second'] });
    assert.deepEqual(await remaining(limits, key), [4, 1184], 'the refused request took nothing');
  });

  test('a weight above a limit takes all of it, so the request passes in a fresh window', async () => {
    const limits = limiter();
    const key = proKey('huge');
    await limits.take(key, IP, 100);
    assert.deepEqual(await remaining(limits, key), [0, 1100]);
  });

  test('a weight that is not a positive whole number is a bug', async () => {
    const limits = limiter();
    const key = proKey('light');
    for (const weight of [0, 2.5, Number.NaN]) {
      await assert.rejects(limits.take(key, IP, weight), RangeError);
    }
    assert.deepEqual(await remaining(limits, key), [20, 1200]);
  });
});
