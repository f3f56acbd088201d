/**
 * What every `RateLimitStore` must do with weighted requests and with units given back (
 * docs/using-the-api.md "Rate limits"): one set of tests, run against the in-process store and against Redis by their
 * own test files. `nowMs` is what the caller passes; Redis ignores it and counts by its own clock,
 * so `ready` may wait for a window to have room before a test starts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type LimitDecision, windowOf } from '../../src/domain/limits/fixed-window.js';
import type { LimitRule } from '../../src/domain/limits/tiers.js';
import type { RateLimitStore } from '../../src/stores/types.js';

export interface RateLimitSubject {
  readonly store: RateLimitStore;
  /** The time to pass as `nowMs`. */
  now(): number;
  /** Resolves when at least `needMs` are left in the current window of `windowSeconds`. */
  ready(windowSeconds: number, needMs: number): Promise<void>;
  /** A subject no other test has used. */
  fresh(): string;
}

const hour = (limit: number): LimitRule => ({ name: 'hour', limit, windowSeconds: 3600 });
const day = (limit: number): LimitRule => ({ name: 'day', limit, windowSeconds: 86_400 });

/** What each limit has left, by name. */
const remaining = (decision: LimitDecision | undefined) =>
  Object.fromEntries((decision?.states ?? []).map((s) => [s.rule.name, s.remaining]));

export function rateLimitBehaviour(open: () => RateLimitSubject): void {
  test('a request of cost N takes N units from every limit, and is refused whole when fewer are left', async () => {
    const { store, now, ready, fresh } = open();
    await ready(86_400, 30_000);
    const subject = fresh();
    const limits = [hour(12), day(100)];
    const first = await store.consume(subject, limits, now(), 5);
    assert.equal(first.allowed, true);
    assert.deepEqual(remaining(first), { hour: 7, day: 95 });
    assert.deepEqual(remaining(await store.consume(subject, limits, now(), 5)), { hour: 2, day: 90 });

    const refused = await store.consume(subject, limits, now(), 3);
    assert.equal(refused.allowed, false, 'three units asked, two left');
    assert.deepEqual(remaining(refused), { hour: 2, day: 90 }, 'a refusal takes nothing, from no limit');
    const exact = await store.consume(subject, limits, now(), 2);
    assert.equal(exact.allowed, true, 'exactly what is left is allowed');
    assert.deepEqual(remaining(exact), { hour: 0, day: 88 });
    assert.equal((await store.consume(subject, limits, now())).allowed, false);
    assert.deepEqual(remaining(await store.peek(subject, limits, now())), { hour: 0, day: 88 });
  });

  test('a cost above a limit takes the whole of that limit, so it passes in a fresh window', async () => {
    const { store, now, ready, fresh } = open();
    await ready(86_400, 30_000);
    const subject = fresh();
    const limits = [hour(5), day(100)];
    const heavy = await store.consume(subject, limits, now(), 8);
    assert.equal(heavy.allowed, true);
    assert.deepEqual(remaining(heavy), { hour: 0, day: 92 });
    const next = await store.consume(subject, limits, now(), 8);
    assert.equal(next.allowed, false, 'the hour is used up');
    assert.deepEqual(remaining(next), { hour: 0, day: 92 });
  });

  test('of 60 simultaneous requests of cost 3 against a limit of 100, exactly 33 pass and 99 units are taken', async () => {
    const { store, now, ready, fresh } = open();
    await ready(86_400, 30_000);
    const subject = fresh();
    const limits = [day(100)];
    const decisions = await Promise.all(
      Array.from({ length: 60 }, () => store.consume(subject, limits, now(), 3)),
    );
    const allowed = decisions.filter((d) => d.allowed);
    assert.equal(allowed.length, 33);
    assert.deepEqual(
      allowed.map((d) => remaining(d)['day']).sort((a = 0, b = 0) => a - b),
      Array.from({ length: 33 }, (_, i) => 1 + 3 * i),
      'every allowed request took three units of its own',
    );
    assert.deepEqual(remaining(await store.peek(subject, limits, now())), { day: 1 });
  });

  test('consumeWithin takes the cost behind an open gate and reads the gate for one unit', async () => {
    const { store, now, ready, fresh } = open();
    await ready(86_400, 30_000);
    const gate = { subject: fresh(), limits: [hour(1)] };
    const subject = fresh();
    const limits = [day(10)];
    assert.deepEqual(remaining(await store.consumeWithin(gate, subject, limits, now(), 4)), { day: 6 });
    assert.deepEqual(
      remaining(await store.peek(gate.subject, gate.limits, now())),
      { hour: 1 },
      'gate untouched',
    );
    const refused = await store.consumeWithin(gate, subject, limits, now(), 7);
    assert.equal(refused?.allowed, false, 'seven units asked, six left');
    await store.consume(gate.subject, gate.limits, now());
    assert.equal(await store.consumeWithin(gate, subject, limits, now(), 1), undefined, 'a shut gate');
    assert.deepEqual(remaining(await store.peek(subject, limits, now())), { day: 6 });
  });

  test('giveBack returns the units a consume took, and never more than were taken', async () => {
    const { store, now, ready, fresh } = open();
    await ready(86_400, 30_000);
    const subject = fresh();
    const limits = [hour(10), day(100)];
    await store.consume(subject, limits, now(), 2);
    const taken = await store.consume(subject, limits, now(), 3);
    assert.deepEqual(remaining(taken), { hour: 5, day: 95 });
    await store.giveBack(subject, taken, 3);
    assert.deepEqual(remaining(await store.peek(subject, limits, now())), { hour: 8, day: 98 });

    // Given back twice, or more than was ever taken: the counters stop at zero.
    await store.giveBack(subject, taken, 3);
    await store.giveBack(subject, taken, 3);
    assert.deepEqual(remaining(await store.peek(subject, limits, now())), { hour: 10, day: 100 });
    assert.deepEqual(remaining(await store.consume(subject, limits, now())), { hour: 9, day: 99 });

    // A refusal took nothing, so it gives nothing back.
    const refused = await store.consume(subject, limits, now(), 10);
    assert.equal(refused.allowed, false);
    await store.giveBack(subject, refused, 10);
    assert.deepEqual(remaining(await store.peek(subject, limits, now())), { hour: 9, day: 99 });
  });

  test('giveBack leaves another window alone: units taken in a window that ended are not returned in the next', async () => {
    const { store, now, ready, fresh } = open();
    await ready(3600, 30_000);
    const subject = fresh();
    const limits = [hour(10)];
    const taken = await store.consume(subject, limits, now(), 4);
    const state = taken.states[0]!;
    // The same units, as if they had been taken in the previous hour.
    const earlier: LimitDecision = {
      allowed: true,
      states: [{ ...state, resetAtMs: windowOf(state.resetAtMs - 3_600_001, 3600).resetAtMs }],
    };
    await store.giveBack(subject, earlier, 4);
    assert.deepEqual(remaining(await store.peek(subject, limits, now())), { hour: 6 });
  });

  test('a cost that is not a positive whole number is refused as a bug', async () => {
    const { store, now, fresh } = open();
    for (const cost of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await assert.rejects(
        async () => store.consume(fresh(), [day(10)], now(), cost),
        RangeError,
        `cost ${cost}`,
      );
    }
  });
}
