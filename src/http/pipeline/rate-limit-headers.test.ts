import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type LimitDecision, type LimitState, shortLimits } from '../../domain/limits/fixed-window.js';
import type { LimitRule } from '../../domain/limits/tiers.js';
import { rateLimitHeaders } from './rate-limit-headers.js';

const at = (iso: string): number => Date.parse(iso);
const second: LimitRule = { name: 'second', limit: 20, windowSeconds: 1 };
const minute: LimitRule = { name: 'minute', limit: 30, windowSeconds: 60 };
const day: LimitRule = { name: 'day', limit: 1000, windowSeconds: 86_400 };

const state = (rule: LimitRule, remaining: number, resetAt: string): LimitState => ({
  rule,
  remaining,
  resetAtMs: at(resetAt),
});

describe('rateLimitHeaders', () => {
  const now = at('2026-11-22T10:15:19.000Z');

  test('writes the draft fields and the legacy X- fields exactly as docs/using-the-api.md shows them', () => {
    const decision: LimitDecision = {
      allowed: true,
      states: [state(minute, 12, '2026-11-22T10:16:00Z'), state(day, 988, '2026-11-23T00:00:00Z')],
    };
    assert.deepEqual(rateLimitHeaders(decision, now), {
      'ratelimit-policy': '"minute";q=30;w=60, "day";q=1000;w=86400',
      ratelimit: '"minute";r=12;t=41',
      'x-ratelimit-limit': '30',
      'x-ratelimit-remaining': '12',
      'x-ratelimit-reset': String(at('2026-11-22T10:16:00Z') / 1000),
    });
  });

  test('the policy lists every limit of the tier in its order, the rest describe the binding one', () => {
    const decision: LimitDecision = {
      allowed: true,
      states: [state(minute, 29, '2026-11-22T10:16:00Z'), state(day, 2, '2026-11-23T00:00:00Z')],
    };
    const headers = rateLimitHeaders(decision, now);
    assert.equal(headers['ratelimit-policy'], '"minute";q=30;w=60, "day";q=1000;w=86400');
    assert.equal(headers['ratelimit'], `"day";r=2;t=${(at('2026-11-23T00:00:00Z') - now) / 1000}`);
    assert.equal(headers['x-ratelimit-limit'], '1000');
    assert.equal(headers['x-ratelimit-remaining'], '2');
    assert.equal(headers['x-ratelimit-reset'], '1795392000');
  });

  test('an accepted request gets no Retry-After, also when it took the last unit', () => {
    const decision: LimitDecision = {
      allowed: true,
      states: [state(minute, 0, '2026-11-22T10:16:00Z'), state(day, 970, '2026-11-23T00:00:00Z')],
    };
    const headers = rateLimitHeaders(decision, now);
    assert.equal(headers['x-ratelimit-remaining'], '0');
    assert.equal('retry-after' in headers, false);
  });

  test('a refusal gets Retry-After in whole seconds until the used-up limit resets', () => {
    const decision: LimitDecision = {
      allowed: false,
      states: [state(minute, 0, '2026-11-22T10:16:00Z'), state(day, 970, '2026-11-23T00:00:00Z')],
    };
    const headers = rateLimitHeaders(decision, at('2026-11-22T10:15:03.120Z'));
    assert.equal(headers['retry-after'], '57');
    assert.equal(headers['ratelimit'], '"minute";r=0;t=57');
    assert.equal(headers['x-ratelimit-remaining'], '0');
  });

  test('Retry-After is never earlier than the reset of the used-up limit that resets last', () => {
    // pro tier: both the second and the minute limit are used up; retrying after 1 s would fail.
    const decision: LimitDecision = {
      allowed: false,
      states: [
        state(second, 0, '2026-11-22T10:15:20Z'),
        state({ ...minute, limit: 1200 }, 0, '2026-11-22T10:16:00Z'),
      ],
    };
    const headers = rateLimitHeaders(decision, now);
    assert.equal(headers['retry-after'], '41');
    assert.ok(now + Number(headers['retry-after']) * 1000 >= at('2026-11-22T10:16:00Z'));
    assert.equal(headers['ratelimit'], '"minute";r=0;t=41');
    assert.equal(headers['x-ratelimit-limit'], '1200');
  });

  test('Retry-After is at least 1 even in the last millisecond of the window', () => {
    const decision: LimitDecision = { allowed: false, states: [state(second, 0, '2026-11-22T10:15:20Z')] };
    assert.equal(rateLimitHeaders(decision, at('2026-11-22T10:15:19.999Z'))['retry-after'], '1');
  });

  test('a tier without limits gets no rate-limit headers at all', () => {
    assert.deepEqual(rateLimitHeaders({ allowed: true, states: [] }, now), {});
  });

  test('a weighted request states what it took from each limit in RateLimit-Policy', () => {
    const decision: LimitDecision = {
      allowed: true,
      states: [state(minute, 0, '2026-11-22T10:16:00Z'), state(day, 960, '2026-11-23T00:00:00Z')],
    };
    // 40 units: the whole minute limit (30), and 40 of the day.
    assert.equal(
      rateLimitHeaders(decision, now, 40)['ratelimit-policy'],
      '"minute";q=30;w=60;pricepoint-cost=30, "day";q=1000;w=86400;pricepoint-cost=40',
    );
    assert.equal(
      rateLimitHeaders(decision, now, 1)['ratelimit-policy'],
      '"minute";q=30;w=60, "day";q=1000;w=86400',
    );
  });

  test('a weighted refusal names the limit that had too few units left, though not none', () => {
    const decision: LimitDecision = {
      allowed: false,
      states: [state(minute, 20, '2026-11-22T10:16:00Z'), state(day, 3, '2026-11-23T00:00:00Z')],
    };
    const headers = rateLimitHeaders(decision, now, 5);
    assert.equal(headers['ratelimit'], `"day";r=3;t=${(at('2026-11-23T00:00:00Z') - now) / 1000}`);
    assert.equal(headers['retry-after'], String((at('2026-11-23T00:00:00Z') - now) / 1000));
    assert.deepEqual(
      shortLimits(decision, 5).map((s) => s.rule.name),
      ['day'],
    );
    assert.deepEqual(
      shortLimits(decision, 25).map((s) => s.rule.name),
      ['minute', 'day'],
    );
  });
});
