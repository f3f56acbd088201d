/**
 * Frozen stores: real servers reach PostgreSQL and Redis through TCP proxies that this test stalls
 * (connections stay open, no byte moves either way: a server stopped by SIGSTOP, a dead network
 * path) under steady streams of requests, then restores. Every answer of every stream is checked
 * afterwards, by when it was sent.
 * - PostgreSQL frozen: the first call past its deadline trips the instance's circuit breaker; from
 *   then on cached keys reading cached days (and `/usage`) are served as fast as before, everything
 *   that needs the database is 503 `service_unavailable` at once (never 401, 500 or no answer),
 *   `/readyz` says not ready, and after the restore a background probe brings it all back.
 * - Redis frozen: the fallback policy takes over within a command timeout: `local` keeps serving,
 *   `closed` refuses with 503, and both count in Redis again by themselves after the restore.
 * Timing bounds are generous (a second where a healthy answer takes milliseconds): they tell a
 * request that waited on a hung store from one that did not, nothing finer.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { addDays, dayIntervals, formatInstant, localDate } from '../../src/domain/time/days.js';
import { cleanUp, httpsClient, onlyJson, runCli, startServer, tempDir } from '../helpers/process.js';
import { proxiedScaleEnvironment } from '../helpers/proxied-scale.js';
import { type ScaleEnvironment, scaleSkipReason, within } from '../helpers/scale.js';
import { describeOrSkip } from '../helpers/skip.js';
import {
  latency,
  type Sample,
  type Stream,
  slowest,
  steadyLoad,
  tally,
  timedClient,
  untilSamples,
} from '../helpers/steady-load.js';
import type { TcpProxy } from '../helpers/tcp-proxy.js';

const POLICIES = ['local', 'closed'] as const;
type Policy = (typeof POLICIES)[number];
/** How long the tests wait for what must happen "by itself" (a bound, not a promise about time). */
const PATIENCE_MS = 20_000;
/** A request gets no answer when none came within this: today's hung requests took 6 to 30 s. */
const NO_ANSWER_MS = 10_000;
/** Every answer that needs no hung store, once the instance has noticed: healthy ones take ms. */
const SERVED_MS = 1_000;
/** Every answer once the instance has noticed (503s included): the issue's "within one second", doubled. */
const NOTICED_MS = 2_000;
/** Any answer at all while a store is frozen: at most one deadline (1 s here) plus slack. */
const ANY_MS = 3_000;

/** Never a connection failure, a missing answer, a 401 or a 5xx other than 503 service_unavailable. */
function assertNoBadAnswer(what: string, samples: readonly Sample[]): void {
  const bad = samples.filter(
    (s) =>
      s.status === 0 ||
      s.status === 401 ||
      (s.status >= 500 && !(s.status === 503 && s.code === 'service_unavailable')),
  );
  assert.deepEqual(
    bad.slice(0, 3).map((s) => `${s.status} after ${latency(s).toFixed(0)} ms: ${s.text.slice(0, 200)}`),
    [],
    `${what}: no failed connection, missing answer, 401 or 500 among ${samples.length} answers (${JSON.stringify(tally(samples))})`,
  );
}

/** Every sample answered within `ms`. */
function assertAllWithin(what: string, samples: readonly Sample[], ms: number): void {
  const slow = samples.filter((s) => latency(s) >= ms);
  assert.deepEqual(
    slow.slice(0, 3).map((s) => `${s.status} after ${latency(s).toFixed(0)} ms`),
    [],
    `${what}: every one of ${samples.length} answers within ${ms} ms (slowest ${slowest(samples).toFixed(0)} ms)`,
  );
}

/** When the first 503 of any stream came back, sent at `from` or later: the instance had noticed. */
function firstRefusal(streams: readonly Stream[], from: number): number {
  const refused = streams
    .flatMap((s) => s.sentBetween(from))
    .filter((s) => s.status === 503)
    .map((s) => s.endedAt);
  assert.ok(refused.length > 0, 'some request was refused while the store was frozen');
  return Math.min(...refused);
}

const skip = await scaleSkipReason('the frozen-store tests');

const SUITE =
  'frozen stores: PostgreSQL and Redis stop answering (connections open, nothing moves) under load';

describeOrSkip(SUITE, { skip }, () => {
  const servers = new Map<Policy, { url: string; certFile: string }>();
  let clients: Record<Policy, ReturnType<typeof timedClient>>;
  let redisProxy: TcpProxy;
  let pgProxy: TcpProxy;
  let env: ScaleEnvironment;
  let settings: Record<string, string>;

  const newKey = async (tier: string, scopes = 'read') =>
    (
      onlyJson(
        await runCli(
          ['keys', 'create', '--tier', tier, '--name', 'frozen', '--scopes', scopes, '--json'],
          settings,
        ),
      ) as { key: string }
    ).key;
  const get = (policy: Policy, path: string, key?: string) =>
    clients[policy].get(`${servers.get(policy)!.url}${path}`, key === undefined ? {} : { 'x-api-key': key });
  /** `/readyz` of one instance, with how long it took to answer. */
  const readiness = async (policy: Policy) => {
    const startedAt = performance.now();
    const answer = await get(policy, '/readyz');
    const body = JSON.parse(answer.text) as { status?: unknown; checks?: Record<string, string> };
    return {
      status: answer.status,
      state: typeof body.status === 'string' ? body.status : undefined,
      checks: body.checks,
      ms: performance.now() - startedAt,
    };
  };

  before(async () => {
    // Every process reaches Redis and PostgreSQL through a proxy the tests cut or stall.
    ({ env, redisProxy, pgProxy, settings } = await proxiedScaleEnvironment('frozen', { limit: 20 }));
    const started: Partial<Record<Policy, ReturnType<typeof timedClient>>> = {};
    for (const policy of POLICIES) {
      const own = await tempDir(`pricepoint-frozen-${policy}-`);
      const server = await startServer(['serve'], {
        ...settings,
        PRICEPOINT_DATA_DIR: own,
        PRICEPOINT_REDIS_FALLBACK: policy,
      });
      const certFile = join(own, 'tls', 'localhost-cert.pem');
      servers.set(policy, { url: server.url, certFile });
      started[policy] = timedClient(certFile, NO_ANSWER_MS);
    }
    clients = started as Record<Policy, ReturnType<typeof timedClient>>;
  });

  after(async () => {
    await Promise.all(Object.values(clients ?? {}).map((c) => c.close()));
    await cleanUp();
    await redisProxy?.close();
    await pgProxy?.close();
    await env?.drop();
  });

  test('PostgreSQL frozen under load: cached keys and days stay fast, the rest is 503 within a second, never 401; it recovers by itself', async () => {
    const { url, certFile } = servers.get('local')!;
    const admin = httpsClient(certFile);
    const writer = await newKey('enterprise', 'write');
    const reader = await newKey('load');
    const today = localDate(Date.now(), 'UTC');
    const hours = dayIntervals(today, 'UTC', 'PT1H').slice(0, 4);
    const csv = `start,price\n${hours.map((h, i) => `${formatInstant(h.start, 'UTC')},4${i}.5`).join('\n')}\n`;
    const written = await admin.send(
      'PUT',
      `${url}/api/v1/series/SPOT/prices`,
      { 'x-api-key': writer, 'content-type': 'text/csv' },
      csv,
    );
    assert.equal(written.status, 200, written.text);
    // A valid key no instance has looked up: a lookup that fails (503) caches nothing, so it stays so.
    const unseen = await newKey('load');
    const todayPath = '/api/v1/prices/today?symbols=SPOT';
    const servedPrices = (text: string) => JSON.stringify((JSON.parse(text) as { series: unknown }).series);
    const warm = await get('local', todayPath, reader);
    assert.equal(warm.status, 200, warm.text);
    assert.equal((await get('local', '/api/v1/usage', reader)).status, 200);

    // The same load on a healthy database, for comparison.
    const healthy = steadyLoad(() => get('local', todayPath, reader), 3);
    await untilSamples(healthy, 300, 0, 'cached reads on a healthy database');
    await healthy.stop();

    let daysBack = 1;
    let frozen = false;
    const streams = {
      cachedDay: steadyLoad(() => get('local', todayPath, reader), 3),
      usage: steadyLoad(() => get('local', '/api/v1/usage', reader), 1),
      uncachedDay: steadyLoad(
        () => get('local', `/api/v1/prices/${addDays(today, -daysBack++)}?symbols=SPOT`, reader),
        1,
      ),
      unseenKey: steadyLoad(() => get('local', todayPath, frozen ? unseen : reader), 1),
      latest: steadyLoad(() => get('local', '/api/v1/prices/latest?symbols=SPOT', reader), 1),
    };
    const all = Object.values(streams);
    let stalledAt = 0;
    let restoreAt = 0;
    let readyAt = 0;
    let ready: Awaited<ReturnType<typeof readiness>> | undefined;
    let upload: { status: number; text: string } | undefined;
    let uploadMs = 0;
    try {
      for (const stream of all) await untilSamples(stream, 3, 0, 'answers before the freeze');
      frozen = true;
      stalledAt = performance.now();
      pgProxy.stall();
      // Past the key cache (2 s): from then on keys and days come only from what the instance holds.
      await sleep(3_000);
      // Checked after the streams, whose answers tell more when this fails.
      ready = await readiness('local');
      const uploadStarted = performance.now();
      upload = await admin.send(
        'PUT',
        `${url}/api/v1/series/SPOT/prices`,
        { 'x-api-key': writer, 'content-type': 'text/csv' },
        csv,
      );
      uploadMs = performance.now() - uploadStarted;
      await sleep(5_000);
      restoreAt = performance.now();
      await pgProxy.restore();
      await within(PATIENCE_MS, 'PostgreSQL back', async () => (await readiness('local')).status === 200);
      readyAt = performance.now();
      for (const stream of all) await untilSamples(stream, 3, readyAt, 'answers after the restore');
    } finally {
      await pgProxy.restore();
      await Promise.all(all.map((stream) => stream.stop()));
      await admin.close();
    }

    for (const [name, stream] of Object.entries(streams)) assertNoBadAnswer(name, stream.samples);
    const noticedAt = firstRefusal(all, stalledAt);
    assert.ok(
      noticedAt - stalledAt < ANY_MS,
      `the freeze is noticed within one deadline: ${(noticedAt - stalledAt).toFixed(0)} ms`,
    );

    // Cached key, cached day, and the key's usage: served throughout, as they were, and fast.
    for (const name of ['cachedDay', 'usage'] as const) {
      const samples = streams[name].samples;
      assert.deepEqual(tally(samples), { '200': samples.length }, `${name}: every answer is 200`);
      assertAllWithin(`${name} while frozen`, streams[name].sentBetween(stalledAt, restoreAt), ANY_MS);
      assertAllWithin(`${name} once noticed`, streams[name].sentBetween(noticedAt, restoreAt), SERVED_MS);
    }
    const changed = streams.cachedDay.samples.filter((s) => servedPrices(s.text) !== servedPrices(warm.text));
    assert.equal(changed.length, 0, 'every cached answer holds the day as it was');
    const served = streams.cachedDay.sentBetween(noticedAt, restoreAt);
    console.log(
      `# PostgreSQL frozen: ${served.length} cached answers once noticed, slowest ${slowest(served).toFixed(1)} ms ` +
        `(healthy: ${healthy.samples.length} answers, slowest ${slowest(healthy.samples).toFixed(1)} ms); ` +
        `noticed ${(noticedAt - stalledAt).toFixed(0)} ms after the freeze`,
    );

    // What needs the database: 503 at once while frozen, served again after the restore.
    for (const name of ['uncachedDay', 'unseenKey', 'latest'] as const) {
      // Answered before the restore began: a request sent just before it may reach the server
      // after it, when PostgreSQL answers again (the proxy and the client share this process).
      const during = streams[name].answeredWithin(noticedAt, restoreAt);
      const sent = streams[name].sentBetween(noticedAt, restoreAt);
      assert.ok(during.length > 0, `${name}: asked while frozen`);
      assert.deepEqual(
        tally(during),
        { '503 service_unavailable': during.length },
        `${name}: 503 service_unavailable while frozen`,
      );
      assertAllWithin(`${name} while frozen`, streams[name].sentBetween(stalledAt, restoreAt), ANY_MS);
      assertAllWithin(`${name} once noticed`, sent, NOTICED_MS);
      const afterwards = streams[name].sentBetween(readyAt);
      assert.deepEqual(
        tally(afterwards),
        { '200': afterwards.length },
        `${name}: served again after the restore`,
      );
    }
    assert.deepEqual(
      { status: ready?.status, prices: ready?.checks?.['prices'], keys: ready?.checks?.['keys'] },
      { status: 503, prices: 'unreachable', keys: 'unreachable' },
      '/readyz says not ready while PostgreSQL is frozen',
    );
    assert.ok((ready?.ms ?? 0) < NOTICED_MS, `/readyz answers at once: ${ready?.ms.toFixed(0)} ms`);
    assert.equal(upload?.status, 503, `an upload while frozen: ${upload?.text}`);
    assert.ok(uploadMs < NOTICED_MS, `an upload is refused at once: ${uploadMs.toFixed(0)} ms`);
  });

  test('Redis frozen under load: the fallback takes over within a second (local serves, closed is 503) and counting in Redis resumes by itself', async () => {
    const key = await newKey('load');
    const exact = await newKey('exact');
    const day = '/api/v1/prices/today?symbols=SPOT';
    for (const policy of POLICIES) assert.equal((await get(policy, day, key)).status, 200);
    const streams: Record<Policy, Stream> = {
      local: steadyLoad(() => get('local', day, key), 2),
      closed: steadyLoad(() => get('closed', day, key), 1),
    };
    let stalledAt = 0;
    let restoreAt = 0;
    let readyAt = 0;
    try {
      for (const policy of POLICIES)
        await untilSamples(streams[policy], 10, 0, `${policy} before the freeze`);
      assert.equal((await get('local', '/api/v1/series', exact)).status, 200, 'counted in Redis before');
      stalledAt = performance.now();
      redisProxy.stall();
      await sleep(2_000);
      for (const policy of POLICIES) {
        const ready = await readiness(policy);
        assert.deepEqual(
          { status: ready.status, state: ready.state, redis: ready.checks?.['redis'] },
          policy === 'closed'
            ? { status: 503, state: undefined, redis: 'unreachable' }
            : { status: 200, state: 'degraded', redis: 'unreachable' },
          `${policy}: /readyz reports Redis away`,
        );
        assert.ok(ready.ms < NOTICED_MS, `${policy}: /readyz answers at once: ${ready.ms.toFixed(0)} ms`);
      }
      await sleep(2_000);
      restoreAt = performance.now();
      await redisProxy.restore();
      await within(PATIENCE_MS, 'both instances ready again', async () => {
        const states = await Promise.all(POLICIES.map(readiness));
        return states.every((r) => r.status === 200 && r.state === 'ready');
      });
      readyAt = performance.now();
      for (const policy of POLICIES) await untilSamples(streams[policy], 10, readyAt, `${policy} after`);
    } finally {
      await redisProxy.restore();
      await Promise.all(POLICIES.map((policy) => streams[policy].stop()));
    }

    for (const policy of POLICIES) assertNoBadAnswer(`${policy} stream`, streams[policy].samples);
    const noticedAt = firstRefusal([streams.closed], stalledAt);
    assert.ok(
      noticedAt - stalledAt < SERVED_MS,
      `closed: the freeze is noticed within a second: ${(noticedAt - stalledAt).toFixed(0)} ms`,
    );
    const local = streams.local;
    assert.deepEqual(tally(local.samples), { '200': local.samples.length }, 'local: every answer is 200');
    assertAllWithin('local while frozen', local.sentBetween(stalledAt, restoreAt), SERVED_MS);
    const closedDuring = streams.closed.sentBetween(noticedAt, restoreAt);
    assert.deepEqual(
      tally(closedDuring),
      { '503 service_unavailable': closedDuring.length },
      'closed: every counted request is refused while Redis is frozen',
    );
    assertAllWithin('closed while frozen', streams.closed.sentBetween(stalledAt, restoreAt), SERVED_MS);
    for (const policy of POLICIES) {
      const afterwards = streams[policy].sentBetween(readyAt);
      assert.deepEqual(
        tally(afterwards),
        { '200': afterwards.length },
        `${policy}: served after the restore`,
      );
    }
    // Shared counting again: the one request before the freeze is still in Redis, and both add to it.
    for (const policy of POLICIES) {
      const answer = await get(policy, '/api/v1/series', exact);
      assert.equal(answer.status, 200, `${policy} after the restore: ${answer.text}`);
    }
    const usage = JSON.parse((await get('local', '/api/v1/usage', exact)).text) as {
      limits: { remaining: number }[];
    };
    assert.equal(usage.limits[0]?.remaining, 20 - 3, 'the three counted requests are counted in Redis');
    console.log(
      `# Redis frozen: local slowest ${slowest(local.sentBetween(stalledAt, restoreAt)).toFixed(1)} ms, ` +
        `closed refused ${(noticedAt - stalledAt).toFixed(0)} ms after the freeze`,
    );
  });
});
