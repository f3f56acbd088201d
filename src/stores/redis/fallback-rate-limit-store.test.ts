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
import { describeOrSkip } from '../../../test/helpers/skip.js';
import { startTcpProxy } from '../../../test/helpers/tcp-proxy.js';
import { ApiError } from '../../domain/errors/api-error.js';
import type { LimitDecision } from '../../domain/limits/fixed-window.js';
import type { LimitRule } from '../../domain/limits/tiers.js';
import { MemoryRateLimitStore } from '../memory/rate-limit-store.js';
import type { LimitGate } from '../types.js';
import { type FallbackPolicy, FallbackRateLimitStore } from './fallback-rate-limit-store.js';
import { openRedis, redisCommandOptions } from './index.js';
import { RedisRateLimitStore } from './rate-limit-store.js';

const skip = await redisSkipReason();
const limits: LimitRule[] = [{ name: 'day', limit: 3, windowSeconds: 86_400 }];

describeOrSkip('FallbackRateLimitStore over a Redis that goes away', { skip }, () => {
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
    const errors: unknown[] = [];
    const store = new FallbackRateLimitStore(
      new RedisRateLimitStore(client, prefix),
      new MemoryRateLimitStore(),
      {
        policy,
        backoffMs: 100,
        probe: () => client.ping(),
        onFallback: (decision, error) => {
          assert.ok(error instanceof Error, 'the fallback is told the error');
          fallbacks.push(decision);
        },
        onError: (error) => errors.push(error),
      },
    );
    t.after(() => store.close());
    return { client, store, fallbacks, errors };
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
    assert.equal(decision.allowed, true, 'allowed');
    assert.equal(await sharedCount('key:healthy'), 1, 'counted in Redis');
    assert.equal(store.state(), 'shared', 'shared');
    assert.deepEqual(fallbacks, [], 'no fallback decision');
  });

  test('local: each instance keeps answering with its own counters, then counting is shared again', async (t) => {
    const redis = await proxy(t);
    const a = await instance(t, 'local', redis.port);
    const b = await instance(t, 'local', redis.port);
    assert.equal((await a.store.consume('key:local', limits, Date.now())).allowed, true, 'a allowed');
    assert.equal((await b.store.consume('key:local', limits, Date.now())).allowed, true, 'b allowed');
    assert.equal(await sharedCount('key:local'), 2, 'both counted in Redis');

    await redis.cut();
    // Per instance: each allows the full limit from its own counters, then refuses.
    for (const { store, errors } of [a, b]) {
      const answers = [];
      for (let i = 0; i < 5; i++) {
        answers.push((await store.consume('key:local', limits, Date.now())).allowed);
        assert.ok(errors.length >= 1, 'the failed command is reported as an error by the first answer');
      }
      assert.deepEqual(answers, [true, true, true, false, false], 'the limit holds per instance');
      assert.equal(store.state(), 'degraded', 'degraded while Redis is cut');
    }
    assert.ok(a.fallbacks.length === 5 && a.fallbacks.every((d) => d === 'local'), 'every answer was local');
    assert.equal(await sharedCount('key:local'), 2, 'nothing reached Redis');

    await redis.restore();
    // No reconnect call: the client reconnects and the store probes Redis again by itself.
    const shared = await untilShared(a.store, 'key:local');
    assert.equal(shared.allowed, true, 'Redis had one unit left (2 of 3 used), the local counters had none');
    assert.equal(shared.states[0]?.remaining, 0, 'nothing left in Redis');
    assert.equal(await sharedCount('key:local'), 3, 'the third unit counted in Redis');
  });

  test('open: every request is allowed and nothing is counted', async (t) => {
    const redis = await proxy(t);
    const { store, fallbacks } = await instance(t, 'open', redis.port);
    await redis.cut();
    for (let i = 0; i < 6; i++) {
      const decision = await store.consume('key:open', limits, Date.now());
      assert.equal(decision.allowed, true, 'open allows');
      assert.equal(decision.states[0]?.remaining, 3, 'open counts nothing');
    }
    assert.equal((await store.peek('key:open', limits, Date.now())).allowed, true, 'a peek is allowed');
    assert.ok(fallbacks.length === 7 && fallbacks.every((d) => d === 'open'), 'every answer was open');
    assert.equal(store.state(), 'degraded', 'degraded while cut');

    await redis.restore();
    await untilShared(store, 'key:open');
    assert.equal(await sharedCount('key:open'), 1, 'counted in Redis again');
  });

  test('closed: requests are refused with service_unavailable (503)', async (t) => {
    const redis = await proxy(t);
    const { store } = await instance(t, 'closed', redis.port);
    await redis.cut();
    for (let i = 0; i < 3; i++) {
      await assert.rejects(store.consume('key:closed', limits, Date.now()), (error: unknown) => {
        assert.ok(error instanceof ApiError, 'an ApiError');
        assert.equal(error.code, 'service_unavailable', 'the code');
        assert.equal(error.options.retryAfterSeconds, 1, 'try again in a second');
        return true;
      });
    }
    await redis.restore();
    const shared = await untilShared(store, 'key:closed');
    assert.equal(shared.allowed, true, 'allowed again');
    assert.equal(await sharedCount('key:closed'), 1, 'counted in Redis again');
  });

  test('a Redis that hangs costs one command timeout, then counting is shared again', async (t) => {
    const redis = await proxy(t);
    const { store, fallbacks, errors } = await instance(t, 'local', redis.port);
    redis.stall();
    // The first request waits for the command timeout, the ones after it answer locally at once;
    // none of them hangs (this test would time out if one did). Probes wait in the background.
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push((await store.consume('key:hung', limits, Date.now())).allowed);
    assert.deepEqual(answers, [true, true, true, false], 'answered locally');
    assert.equal(fallbacks.length, 4, 'four fallback decisions');
    assert.ok(
      errors.some((e) => /timed out/i.test(String(e))),
      `the timeout is reported as an error: ${errors.map(String).join('; ')}`,
    );
    assert.equal(store.state(), 'degraded', 'degraded while Redis hangs');
    assert.equal(await sharedCount('key:hung'), 0, 'nothing counted in Redis');

    await redis.restore();
    const shared = await untilShared(store, 'key:hung');
    assert.equal(shared.allowed, true, 'allowed again');
    assert.ok((await sharedCount('key:hung')) >= 1, 'counted in Redis again');
  });

  test('readiness comes back by itself: with no request at all, the probe makes counting shared again', async (t) => {
    const redis = await proxy(t);
    const { store } = await instance(t, 'closed', redis.port);
    await redis.cut();
    await assert.rejects(store.consume('key:idle', limits, Date.now()), ApiError, 'closed refuses');
    assert.equal(store.state(), 'degraded', 'degraded after the failed request');
    await redis.restore();
    for (let attempt = 0; attempt < 400 && store.state() === 'degraded'; attempt++) await sleep(25);
    assert.equal(store.state(), 'shared', 'shared again without a request');
    assert.equal(await sharedCount('key:idle'), 0, 'nothing was counted meanwhile');
  });

  test('openRedis: shared counters and notices, ping, fallback while cut, and a close that ends it all', async (t) => {
    const redis = await proxy(t);
    const fallbacks: string[] = [];
    const errors: Error[] = [];
    const stores = openRedis(`redis://127.0.0.1:${redis.port}`, {
      prefix,
      fallback: 'local',
      backoffMs: 100,
      commandTimeoutMs: 1000,
      onFallback: (decision) => fallbacks.push(decision),
      onError: (error) => errors.push(error),
    });
    t.after(() => stores.close());
    await stores.ready();
    await untilShared(stores.rateLimits, 'key:opened');
    assert.equal(await sharedCount('key:opened'), 1, 'counted in Redis');
    await stores.ping();
    const heard: unknown[] = [];
    stores.notices.subscribe((notice) => heard.push(notice));
    await stores.notices.publish({ kind: 'keys', keyIds: ['k'] });
    assert.deepEqual(heard, [{ kind: 'keys', keyIds: ['k'] }], 'the notice is heard');

    await redis.cut();
    await assert.rejects(stores.ping(), 'ping fails while cut');
    const before = errors.length;
    assert.equal(
      (await stores.rateLimits.consume('key:opened', limits, Date.now())).allowed,
      true,
      'answered locally',
    );
    assert.deepEqual(fallbacks, ['local'], 'one fallback decision');
    assert.ok(errors.length > before, 'the failed rate-limit command is reported through onError');
    // Closing while Redis is away must not wait for it (the process has to exit).
    await stores.close();
    await assert.rejects(stores.ping(), 'closed for good');
  });

  test('openRedis: connections that go silent for good (a dead network path) are made again, notices included', async (t) => {
    const redis = await proxy(t);
    const stores = openRedis(`redis://127.0.0.1:${redis.port}`, {
      prefix,
      fallback: 'local',
      backoffMs: 100,
      commandTimeoutMs: 250,
    });
    t.after(() => stores.close());
    await stores.ready();
    await untilShared(stores.rateLimits, 'key:stranded');
    const heard: unknown[] = [];
    stores.notices.subscribe((notice) => heard.push(notice));
    // Both connections stay open and silent, whatever happens now; only new connections work.
    redis.strand();
    const local = await stores.rateLimits.consume('key:stranded', limits, Date.now());
    assert.equal(local.allowed, true, 'answered locally');
    assert.equal(stores.rateLimits.state(), 'degraded', 'degraded while the connection is silent');
    await untilShared(stores.rateLimits, 'key:stranded');
    // Another instance's notice reaches this one again: the subscriber was made again too.
    const envelope = JSON.stringify({ origin: 'another', notice: { kind: 'keys', keyIds: ['k'] } });
    for (let attempt = 0; attempt < 100 && heard.length === 0; attempt++) {
      await inspect.publish(`${prefix}notices`, envelope);
      await sleep(50);
    }
    assert.deepEqual(heard[0], { kind: 'keys', keyIds: ['k'] }, 'a notice is heard again');
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

describe('FallbackRateLimitStore probing', () => {
  /** A primary that fails while `down`, counting requests and probes apart. */
  function flakyPrimary() {
    const primary = {
      down: true,
      calls: 0,
      probes: 0,
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
      async consumeWithin(gate: LimitGate, subject: string, rules: readonly LimitRule[], nowMs: number) {
        primary.calls++;
        if (primary.down) throw new Error('connection refused');
        return primary.memory.consumeWithin(gate, subject, rules, nowMs);
      },
      async giveBack(subject: string, taken: LimitDecision) {
        primary.calls++;
        if (primary.down) throw new Error('connection refused');
        primary.memory.giveBack(subject, taken);
      },
      async probe() {
        primary.probes++;
        if (primary.down) throw new Error('connection refused');
      },
    };
    return primary;
  }

  /** Polls `check` every 5 ms; bounded by attempts, not asserted on time. */
  async function until(check: () => boolean, what: string): Promise<void> {
    for (let attempt = 0; attempt < 1000; attempt++) {
      if (check()) return;
      await sleep(5);
    }
    assert.fail(`${what} never happened`);
  }

  test('after a failure no request asks the primary; a background probe brings it back without traffic', async (t) => {
    const primary = flakyPrimary();
    const errors: unknown[] = [];
    const store = new FallbackRateLimitStore(primary, new MemoryRateLimitStore(), {
      policy: 'open',
      backoffMs: 10,
      probe: () => primary.probe(),
      onError: (error) => errors.push(error),
    });
    t.after(() => store.close());
    await store.consume('s', limits, 0);
    assert.equal(primary.calls, 1, 'the first request asked the primary');
    assert.equal(errors.length, 1, 'the failed request is reported as an error at once');
    assert.equal(store.state(), 'degraded', 'degraded after the failure');
    for (let i = 0; i < 20; i++) await store.consume('s', limits, 0);
    assert.equal(primary.calls, 1, 'no request asks the primary while it is away');

    await until(() => primary.probes >= 3, 'three probes');
    assert.ok(errors.length >= 3, `every failed probe is reported too: ${errors.length}`);
    assert.equal(store.state(), 'degraded', 'still degraded while the probes fail');

    primary.down = false;
    // No request at all: the probe alone makes the store shared again.
    await until(() => store.state() === 'shared', 'shared again without traffic');
    assert.equal(primary.calls, 1, 'no request was needed');
    const decision = await store.consume('s', limits, 0);
    assert.equal(primary.calls, 2, 'healthy again: the request asks the primary');
    assert.equal(decision.states[0]?.remaining, 2, 'counted by the primary');
    const probes = primary.probes;
    await sleep(50);
    assert.equal(primary.probes, probes, 'no probing while the primary answers');
  });

  test('only one probe at a time, and requests never wait for it', async (t) => {
    let release = () => {};
    let probes = 0;
    const hanging = {
      consume: () => Promise.reject(new Error('timed out')),
      peek: () => Promise.reject(new Error('unused')),
      consumeWithin: () => Promise.reject(new Error('unused')),
      giveBack: () => Promise.reject(new Error('unused')),
    };
    const store = new FallbackRateLimitStore(hanging, new MemoryRateLimitStore(), {
      policy: 'local',
      backoffMs: 5,
      probe: () => {
        probes++;
        return new Promise<never>((_, reject) => {
          release = () => reject(new Error('timed out'));
        });
      },
    });
    t.after(() => store.close());
    assert.equal((await store.consume('s', limits, 0)).allowed, true, 'answered locally');
    await until(() => probes === 1, 'the first probe');
    // The probe hangs: requests answer locally meanwhile, and no second probe starts.
    const others = await Promise.all([store.consume('t', limits, 0), store.consume('u', limits, 0)]);
    assert.ok(
      others.every((d) => d.allowed),
      'the others were counted locally',
    );
    await sleep(30);
    assert.equal(probes, 1, 'one probe at a time');
    release();
    await until(() => probes === 2, 'the next probe after the failed one');
    assert.equal(store.state(), 'degraded', 'still degraded');
  });

  test('close() stops probing, so the process can exit', async () => {
    const primary = flakyPrimary();
    const store = new FallbackRateLimitStore(primary, new MemoryRateLimitStore(), {
      policy: 'open',
      backoffMs: 5,
      probe: () => primary.probe(),
    });
    await store.consume('s', limits, 0);
    await until(() => primary.probes >= 1, 'a probe');
    store.close();
    const probes = primary.probes;
    await sleep(50);
    assert.ok(
      primary.probes <= probes + 1,
      `no probe after close (at most the one running): ${primary.probes}`,
    );
  });

  test('without a probe of its own, it peeks at the primary, which counts nothing', async (t) => {
    const primary = flakyPrimary();
    const store = new FallbackRateLimitStore(primary, new MemoryRateLimitStore(), {
      policy: 'open',
      backoffMs: 5,
    });
    t.after(() => store.close());
    await store.consume('s', limits, 0);
    primary.down = false;
    await until(() => store.state() === 'shared', 'shared again');
    const decision = await store.consume('s', limits, 0);
    assert.equal(decision.states[0]?.remaining, 2, 'the probe took nothing from any subject');
  });
});
