/**
 * Faults: real servers reach Redis and PostgreSQL through TCP proxies inside this test, which cuts
 * and restores them while steady streams of requests keep coming. Every answer of every stream is
 * checked afterwards, by when it was sent.
 * - Redis cut: under `local` answers keep coming, with limits per instance; `open` allows, `closed`
 *   refuses with 503; after the restore, shared counting resumes by itself, and /readyz says ready
 *   again with no traffic at all.
 * - PostgreSQL cut: cached keys and days keep being served; what needs the database is 503, never
 *   401 or 500; `/readyz` says so; nothing written before the cut is lost.
 * The only timing bound is a generous one that tells an answer from a hang: how fast answers stay
 * while Redis is cut (p99 against healthy) is measured by bench/frozen-database.ts (bench/README.md,
 * "Frozen and cut stores"), not here.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { addDays, dayIntervals, formatInstant, localDate } from '../../src/domain/time/days.js';
import {
  cleanUp,
  httpsClient,
  onlyJson,
  runCli,
  type ServerProcess,
  startServer,
  tempDir,
} from '../helpers/process.js';
import { proxiedScaleEnvironment } from '../helpers/proxied-scale.js';
import { type ScaleEnvironment, scaleSkipReason, within } from '../helpers/scale.js';
import { describeOrSkip } from '../helpers/skip.js';
import {
  latency,
  problemCode,
  type Sample,
  type Stream,
  slowest,
  steadyLoad,
  tally,
  timedClient,
  untilSamples,
} from '../helpers/steady-load.js';
import type { TcpProxy } from '../helpers/tcp-proxy.js';

const LIMIT = 20;
const POLICIES = ['local', 'open', 'closed'] as const;
type Policy = (typeof POLICIES)[number];
/** How long the tests wait for what must happen "by itself" (a bound, not a promise about time). */
const PATIENCE_MS = 20_000;
/** Answers of the steady load while Redis is cut, at least: the load is served on, not just once. */
const CUT_SAMPLES = 200;
/** A stream's request gets no answer (status 0) when none came within this. */
const NO_ANSWER_MS = 10_000;
/**
 * Every answer of every stream, cut or not: healthy ones take milliseconds, and a cut store fails
 * at once, so only a request that waited on something hung comes near it. Not a speed check.
 */
const ANSWER_MS = 3_000;

/**
 * Never a connection failure, a missing answer, a 401 or a 500 (nor any other 5xx but a 503
 * service_unavailable), and every answer well before anything could be called a hang.
 */
function assertNoBadAnswer(what: string, samples: readonly Sample[]): void {
  const bad = samples.filter(
    (s) =>
      s.status === 0 ||
      s.status === 401 ||
      (s.status >= 500 && !(s.status === 503 && s.code === 'service_unavailable')),
  );
  assert.deepEqual(
    bad.slice(0, 3).map((s) => `${s.status} ${s.text.slice(0, 200)}`),
    [],
    `${what}: no failed connection, missing answer, 401 or 500 among ${samples.length} answers (${JSON.stringify(tally(samples))})`,
  );
  const hung = samples.filter((s) => latency(s) >= ANSWER_MS);
  assert.deepEqual(
    hung.slice(0, 3).map((s) => `${s.status} after ${latency(s).toFixed(0)} ms`),
    [],
    `${what}: every one of ${samples.length} answers within ${ANSWER_MS} ms (slowest ${slowest(samples).toFixed(0)} ms)`,
  );
}

const skip = await scaleSkipReason('the fault tests');

describeOrSkip('faults: Redis and PostgreSQL cut and restored under load', { skip }, () => {
  const servers = new Map<
    Policy,
    { server: ServerProcess; client: ReturnType<typeof httpsClient>; timed: ReturnType<typeof timedClient> }
  >();
  let redisProxy: TcpProxy;
  let pgProxy: TcpProxy;
  let env: ScaleEnvironment;
  let settings: Record<string, string>;
  let writer: string;

  const newKey = async (tier: string, scopes = 'read') =>
    (
      onlyJson(
        await runCli(
          ['keys', 'create', '--tier', tier, '--name', 'fault', '--scopes', scopes, '--json'],
          settings,
        ),
      ) as { key: string }
    ).key;
  const get = (policy: Policy, path: string, key?: string) => {
    const { server, client } = servers.get(policy)!;
    return client.get(`${server.url}${path}`, key === undefined ? {} : { 'x-api-key': key });
  };
  /** A steady stream's request: one with a deadline, so that a hang shows up as a missing answer. */
  const stream = (policy: Policy, path: string, key: string) => {
    const { server, timed } = servers.get(policy)!;
    return () => timed.get(`${server.url}${path}`, { 'x-api-key': key });
  };
  const readiness = async (policy: Policy) => {
    const answer = await get(policy, '/readyz');
    // A 200 says `ready` or `degraded` in `status`; a 503 is problem+json, whose `status` is 503.
    const body = JSON.parse(answer.text) as { status?: unknown; checks?: Record<string, string> };
    return {
      status: answer.status,
      state: typeof body.status === 'string' ? body.status : undefined,
      checks: body.checks,
    };
  };
  const metric = async (policy: Policy, pattern: RegExp) =>
    Number(pattern.exec((await get(policy, '/metrics')).text)?.[1] ?? 0);

  before(async () => {
    // Every process reaches Redis and PostgreSQL through a proxy the tests cut or stall.
    ({ env, redisProxy, pgProxy, settings } = await proxiedScaleEnvironment('faults', { limit: LIMIT }));
    writer = await newKey('enterprise', 'write');
    for (const policy of POLICIES) {
      const own = await tempDir(`pricepoint-faults-${policy}-`);
      const server = await startServer(['serve'], {
        ...settings,
        PRICEPOINT_DATA_DIR: own,
        PRICEPOINT_REDIS_FALLBACK: policy,
      });
      const certFile = join(own, 'tls', 'localhost-cert.pem');
      servers.set(policy, {
        server,
        client: httpsClient(certFile),
        timed: timedClient(certFile, NO_ANSWER_MS),
      });
    }
  });

  after(async () => {
    await Promise.all([...servers.values()].map(({ timed }) => timed.close()));
    await cleanUp();
    await redisProxy?.close();
    await pgProxy?.close();
    await env?.drop();
  });

  test('Redis cut under load: local answers on with limits per instance, open allows, closed is 503; shared counting resumes', async () => {
    const exact = await newKey('exact');
    const load = await newKey('load');
    // Five requests counted in Redis before the cut.
    for (let i = 0; i < 5; i++) {
      assert.equal(
        (await get('local', '/api/v1/series', exact)).status,
        200,
        'counted in Redis before the cut',
      );
    }
    // Counted reads of a day each instance holds in its read cache: the answer's time is the time of
    // the key check and the rate limit, not of a database query.
    const day = '/api/v1/prices/today?symbols=SPOT';
    const streams: Record<Policy, Stream> = {
      local: steadyLoad(stream('local', day, load), 2),
      open: steadyLoad(stream('open', day, load), 1),
      closed: steadyLoad(stream('closed', day, load), 1),
    };
    let cutDone = 0;
    let quietFrom = 0;
    let restoreAt = 0;
    let readyAt = 0;
    try {
      for (const policy of POLICIES) await untilSamples(streams[policy], 20, 0, `${policy} before the cut`);
      await redisProxy.cut();
      cutDone = performance.now();

      // The instance counts on its own from zero: exactly its limit, then 429, never an error.
      const local = await Promise.all(
        Array.from({ length: LIMIT * 3 }, () => get('local', '/api/v1/series', exact)),
      );
      assert.deepEqual(
        tally(local.map((a) => ({ status: a.status, code: problemCode(a) }))),
        { '200': LIMIT, '429 rate_limited': LIMIT * 2 },
        'local: the limit holds per instance while Redis is cut',
      );
      const open = await Promise.all(
        Array.from({ length: LIMIT * 2 }, () => get('open', '/api/v1/series', exact)),
      );
      assert.deepEqual(
        open.map((a) => a.status).filter((s) => s !== 200),
        [],
        'open: every request is allowed while Redis is cut',
      );
      const closed = await get('closed', '/api/v1/series', exact);
      assert.equal(closed.status, 503, closed.text);
      assert.equal(problemCode(closed), 'service_unavailable', 'closed: 503 service_unavailable');

      for (const policy of POLICIES) {
        const ready = await readiness(policy);
        assert.deepEqual(
          { status: ready.status, state: ready.state, redis: ready.checks?.['redis'] },
          policy === 'closed'
            ? { status: 503, state: undefined, redis: 'unreachable' }
            : { status: 200, state: 'degraded', redis: 'unreachable' },
          `${policy}: /readyz reports Redis away`,
        );
        const fallbacks = await metric(
          policy,
          new RegExp(`^pricepoint_rate_limit_fallbacks_total\\{policy="${policy}"\\} (\\d+)`, 'm'),
        );
        assert.ok(fallbacks >= 1, `${policy}: fallback decisions are counted in /metrics: ${fallbacks}`);
        const errors = await metric(policy, /^pricepoint_store_errors_total\{store="redis"\} (\d+)/m);
        assert.ok(errors >= 1, `${policy}: Redis errors are counted in /metrics: ${errors}`);
      }
      const localFallbacks = await metric(
        'local',
        /^pricepoint_rate_limit_fallbacks_total\{policy="local"\} (\d+)/m,
      );
      assert.ok(
        localFallbacks >= LIMIT * 3,
        `every request of the burst was a local decision: ${localFallbacks}`,
      );

      // The steady load alone goes on being served under `local`.
      quietFrom = performance.now();
      await untilSamples(streams.local, CUT_SAMPLES, quietFrom, 'local answers while Redis is cut');
      restoreAt = performance.now();
      await redisProxy.restore();

      // Each instance's probe finds Redis again: no restart, no call from outside.
      await within(PATIENCE_MS, 'every instance ready again', async () => {
        const states = await Promise.all(POLICIES.map(readiness));
        return states.every((r) => r.status === 200 && r.state === 'ready');
      });
      readyAt = performance.now();
      // Shared counting: Redis still holds the 5 from before the cut, and the three count on together.
      const remaining: Record<string, unknown> = {};
      for (const policy of POLICIES) {
        const answer = await get(policy, '/api/v1/series', exact);
        assert.equal(answer.status, 200, `${policy} after the restore: ${answer.text}`);
        remaining[policy] = Number(answer.headers['x-ratelimit-remaining']);
      }
      assert.deepEqual(
        remaining,
        { local: LIMIT - 6, open: LIMIT - 7, closed: LIMIT - 8 },
        'the three count in Redis again, from where it was before the cut',
      );
      for (const policy of POLICIES) {
        await untilSamples(streams[policy], 20, readyAt, `${policy} after the restore`);
      }
    } finally {
      await redisProxy.restore();
      await Promise.all(POLICIES.map((policy) => streams[policy].stop()));
    }

    for (const policy of POLICIES) assertNoBadAnswer(`${policy} stream`, streams[policy].samples);
    for (const policy of ['local', 'open'] as const) {
      assert.deepEqual(
        tally(streams[policy].samples),
        { '200': streams[policy].samples.length },
        `${policy}: every answer of the stream is 200, before, during and after the cut`,
      );
    }
    const closedDuring = streams.closed.answeredWithin(cutDone, restoreAt);
    assert.ok(closedDuring.length > 0, 'closed: the stream sent requests while Redis was cut');
    assert.deepEqual(
      tally(closedDuring),
      { '503 service_unavailable': closedDuring.length },
      'closed: every counted request is refused with 503 while Redis is cut',
    );
    const closedAfter = streams.closed.sentBetween(readyAt);
    assert.deepEqual(
      tally(closedAfter),
      { '200': closedAfter.length },
      'closed: every request is served again once it is ready',
    );

    const steady = streams.local.answeredWithin(quietFrom, restoreAt);
    assert.ok(
      steady.length >= CUT_SAMPLES,
      `the steady load was served while Redis was cut: ${steady.length}`,
    );
    console.log(
      `# Redis cut, local policy: ${steady.length} answers of the steady load alone, slowest ${slowest(steady).toFixed(1)} ms ` +
        `(the latency is measured by bench/frozen-database.ts)`,
    );
  });

  test('after a Redis cut, /readyz says ready again by itself, with no counted request', async () => {
    const key = await newKey('load');
    await redisProxy.cut();
    try {
      // One counted request per instance, so each one's rate limiting notices the cut.
      for (const policy of POLICIES) {
        const answer = await get(policy, '/api/v1/series', key);
        assert.equal(answer.status, policy === 'closed' ? 503 : 200, `${policy} while cut: ${answer.text}`);
      }
      for (const policy of POLICIES) {
        const ready = await readiness(policy);
        assert.deepEqual(
          { status: ready.status, redis: ready.checks?.['redis'] },
          { status: policy === 'closed' ? 503 : 200, redis: 'unreachable' },
          `${policy}: /readyz reports Redis away`,
        );
      }
    } finally {
      await redisProxy.restore();
    }
    // Only /readyz from here on, which counts nothing: the background probe alone brings them back.
    await within(PATIENCE_MS, 'every instance ready again without traffic', async () => {
      const states = await Promise.all(POLICIES.map(readiness));
      return states.every((r) => r.status === 200 && r.state === 'ready' && r.checks?.['redis'] === 'ok');
    });
  });

  test('PostgreSQL cut under load: cached keys and days are served, the rest is 503 (never 401 or 500), nothing is lost', async () => {
    const reader = await newKey('load');
    const unseen = await newKey('pro');
    const today = localDate(Date.now(), 'UTC');
    const hours = dayIntervals(today, 'UTC', 'PT1H').slice(0, 4);
    const csv = `start,price\n${hours.map((h, i) => `${formatInstant(h.start, 'UTC')},4${i}.5`).join('\n')}\n`;
    const { server, client } = servers.get('local')!;
    const put = () =>
      client.send(
        'PUT',
        `${server.url}/api/v1/series/SPOT/prices`,
        { 'x-api-key': writer, 'content-type': 'text/csv' },
        csv,
      );
    const written = await put();
    assert.equal(written.status, 200, written.text);
    const todayPath = '/api/v1/prices/today?symbols=SPOT';
    const before = await get('local', todayPath, reader);
    assert.equal(before.status, 200, before.text);
    const servedPrices = (text: string) => JSON.stringify(JSON.parse(text).series);

    // A day read (and so cached) before the cut, and days never read: each request another date.
    let daysBack = 1;
    const streams = {
      cached: steadyLoad(stream('local', todayPath, reader), 3),
      uncached: steadyLoad(
        () => stream('local', `/api/v1/prices/${addDays(today, -daysBack++)}?symbols=SPOT`, reader)(),
        1,
      ),
    };
    let cutDone = 0;
    let restoreAt = 0;
    let readyAt = 0;
    try {
      await untilSamples(streams.cached, 20, 0, 'cached reads before the cut');
      await untilSamples(streams.uncached, 5, 0, 'uncached reads before the cut');
      await pgProxy.cut();
      cutDone = performance.now();
      // Past the key cache (2 s) and the read cache (5 s): from then on both serve what they hold.
      await sleep(6_000);

      const cached = await get('local', todayPath, reader);
      assert.equal(cached.status, 200, cached.text);
      assert.equal(servedPrices(cached.text), servedPrices(before.text), 'the cached day, as it was');
      for (const [what, answer] of [
        ['an unknown key', await get('local', todayPath, unseen)],
        ['a day never read', await get('local', `/api/v1/prices/${addDays(today, 1)}?symbols=SPOT`, reader)],
        ['the latest prices', await get('local', '/api/v1/prices/latest?symbols=SPOT', reader)],
        ['the catalogue (its coverage is read each time)', await get('local', '/api/v1/series', reader)],
        ['an import', await put()],
      ] as const) {
        assert.equal(answer.status, 503, `${what}: ${answer.text}`);
        assert.equal(problemCode(answer), 'service_unavailable', `${what}: service_unavailable`);
      }
      const ready = await readiness('local');
      assert.deepEqual(
        { status: ready.status, prices: ready.checks?.['prices'], keys: ready.checks?.['keys'] },
        { status: 503, prices: 'unreachable', keys: 'unreachable' },
        '/readyz reports PostgreSQL away',
      );

      restoreAt = performance.now();
      await pgProxy.restore();
      await within(PATIENCE_MS, 'PostgreSQL back', async () => (await readiness('local')).status === 200);
      readyAt = performance.now();
      await untilSamples(streams.uncached, 5, readyAt, 'uncached reads after the restore');
    } finally {
      await pgProxy.restore();
      await streams.cached.stop();
      await streams.uncached.stop();
    }

    assertNoBadAnswer('cached reads', streams.cached.samples);
    assertNoBadAnswer('uncached reads', streams.uncached.samples);
    assert.deepEqual(
      tally(streams.cached.samples),
      { '200': streams.cached.samples.length },
      'a cached key reading a cached day is served throughout',
    );
    const changed = streams.cached.samples.filter((s) => servedPrices(s.text) !== servedPrices(before.text));
    assert.equal(changed.length, 0, 'every cached answer holds the day as it was');
    const during = streams.uncached.answeredWithin(cutDone, restoreAt);
    assert.ok(during.length > 0, 'days never read were asked for while PostgreSQL was cut');
    assert.deepEqual(
      tally(during),
      { '503 service_unavailable': during.length },
      'a day never read is 503 while PostgreSQL is cut',
    );
    const afterwards = streams.uncached.sentBetween(readyAt);
    assert.deepEqual(tally(afterwards), { '200': afterwards.length }, 'and served again once it is back');

    const again = await get('local', todayPath, unseen);
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(
      JSON.parse(again.text).series[0].prices.map((p: { price: number }) => p.price),
      [40.5, 41.5, 42.5, 43.5],
      'what was written before the cut is all there',
    );
  });
});
