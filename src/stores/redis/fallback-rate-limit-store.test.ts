import assert from 'node:assert/strict';
import { after, before, describe, type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import {
  deleteKeysUnder,
  inspectClient,
  keysUnder,
  REDIS_TEST_PORT,
  redisSkipReason,
  testPrefix,
  whenReady,
} from '../../../test/helpers/redis.js';
import { startTcpProxy } from '../../../test/helpers/tcp-proxy.js';
import { ApiError } from '../../domain/errors/api-error.js';
import type { LimitRule } from '../../domain/limits/tiers.js';
import { MemoryRateLimitStore } from '../memory/rate-limit-store.js';
import { type FallbackPolicy, FallbackRateLimitStore } from './fallback-rate-limit-store.js';
import { openRedis, redisCommandOptions } from './index.js';
import { RedisRateLimitStore } from './rate-limit-store.js';

const skip = await redisSkipReason();
const limits: LimitRule[] = [{ name: 'day', limit: 3, windowSeconds: 86_400 }];

describe('FallbackRateLimitStore over a Redis that goes away', { skip }, () => {
  const prefix = testPrefix();
  let inspect: Redis;

  before(() => {
    inspect = inspectClient();
  });
  after(async () => {
    await deleteKeysUnder(inspect, prefix);
    await inspect.quit();
  });

  /** The day counter of `subject` as Redis holds it (0 when there is none). */
  async function sharedCount(subject: string): Promise<number> {
    const keys = await keysUnder(inspect, `${prefix}rl:86400:`);
    const key = keys.find((k) => k.endsWith(`:${subject}:day`));
    return key === undefined ? 0 : Number(await inspect.get(key));
  }

  /** One instance: its own connection through a proxy the test can cut, its own local counters. */
  async function instance(t: TestContext, policy: FallbackPolicy, proxyPort: number) {
    const client = new Redis(`redis://127.0.0.1:${proxyPort}`, redisCommandOptions(250));
    client.on('error', () => {});
    t.after(() => client.disconnect());
    await whenReady(client);
    const fallbacks: FallbackPolicy[] = [];
    const store = new FallbackRateLimitStore(
      new RedisRateLimitStore(client, prefix),
      new MemoryRateLimitStore(),
      {
        policy,
        backoffMs: 100,
        onFallback: (decision, error) => {
          assert.ok(error instanceof Error, 'the fallback is told the error');
          fallbacks.push(decision);
        },
      },
    );
    return { client, store, fallbacks };
  }

  async function proxy(t: TestContext) {
    const started = await startTcpProxy(REDIS_TEST_PORT);
    t.after(() => started.close());
    return started;
  }

  test('while Redis answers, counting is shared and visible in Redis', async (t) => {
    const { port } = await proxy(t);
    const { store, fallbacks } = await instance(t, 'local', port);
    const decision = await store.consume('key:healthy', limits, Date.now());
    assert.equal(decision.allowed, true);
    assert.equal(await sharedCount('key:healthy'), 1);
    assert.equal(store.state(), 'shared');
    assert.deepEqual(fallbacks, []);
  });

  test('local: each instance keeps answering with its own counters, then counting is shared again', async (t) => {
    const redis = await proxy(t);
    const a = await instance(t, 'local', redis.port);
    const b = await instance(t, 'local', redis.port);
    assert.equal((await a.store.consume('key:local', limits, Date.now())).allowed, true);
    assert.equal((await b.store.consume('key:local', limits, Date.now())).allowed, true);
    assert.equal(await sharedCount('key:local'), 2);

    await redis.cut();
    // Per instance: each allows the full limit from its own counters, then refuses.
    for (const { store } of [a, b]) {
      const answers = [];
      for (let i = 0; i < 5; i++)
        answers.push((await store.consume('key:local', limits, Date.now())).allowed);
      assert.deepEqual(answers, [true, true, true, false, false]);
      assert.equal(store.state(), 'degraded');
    }
    assert.ok(a.fallbacks.length === 5 && a.fallbacks.every((d) => d === 'local'), 'every answer was local');
    assert.equal(await sharedCount('key:local'), 2, 'nothing reached Redis');

    await redis.restore();
    // No reconnect call: the client reconnects and the store probes Redis again by itself.
    const shared = await untilShared(a.store, 'key:local');
    assert.equal(shared.allowed, true, 'Redis had one unit left (2 of 3 used), the local counters had none');
    assert.equal(shared.states[0]?.remaining, 0);
    assert.equal(await sharedCount('key:local'), 3);
  });

  test('open: every request is allowed and nothing is counted', async (t) => {
    const redis = await proxy(t);
    const { store, fallbacks } = await instance(t, 'open', redis.port);
    await redis.cut();
    for (let i = 0; i < 6; i++) {
      const decision = await store.consume('key:open', limits, Date.now());
      assert.equal(decision.allowed, true);
      assert.equal(decision.states[0]?.remaining, 3);
    }
    assert.equal((await store.peek('key:open', limits, Date.now())).allowed, true);
    assert.ok(fallbacks.length === 7 && fallbacks.every((d) => d === 'open'), 'every answer was open');
    assert.equal(store.state(), 'degraded');

    await redis.restore();
    await untilShared(store, 'key:open');
    assert.equal(await sharedCount('key:open'), 1);
  });

  test('closed: requests are refused with service_unavailable (503)', async (t) => {
    const redis = await proxy(t);
    const { store } = await instance(t, 'closed', redis.port);
    await redis.cut();
    for (let i = 0; i < 3; i++) {
      await assert.rejects(store.consume('key:closed', limits, Date.now()), (error: unknown) => {
        assert.ok(error instanceof ApiError, 'an ApiError');
        assert.equal(error.code, 'service_unavailable');
        assert.equal(error.status, 503);
        return true;
      });
    }
    await redis.restore();
    const shared = await untilShared(store, 'key:closed');
    assert.equal(shared.allowed, true);
    assert.equal(await sharedCount('key:closed'), 1);
  });

  test('a Redis that hangs costs one command timeout per back-off, then counting is shared again', async (t) => {
    const redis = await proxy(t);
    const { store, fallbacks } = await instance(t, 'local', redis.port);
    redis.stall();
    // The first request waits for the command timeout, the ones after it answer locally at once;
    // none of them hangs (this test would time out if one did).
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push((await store.consume('key:hung', limits, Date.now())).allowed);
    assert.deepEqual(answers, [true, true, true, false]);
    assert.equal(fallbacks.length, 4);
    assert.equal(store.state(), 'degraded');
    assert.equal(await sharedCount('key:hung'), 0);

    await redis.restore();
    const shared = await untilShared(store, 'key:hung');
    assert.equal(shared.allowed, true);
    assert.ok((await sharedCount('key:hung')) >= 1, 'counted in Redis again');
  });

  test('openRedis: shared counters and notices, ping, fallback while cut, and a close that ends it all', async (t) => {
    const redis = await proxy(t);
    const fallbacks: string[] = [];
    const stores = openRedis(`redis://127.0.0.1:${redis.port}`, {
      prefix,
      fallback: 'local',
      backoffMs: 100,
      onFallback: (decision) => fallbacks.push(decision),
    });
    t.after(() => stores.close());
    await stores.ready();
    await untilShared(stores.rateLimits, 'key:opened');
    assert.equal(await sharedCount('key:opened'), 1);
    await stores.ping();
    const heard: unknown[] = [];
    stores.notices.subscribe((notice) => heard.push(notice));
    await stores.notices.publish({ kind: 'keys', keyIds: ['k'] });
    assert.deepEqual(heard, [{ kind: 'keys', keyIds: ['k'] }]);

    await redis.cut();
    await assert.rejects(stores.ping());
    assert.equal((await stores.rateLimits.consume('key:opened', limits, Date.now())).allowed, true);
    assert.deepEqual(fallbacks, ['local']);
    // Closing while Redis is away must not wait for it (the process has to exit).
    await stores.close();
    await assert.rejects(stores.ping());
  });
});

/**
 * Consumes until an answer comes from Redis again (state `shared`); returns that answer. Bounded by
 * attempts, not by a time assertion: reconnecting takes as long as the client's retry schedule.
 */
async function untilShared(store: FallbackRateLimitStore, subject: string) {
  for (let attempt = 0; attempt < 200; attempt++) {
    const decision = await store.consume(subject, limits, Date.now()).catch(() => undefined);
    if (store.state() === 'shared' && decision !== undefined) return decision;
    await sleep(50);
  }
  assert.fail('counting never went back to Redis');
}

describe('FallbackRateLimitStore back-off', () => {
  /** A primary that fails while `down`, counting how often it is asked. */
  function flakyPrimary() {
    const primary = {
      down: true,
      calls: 0,
      memory: new MemoryRateLimitStore(),
      async consume(subject: string, rules: readonly LimitRule[], nowMs: number) {
        primary.calls++;
        if (primary.down) throw new Error('connection refused');
        return primary.memory.consume(subject, rules, nowMs);
      },
      async peek(subject: string, rules: readonly LimitRule[], nowMs: number) {
        primary.calls++;
        if (primary.down) throw new Error('connection refused');
        return primary.memory.peek(subject, rules, nowMs);
      },
    };
    return primary;
  }

  test('after a failure the primary is left alone for the back-off, then probed once', async () => {
    const primary = flakyPrimary();
    let clock = 0;
    const store = new FallbackRateLimitStore(primary, new MemoryRateLimitStore(), {
      policy: 'open',
      backoffMs: 500,
      monotonicMs: () => clock,
    });
    await store.consume('s', limits, 0);
    assert.equal(primary.calls, 1);
    for (let i = 0; i < 20; i++) await store.consume('s', limits, 0);
    assert.equal(primary.calls, 1, 'not asked during the back-off');
    clock = 499;
    await store.consume('s', limits, 0);
    assert.equal(primary.calls, 1);
    clock = 500;
    await store.consume('s', limits, 0);
    assert.equal(primary.calls, 2, 'probed once the back-off is over');
    assert.equal(store.state(), 'degraded');

    primary.down = false;
    clock = 1000;
    const decision = await store.consume('s', limits, 0);
    assert.equal(primary.calls, 3);
    assert.equal(store.state(), 'shared');
    assert.equal(decision.states[0]?.remaining, 2, 'counted by the primary');
    await store.consume('s', limits, 0);
    assert.equal(primary.calls, 4, 'healthy again: every request asks the primary');
  });

  test('only one request probes at a time; the others answer by the policy meanwhile', async () => {
    let release = () => {};
    let calls = 0;
    const hanging = {
      consume: () => {
        calls++;
        return new Promise<never>((_, reject) => {
          release = () => reject(new Error('timed out'));
        });
      },
      peek: () => Promise.reject(new Error('unused')),
    };
    let clock = 0;
    const store = new FallbackRateLimitStore(hanging, new MemoryRateLimitStore(), {
      policy: 'local',
      backoffMs: 100,
      monotonicMs: () => clock,
    });
    const first = store.consume('s', limits, 0);
    release();
    await first;
    clock = 100;
    const probe = store.consume('s', limits, 0);
    const others = await Promise.all([store.consume('t', limits, 0), store.consume('u', limits, 0)]);
    assert.equal(calls, 2, 'one probe, the others did not wait for it');
    assert.ok(
      others.every((d) => d.allowed),
      'the others were counted locally',
    );
    release();
    assert.equal((await probe).allowed, true, 'the failed probe was answered locally too');
    assert.equal(store.state(), 'degraded');
  });
});
