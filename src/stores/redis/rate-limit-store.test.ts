import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import {
  deleteKeysUnder,
  inspectClient,
  keysUnder,
  REDIS_TEST_URL,
  redisSkipReason,
  testPrefix,
  whenReady,
} from '../../../test/helpers/redis.js';
import { describeOrSkip } from '../../../test/helpers/skip.js';
import { rateLimitBehaviour } from '../../../test/stores/rate-limit-behaviour.js';
import { type LimitDecision, windowOf } from '../../domain/limits/fixed-window.js';
import type { LimitRule } from '../../domain/limits/tiers.js';
import { MemoryRateLimitStore } from '../memory/rate-limit-store.js';
import { redisCommandOptions } from './index.js';
import { COUNTER_MARGIN_MS, RedisRateLimitStore } from './rate-limit-store.js';

const skip = await redisSkipReason();

const rule = (name: string, limit: number, windowSeconds: number): LimitRule => ({
  name,
  limit,
  windowSeconds,
});
const hour = (limit: number) => rule('hour', limit, 3600);
const day = (limit: number) => rule('day', limit, 86_400);

/** What each limit has left, by name. */
const remaining = (decision: LimitDecision) =>
  Object.fromEntries(decision.states.map((s) => [s.rule.name, s.remaining]));

/** Redis' clock, in epoch ms. */
async function redisNowMs(client: Redis): Promise<number> {
  const [seconds, micros] = await client.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** Waits for the next window if fewer than `needMs` are left in this one (by Redis' clock). */
async function clearOfBoundary(client: Redis, windowSeconds: number, needMs: number): Promise<void> {
  const now = await redisNowMs(client);
  const left = windowOf(now, windowSeconds).resetAtMs - now;
  if (left < needMs) await sleep(left + 20);
}

describeOrSkip('RedisRateLimitStore', { skip }, () => {
  const prefix = testPrefix();
  let inspect: Redis;
  let clients: Redis[] = [];
  let store: RedisRateLimitStore;

  before(async () => {
    inspect = inspectClient();
    // Five connections, as five instances would have; a generous timeout for a busy test machine.
    clients = Array.from({ length: 5 }, () => new Redis(REDIS_TEST_URL, redisCommandOptions(2000)));
    await Promise.all(clients.map(whenReady));
    store = new RedisRateLimitStore(clients[0]!, prefix);
  });

  after(async () => {
    await deleteKeysUnder(inspect, prefix);
    await Promise.all([inspect, ...clients].map((c) => c.quit()));
  });

  test('takes one unit from every limit and reports the reset of the window by Redis time', async () => {
    const before = await redisNowMs(inspect);
    const decision = await store.consume('key:first', [hour(30), day(1000)], Date.now());
    const afterwards = await redisNowMs(inspect);
    assert.equal(decision.allowed, true);
    assert.deepEqual(remaining(decision), { hour: 29, day: 999 });
    for (const state of decision.states) {
      const possible = [before, afterwards].map((t) => windowOf(t, state.rule.windowSeconds).resetAtMs);
      assert.ok(
        possible.includes(state.resetAtMs),
        `${state.rule.name} resets at a window end by Redis time`,
      );
    }
  });

  test('of 500 simultaneous requests from five connections against a limit of 37, exactly 37 pass', async () => {
    await clearOfBoundary(inspect, 86_400, 60_000);
    const stores = clients.map((c) => new RedisRateLimitStore(c, prefix));
    const limits = [day(37)];
    const decisions = await Promise.all(
      Array.from({ length: 500 }, (_, i) =>
        stores[i % stores.length]!.consume('key:busy', limits, Date.now()),
      ),
    );
    const allowed = decisions.filter((d) => d.allowed);
    assert.equal(allowed.length, 37);
    // Every allowed request took a different unit.
    const left = allowed.map((d) => remaining(d)['day'] ?? -1).sort((a, b) => a - b);
    assert.deepEqual(
      left,
      Array.from({ length: 37 }, (_, i) => i),
    );
    const key = (await keysUnder(inspect, `${prefix}rl:86400:`)).find((k) => k.endsWith(':key:busy:day'));
    assert.ok(key !== undefined, 'the counter exists');
    assert.equal(await inspect.get(key), '37', 'refusals took nothing');
  });

  test('all or nothing: a refusal by the hour limit takes nothing from the day limit', async () => {
    await clearOfBoundary(inspect, 3600, 10_000);
    const limits = [hour(2), day(10)];
    assert.equal((await store.consume('key:both', limits, Date.now())).allowed, true);
    assert.equal((await store.consume('key:both', limits, Date.now())).allowed, true);
    for (let i = 0; i < 3; i++) {
      const refused = await store.consume('key:both', limits, Date.now());
      assert.equal(refused.allowed, false);
      assert.deepEqual(remaining(refused), { hour: 0, day: 8 });
    }
    assert.deepEqual(remaining(await store.peek('key:both', limits, Date.now())), { hour: 0, day: 8 });
  });

  test('all or nothing: a refusal by the day limit takes nothing from the hour limit', async () => {
    await clearOfBoundary(inspect, 3600, 10_000);
    const limits = [hour(10), day(3)];
    for (let i = 0; i < 3; i++) {
      assert.equal((await store.consume('key:daily', limits, Date.now())).allowed, true);
    }
    const refused = await store.consume('key:daily', limits, Date.now());
    assert.equal(refused.allowed, false);
    assert.deepEqual(remaining(refused), { hour: 7, day: 0 });
  });

  test('the window comes from Redis clock: a wildly wrong app clock changes nothing', async () => {
    await clearOfBoundary(inspect, 3600, 10_000);
    const limits = [hour(3)];
    const wrongClocks = [0, Date.parse('2099-01-01T00:00:00Z'), Date.now() - 7 * 86_400_000];
    const decisions: LimitDecision[] = [];
    for (const nowMs of wrongClocks) decisions.push(await store.consume('key:skewed', limits, nowMs));
    const refused = await store.consume('key:skewed', limits, 123);
    // One window, counted as one: the clocks passed in were ignored.
    assert.deepEqual(
      decisions.map((d) => remaining(d)['hour']),
      [2, 1, 0],
    );
    assert.equal(refused.allowed, false);
    const expected = windowOf(await redisNowMs(inspect), 3600).resetAtMs;
    for (const d of [...decisions, refused]) assert.equal(d.states[0]?.resetAtMs, expected);
  });

  test('every counter has an expiry at its window end, and a counter that lost it gets it back', async () => {
    await clearOfBoundary(inspect, 3600, 10_000);
    const limits = [hour(5), day(50)];
    const decision = await store.consume('key:ttl', limits, Date.now());
    const keys = await keysUnder(inspect, prefix);
    const ttlKeys = keys.filter((k) => k.endsWith(':key:ttl:hour') || k.endsWith(':key:ttl:day'));
    assert.equal(ttlKeys.length, 2);
    const now = await redisNowMs(inspect);
    for (const key of ttlKeys) {
      const pttl = await inspect.pttl(key);
      const state = decision.states.find((s) => key.endsWith(`:${s.rule.name}`));
      assert.ok(state !== undefined, `a state for ${key}`);
      assert.ok(pttl > 0, `${key} expires (pttl ${pttl})`);
      assert.ok(pttl <= state.resetAtMs + COUNTER_MARGIN_MS - now + 50, `${key} expires by its window end`);
    }

    // A counter without an expiry (a PERSIST, a crash between INCR and PEXPIREAT) gets one again,
    // on a consume, on a refusal and on a peek alike.
    const hourKey = ttlKeys.find((k) => k.endsWith(':hour'))!;
    const actions = [
      () => store.consume('key:ttl', limits, Date.now()),
      () => store.peek('key:ttl', limits, Date.now()),
      () => store.consume('key:ttl', [hour(1)], Date.now()),
    ];
    for (const action of actions) {
      await inspect.persist(hourKey);
      assert.equal(await inspect.pttl(hourKey), -1);
      await action();
      assert.ok((await inspect.pttl(hourKey)) > 0, 'the counter has an expiry again');
    }
  });

  test('the first request after the window ends is accepted (1-second window, by Redis clock)', async () => {
    const limits = [rule('second', 2, 1)];
    // A busy machine may push the three requests across a boundary; then try again, in a new second.
    for (let attempt = 0; attempt < 5; attempt++) {
      await clearOfBoundary(inspect, 1, 600);
      const subject = `key:edge:${attempt}`;
      const first = await store.consume(subject, limits, Date.now());
      await store.consume(subject, limits, Date.now());
      const refused = await store.consume(subject, limits, Date.now());
      const resetAtMs = first.states[0]!.resetAtMs;
      if (refused.states[0]?.resetAtMs !== resetAtMs) continue;
      assert.equal(refused.allowed, false);

      await sleep(Math.max(0, resetAtMs - (await redisNowMs(inspect))) + 5);
      while ((await redisNowMs(inspect)) < resetAtMs) await sleep(5);
      const next = await store.consume(subject, limits, Date.now());
      assert.equal(next.allowed, true);
      assert.equal(next.states[0]?.remaining, 1);
      assert.ok((next.states[0]?.resetAtMs ?? 0) > resetAtMs, 'a new window');
      return;
    }
    assert.fail('never managed three requests within one second');
  });

  test('peek takes nothing and creates no counter', async () => {
    await clearOfBoundary(inspect, 3600, 10_000);
    const limits = [hour(4), day(40)];
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(remaining(await store.peek('key:peek', limits, Date.now())), { hour: 4, day: 40 });
    }
    assert.deepEqual(await keysUnder(inspect, `${prefix}rl:3600:*:key:peek:`), []);
    await store.consume('key:peek', limits, Date.now());
    for (let i = 0; i < 3; i++) {
      const peeked = await store.peek('key:peek', limits, Date.now());
      assert.equal(peeked.allowed, true);
      assert.deepEqual(remaining(peeked), { hour: 3, day: 39 });
    }
  });

  test('answers exactly like the in-memory store for the same sequence', async () => {
    await clearOfBoundary(inspect, 3600, 10_000);
    const memory = new MemoryRateLimitStore();
    const now = await redisNowMs(inspect);
    const sets = { both: [hour(3), day(5)], dayOnly: [day(5)], hourOnly: [hour(3)] };
    const steps: ['consume' | 'peek', keyof typeof sets][] = [
      ['consume', 'both'],
      ['peek', 'both'],
      ['consume', 'both'],
      ['consume', 'dayOnly'],
      ['consume', 'both'],
      ['consume', 'both'],
      ['peek', 'hourOnly'],
      ['consume', 'dayOnly'],
      ['consume', 'dayOnly'],
      ['consume', 'both'],
      ['peek', 'both'],
    ];
    for (const [i, [op, set]] of steps.entries()) {
      const limits = sets[set];
      const fromRedis = await store[op]('key:parity', limits, now);
      const fromMemory = await memory[op]('key:parity', limits, now);
      assert.deepEqual(fromRedis, fromMemory, `step ${i}: ${op} ${set}`);
    }
  });

  describe('weighted requests and units given back', () => {
    let subjects = 0;
    rateLimitBehaviour(() => ({
      store,
      now: () => Date.now(),
      ready: (windowSeconds, needMs) => clearOfBoundary(inspect, windowSeconds, needMs),
      fresh: () => `key:weighted:${subjects++}`,
    }));

    test('weighted counting and giving back answer exactly like the in-memory store', async () => {
      await clearOfBoundary(inspect, 3600, 10_000);
      const memory = new MemoryRateLimitStore();
      const now = await redisNowMs(inspect);
      const limits = [hour(9), day(20)];
      const taken: Record<string, LimitDecision> = {};
      for (const [i, cost] of [4, 3, 4, 2, 9, 1].entries()) {
        const fromRedis = await store.consume('key:weighted-parity', limits, now, cost);
        const fromMemory = await memory.consume('key:weighted-parity', limits, now, cost);
        assert.deepEqual(fromRedis, fromMemory, `step ${i}: cost ${cost}`);
        taken[i] = fromRedis;
        if (i === 2) {
          await store.giveBack('key:weighted-parity', fromRedis, cost);
          await memory.giveBack('key:weighted-parity', fromMemory, cost);
        }
      }
      assert.deepEqual(
        await store.peek('key:weighted-parity', limits, now),
        await memory.peek('key:weighted-parity', limits, now),
      );
    });

    test('a counter given back keeps its expiry', async () => {
      await clearOfBoundary(inspect, 3600, 10_000);
      const taken = await store.consume('key:give-back-ttl', [hour(5)], Date.now(), 3);
      await store.giveBack('key:give-back-ttl', taken, 2);
      const [key] = await keysUnder(inspect, `${prefix}rl:3600:`).then((k) =>
        k.filter((name) => name.endsWith(':key:give-back-ttl:hour')),
      );
      assert.ok(key !== undefined);
      assert.equal(await inspect.get(key), '1');
      assert.ok((await inspect.pttl(key)) > 0, 'still expires');
    });
  });

  test('consumeWithin reads the gate and counts the request in one script, like the in-memory store', async () => {
    await clearOfBoundary(inspect, 3600, 10_000);
    const memory = new MemoryRateLimitStore();
    const now = await redisNowMs(inspect);
    const gate = { subject: 'auth-failures:gate', limits: [hour(2)] };
    const limits = [hour(3), day(5)];
    const both = async (what: string, step: (s: RedisRateLimitStore | MemoryRateLimitStore) => unknown) => {
      const fromRedis = await step(store);
      const fromMemory = await step(memory);
      assert.deepEqual(fromRedis, fromMemory, what);
      return fromRedis;
    };
    const behind = (s: RedisRateLimitStore | MemoryRateLimitStore) =>
      s.consumeWithin(gate, 'key:behind', limits, now);
    const first = (await both('an open gate', behind)) as LimitDecision;
    assert.deepEqual(remaining(first), { hour: 2, day: 4 }, 'the request is counted');
    await both('the gate is only read', (s) => s.peek(gate.subject, gate.limits, now));
    assert.deepEqual(
      await keysUnder(inspect, `${prefix}rl:3600:*:auth-failures:gate:`),
      [],
      'no gate counter made',
    );
    await both('one failure', (s) => s.consume(gate.subject, gate.limits, now));
    await both('two failures', (s) => s.consume(gate.subject, gate.limits, now));
    assert.equal(await both('a shut gate', behind), undefined, 'a shut gate answers undefined');
    await both('nothing was taken behind the shut gate', (s) => s.peek('key:behind', limits, now));
    const open = { subject: 'auth-failures:other', limits: [hour(2)] };
    for (let i = 0; i < 3; i++)
      await both(`request ${i + 2}`, (s) => s.consumeWithin(open, 'key:behind', limits, now));
    const refused = (await both('used up', (s) =>
      s.consumeWithin(open, 'key:behind', limits, now),
    )) as LimitDecision;
    assert.equal(refused.allowed, false, 'a used-up limit behind an open gate is refused');
  });

  test('requests of one turn share one script call, each decided as if it had its own', async () => {
    await clearOfBoundary(inspect, 3600, 10_000);
    const client = clients[1] as Redis;
    let calls = 0;
    // The store's client, counting its script calls.
    const counting = Object.create(client) as Redis;
    counting.evalsha = ((...args: Parameters<Redis['evalsha']>) => {
      calls += 1;
      return client.evalsha(...args);
    }) as Redis['evalsha'];
    const batched = new RedisRateLimitStore(counting, prefix);
    const memory = new MemoryRateLimitStore();
    const now = await redisNowMs(inspect);
    const limits = [hour(7), day(9)];
    const gate = { subject: 'auth-failures:turn', limits: [hour(1)] };
    // Twelve requests in one turn: counted, behind a gate, only read, one weighing three units.
    const steps = (s: RedisRateLimitStore | MemoryRateLimitStore) => [
      ...Array.from({ length: 4 }, () => s.consume('key:turn', limits, now)),
      s.consumeWithin(gate, 'key:turn', limits, now, 3),
      s.peek('key:turn', limits, now),
      ...Array.from({ length: 4 }, () => s.consumeWithin(gate, 'key:turn', limits, now)),
      s.consume(gate.subject, gate.limits, now),
      s.consumeWithin(gate, 'key:turn', limits, now),
    ];
    const fromRedis = await Promise.all(steps(batched));
    assert.equal(calls, 1, 'one script call for the turn');
    const fromMemory: unknown[] = [];
    for (const step of steps(memory)) fromMemory.push(await step);
    assert.deepEqual(fromRedis, fromMemory);
    // The limit of seven was reached in order: four, three more for the heavy one; then the read
    // finds no unit left and later requests are refused, until the failure shuts the gate.
    const allowed = fromRedis.map((d) => (d === undefined ? 'shut' : d.allowed));
    assert.deepEqual(allowed, [
      true,
      true,
      true,
      true,
      true,
      false,
      false,
      false,
      false,
      false,
      true,
      'shut',
    ]);
  });
});
