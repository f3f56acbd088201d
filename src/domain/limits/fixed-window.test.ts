import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  bindingLimit,
  checkCost,
  type LimitDecision,
  type LimitState,
  secondsUntil,
  unitsOf,
  windowOf,
} from './fixed-window.js';
import type { LimitRule } from './tiers.js';

const at = (iso: string): number => Date.parse(iso);
const second: LimitRule = { name: 'second', limit: 20, windowSeconds: 1 };
const minute: LimitRule = { name: 'minute', limit: 30, windowSeconds: 60 };
const day: LimitRule = { name: 'day', limit: 1000, windowSeconds: 86_400 };

const state = (rule: LimitRule, remaining: number, resetAt: string): LimitState => ({
  rule,
  remaining,
  resetAtMs: at(resetAt),
});

describe('windowOf: fixed windows aligned to the Unix epoch', () => {
  test('a minute window runs from one whole UTC minute to the next', () => {
    const start = windowOf(at('2026-11-22T10:15:00.000Z'), 60);
    const inside = windowOf(at('2026-11-22T10:15:59.999Z'), 60);
    const next = windowOf(at('2026-11-22T10:16:00.000Z'), 60);
    assert.equal(inside.id, start.id);
    assert.equal(start.resetAtMs, at('2026-11-22T10:16:00.000Z'));
    assert.equal(inside.resetAtMs, at('2026-11-22T10:16:00.000Z'));
    assert.equal(next.id, start.id + 1);
    assert.equal(next.resetAtMs, at('2026-11-22T10:17:00.000Z'));
  });

  test('a day window resets at 00:00 UTC, not at local midnight anywhere else', () => {
    // 23:30 in New York is already the next UTC day; 00:30 in Oslo is still the previous one.
    const lateUtc = windowOf(at('2026-11-22T23:59:59.999Z'), 86_400);
    const midnightUtc = windowOf(at('2026-11-23T00:00:00.000Z'), 86_400);
    const earlyUtc = windowOf(at('2026-11-22T00:00:00.000Z'), 86_400);
    assert.equal(lateUtc.id, earlyUtc.id);
    assert.equal(lateUtc.resetAtMs, at('2026-11-23T00:00:00.000Z'));
    assert.equal(midnightUtc.id, lateUtc.id + 1);
    assert.equal(midnightUtc.resetAtMs, at('2026-11-24T00:00:00.000Z'));
    assert.equal(windowOf(at('2026-11-22T23:30:00-05:00'), 86_400).id, midnightUtc.id);
    assert.equal(windowOf(at('2026-11-23T00:30:00+01:00'), 86_400).id, lateUtc.id);
  });

  test('the window id counts windows since 1970-01-01T00:00:00Z', () => {
    assert.deepEqual(windowOf(0, 60), { id: 0, resetAtMs: 60_000 });
    assert.deepEqual(windowOf(59_999, 60), { id: 0, resetAtMs: 60_000 });
    assert.equal(windowOf(at('2026-11-22T00:00:00Z'), 86_400).id, 20_779);
  });

  test('odd window lengths are aligned to the epoch too, not to the first request', () => {
    // 7 s windows start at multiples of 7 s since the epoch; 10:15:00Z is one (1795342500 = 7 * 256477500),
    // so 10:15:03.120 lies in [10:15:00, 10:15:07) whenever the first request came.
    const { resetAtMs } = windowOf(at('2026-11-22T10:15:03.120Z'), 7);
    assert.equal(resetAtMs % 7000, 0);
    assert.equal(resetAtMs, at('2026-11-22T10:15:07.000Z'));
    assert.equal(windowOf(at('2026-11-22T10:15:07.000Z'), 7).resetAtMs, at('2026-11-22T10:15:14.000Z'));
  });

  test('a one-second window resets at the next whole second', () => {
    assert.equal(windowOf(at('2026-11-22T10:15:03.120Z'), 1).resetAtMs, at('2026-11-22T10:15:04.000Z'));
    assert.equal(windowOf(at('2026-11-22T10:15:03.000Z'), 1).resetAtMs, at('2026-11-22T10:15:04.000Z'));
  });
});

describe('secondsUntil', () => {
  const reset = at('2026-11-22T10:16:00.000Z');

  test('rounds up to whole seconds, so a client never retries too early', () => {
    assert.equal(secondsUntil(reset, at('2026-11-22T10:15:03.120Z')), 57);
    assert.equal(secondsUntil(reset, at('2026-11-22T10:15:00.000Z')), 60);
    assert.equal(secondsUntil(reset, at('2026-11-22T10:15:58.999Z')), 2);
    assert.equal(secondsUntil(reset, at('2026-11-22T10:15:59.000Z')), 1);
  });

  test('is at least 1, also at or after the reset itself', () => {
    assert.equal(secondsUntil(reset, at('2026-11-22T10:15:59.999Z')), 1);
    assert.equal(secondsUntil(reset, reset), 1);
    assert.equal(secondsUntil(reset, reset + 5000), 1);
  });
});

describe('bindingLimit: the limit a client should watch', () => {
  test('on an accepted request, the limit with the fewest requests left', () => {
    const decision: LimitDecision = {
      allowed: true,
      states: [state(minute, 12, '2026-11-22T10:16:00Z'), state(day, 900, '2026-11-23T00:00:00Z')],
    };
    assert.equal(bindingLimit(decision)?.rule.name, 'minute');
    const dayCloser: LimitDecision = {
      allowed: true,
      states: [state(minute, 29, '2026-11-22T10:16:00Z'), state(day, 3, '2026-11-23T00:00:00Z')],
    };
    assert.equal(bindingLimit(dayCloser)?.rule.name, 'day');
  });

  test('on a tie, the limit that resets last, since waiting for the other would not help', () => {
    const decision: LimitDecision = {
      allowed: true,
      states: [state(minute, 5, '2026-11-22T10:16:00Z'), state(day, 5, '2026-11-23T00:00:00Z')],
    };
    assert.equal(bindingLimit(decision)?.rule.name, 'day');
    const reversed: LimitDecision = { allowed: true, states: [...decision.states].reverse() };
    assert.equal(bindingLimit(reversed)?.rule.name, 'day');
  });

  test('on a refusal, a used-up limit even when another has fewer units in total', () => {
    // The second limit has 0 left; the minute limit has 3 left of a larger budget.
    const decision: LimitDecision = {
      allowed: false,
      states: [
        state(second, 0, '2026-11-22T10:15:04Z'),
        state({ ...minute, limit: 1200 }, 3, '2026-11-22T10:16:00Z'),
      ],
    };
    assert.equal(bindingLimit(decision)?.rule.name, 'second');
  });

  test('on a refusal with several limits used up, the one that resets last', () => {
    const decision: LimitDecision = {
      allowed: false,
      states: [
        state(second, 0, '2026-11-22T10:15:04Z'),
        state(minute, 0, '2026-11-22T10:16:00Z'),
        state(day, 7, '2026-11-23T00:00:00Z'),
      ],
    };
    assert.equal(bindingLimit(decision)?.rule.name, 'minute');
  });

  test('a tier without limits has nothing to watch', () => {
    assert.equal(bindingLimit({ allowed: true, states: [] }), undefined);
  });
});

describe('unitsOf and checkCost: what a weighted request takes', () => {
  test('a cost takes itself from a limit, or the whole limit when it is larger', () => {
    assert.equal(unitsOf(minute, 1), 1);
    assert.equal(unitsOf(minute, 30), 30);
    assert.equal(unitsOf(minute, 31), 30);
  });

  test('a cost must be a positive whole number', () => {
    for (const cost of [1, 7, Number.MAX_SAFE_INTEGER]) checkCost(cost);
    for (const cost of [0, -3, 0.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      assert.throws(() => checkCost(cost), RangeError, String(cost));
    }
  });
});
