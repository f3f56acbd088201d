import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { rateLimitBehaviour } from '../../../test/stores/rate-limit-behaviour.js';
import type { LimitRule } from '../../domain/limits/tiers.js';
import { MemoryRateLimitStore } from './rate-limit-store.js';

const at = (iso: string): number => Date.parse(iso);
const NOW = at('2026-11-22T10:15:03.120Z');
const perSecond = (limit: number): LimitRule => ({ name: 'second', limit, windowSeconds: 1 });
const perMinute = (limit: number): LimitRule => ({ name: 'minute', limit, windowSeconds: 60 });
const perDay = (limit: number): LimitRule => ({ name: 'day', limit, windowSeconds: 86_400 });

/** What each limit has left, by name. */
function remaining(decision: { states: readonly { rule: LimitRule; remaining: number }[] }) {
  return Object.fromEntries(decision.states.map((s) => [s.rule.name, s.remaining]));
}

describe('MemoryRateLimitStore.consume', () => {
  test('takes one unit from every limit of the tier and reports what is left and when it resets', async () => {
    const store = new MemoryRateLimitStore();
    const decision = await store.consume('key:a', [perMinute(30), perDay(1000)], NOW);
    assert.equal(decision.allowed, true);
    assert.deepEqual(decision.states, [
      { rule: perMinute(30), remaining: 29, resetAtMs: at('2026-11-22T10:16:00Z') },
      { rule: perDay(1000), remaining: 999, resetAtMs: at('2026-11-23T00:00:00Z') },
    ]);
  });

  test('of N requests against a limit L in one window, exactly L are allowed', async () => {
    const store = new MemoryRateLimitStore();
    const limits = [perMinute(25)];
    const decisions = await Promise.all(
      Array.from({ length: 250 }, () => store.consume('key:a', limits, NOW)),
    );
    assert.equal(decisions.filter((d) => d.allowed).length, 25);
    // Every allowed request saw a different count: no two took the same unit.
    const left = decisions.filter((d) => d.allowed).map((d) => remaining(d)['minute']);
    assert.deepEqual(
      left.sort((a, b) => (a ?? 0) - (b ?? 0)),
      Array.from({ length: 25 }, (_, i) => i),
    );
  });

  test('all or nothing: when the second limit is used up, the minute limit is not charged', async () => {
    const store = new MemoryRateLimitStore();
    const limits = [perSecond(2), perMinute(10)];
    assert.equal((await store.consume('key:a', limits, NOW)).allowed, true);
    assert.equal((await store.consume('key:a', limits, NOW)).allowed, true);
    for (let i = 0; i < 5; i++) {
      const refused = await store.consume('key:a', limits, NOW);
      assert.equal(refused.allowed, false);
      assert.deepEqual(remaining(refused), { second: 0, minute: 8 });
    }
    // In the next second, the minute limit shows only the two accepted requests.
    const next = await store.consume('key:a', limits, NOW + 1000);
    assert.equal(next.allowed, true);
    assert.deepEqual(remaining(next), { second: 1, minute: 7 });
  });

  test('all or nothing: a refusal by the day limit takes nothing from the minute limit', async () => {
    const store = new MemoryRateLimitStore();
    const limits = [perMinute(10), perDay(3)];
    for (let i = 0; i < 3; i++) assert.equal((await store.consume('key:a', limits, NOW)).allowed, true);
    const refused = await store.consume('key:a', limits, NOW);
    assert.equal(refused.allowed, false);
    assert.deepEqual(remaining(refused), { minute: 7, day: 0 });
    assert.deepEqual(remaining(await store.peek('key:a', limits, NOW)), { minute: 7, day: 0 });
  });

  test('the last request of a window is refused and the first one after its end is accepted', async () => {
    const store = new MemoryRateLimitStore();
    const limits = [perMinute(3)];
    for (let i = 0; i < 3; i++) await store.consume('key:a', limits, NOW);
    assert.equal((await store.consume('key:a', limits, at('2026-11-22T10:15:59.999Z'))).allowed, false);
    const after = await store.consume('key:a', limits, at('2026-11-22T10:16:00.000Z'));
    assert.equal(after.allowed, true);
    assert.deepEqual(after.states[0], {
      rule: perMinute(3),
      remaining: 2,
      resetAtMs: at('2026-11-22T10:17:00.000Z'),
    });
  });

  test('a day limit is given back at 00:00 UTC', async () => {
    const store = new MemoryRateLimitStore();
    const limits = [perDay(1)];
    assert.equal((await store.consume('key:a', limits, at('2026-11-22T23:59:59.000Z'))).allowed, true);
    assert.equal((await store.consume('key:a', limits, at('2026-11-22T23:59:59.999Z'))).allowed, false);
    assert.equal((await store.consume('key:a', limits, at('2026-11-23T00:00:00.000Z'))).allowed, true);
  });

  test('subjects are counted apart', async () => {
    const store = new MemoryRateLimitStore();
    const limits = [perMinute(1)];
    assert.equal((await store.consume('key:a', limits, NOW)).allowed, true);
    assert.equal((await store.consume('key:a', limits, NOW)).allowed, false);
    assert.equal((await store.consume('key:b', limits, NOW)).allowed, true);
  });

  test('two limits with the same length but different names are counted apart', async () => {
    const store = new MemoryRateLimitStore();
    const a = [{ name: 'burst', limit: 2, windowSeconds: 60 }];
    const b = [{ name: 'minute', limit: 2, windowSeconds: 60 }];
    await store.consume('key:a', a, NOW);
    await store.consume('key:a', a, NOW);
    assert.equal((await store.consume('key:a', a, NOW)).allowed, false);
    assert.equal((await store.consume('key:a', b, NOW)).allowed, true);
  });
});

describe('MemoryRateLimitStore.peek', () => {
  test('reports what is left without taking anything', async () => {
    const store = new MemoryRateLimitStore();
    const limits = [perMinute(2), perDay(100)];
    await store.consume('key:a', limits, NOW);
    for (let i = 0; i < 10; i++) {
      const seen = await store.peek('key:a', limits, NOW);
      assert.equal(seen.allowed, true);
      assert.deepEqual(remaining(seen), { minute: 1, day: 99 });
    }
    assert.equal((await store.consume('key:a', limits, NOW)).allowed, true);
    const usedUp = await store.peek('key:a', limits, NOW);
    assert.equal(usedUp.allowed, false);
    assert.deepEqual(remaining(usedUp), { minute: 0, day: 98 });
  });

  test('an unknown subject has the whole budget', async () => {
    const store = new MemoryRateLimitStore();
    const seen = await store.peek('key:nobody', [perMinute(30)], NOW);
    assert.deepEqual(seen, {
      allowed: true,
      states: [{ rule: perMinute(30), remaining: 30, resetAtMs: at('2026-11-22T10:16:00Z') }],
    });
  });
});

describe('MemoryRateLimitStore memory', () => {
  test('100,000 distinct callers in one window are forgotten once the windows have passed', async () => {
    const store = new MemoryRateLimitStore();
    const demo = [perMinute(30), perDay(1000)];
    for (let i = 0; i < 100_000; i++)
      await store.consume(`key:demo:10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, demo, NOW);
    assert.equal(store.size, 200_000); // one minute and one day counter each

    const nextDay = at('2026-11-23T00:00:01Z');
    const decision = await store.consume('key:demo:192.0.2.1', demo, nextDay);
    assert.equal(decision.allowed, true);
    assert.equal(store.size, 2);
  });

  test('counters of the current window survive while older windows are dropped', async () => {
    const store = new MemoryRateLimitStore();
    const demo = [perMinute(30), perDay(1000)];
    for (let i = 0; i < 1000; i++) await store.consume(`key:${i}`, demo, NOW);
    // A minute later: the minute counters go, the day counters of today stay.
    await store.consume('key:late', demo, NOW + 60_000);
    assert.equal(store.size, 1 + 1001);
    assert.deepEqual(remaining(await store.peek('key:0', demo, NOW + 60_000)), { minute: 30, day: 999 });
  });

  test('a window length nobody uses any more is dropped once its window has ended', async () => {
    // 100,000 callers of a tier with a day limit, then only callers of a per-second tier: the day
    // counters of a finished day are history and must not stay in memory.
    const store = new MemoryRateLimitStore();
    for (let i = 0; i < 100_000; i++) await store.consume(`key:${i}`, [perDay(1000)], NOW);
    await store.consume('key:enterprise', [perSecond(200)], at('2026-11-23T00:00:01Z'));
    assert.equal(store.size, 1);
  });
});

describe('MemoryRateLimitStore.consumeWithin', () => {
  test('counts behind an open gate, takes nothing behind a shut one, and never takes from the gate', async () => {
    const store = new MemoryRateLimitStore();
    const gate = { subject: 'auth-failures:10.0.0.1', limits: [perMinute(2)] };
    const limits = [perMinute(3)];
    const first = await store.consumeWithin(gate, 'key:a', limits, NOW);
    assert.deepEqual(first && remaining(first), { minute: 2 }, 'counted behind an open gate');
    assert.deepEqual(
      remaining(await store.peek(gate.subject, gate.limits, NOW)),
      { minute: 2 },
      'the gate untouched',
    );
    await store.consume(gate.subject, gate.limits, NOW);
    await store.consume(gate.subject, gate.limits, NOW);
    assert.equal(
      await store.consumeWithin(gate, 'key:a', limits, NOW),
      undefined,
      'a shut gate answers undefined',
    );
    assert.deepEqual(remaining(await store.peek('key:a', limits, NOW)), { minute: 2 }, 'and takes nothing');
    const other = { subject: 'auth-failures:10.0.0.2', limits: [perMinute(2)] };
    await store.consumeWithin(other, 'key:a', limits, NOW);
    await store.consumeWithin(other, 'key:a', limits, NOW);
    const usedUp = await store.consumeWithin(other, 'key:a', limits, NOW);
    assert.equal(usedUp?.allowed, false, 'a used-up limit behind an open gate is refused');
    assert.deepEqual(usedUp && remaining(usedUp), { minute: 0 }, 'with what is left');
  });
});

describe('MemoryRateLimitStore: weighted requests and units given back', () => {
  const store = new MemoryRateLimitStore();
  let subjects = 0;
  rateLimitBehaviour(() => ({
    store,
    now: () => NOW,
    ready: async () => {},
    fresh: () => `key:weighted:${subjects++}`,
  }));

  test('a unit given back after its window rolled over is not returned to the new window', async () => {
    const limits = [perMinute(5)];
    const taken = await store.consume('key:late-give-back', limits, NOW, 2);
    await store.consume('key:late-give-back', limits, NOW + 60_000);
    await store.giveBack('key:late-give-back', taken, 2);
    assert.deepEqual(remaining(await store.peek('key:late-give-back', limits, NOW + 60_000)), { minute: 4 });
  });
});
