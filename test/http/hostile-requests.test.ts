/**
 * Hostile requests (SECURITY.md): fast-check writes the requests a careless or malicious
 * client might send to every route the app serves (any method, paths with fuzzed segments, query
 * strings, headers, keys in every place and shape, bodies of any bytes and media type) and every
 * answer must keep the promises of docs/errors.md:
 * - never a 5xx (no store is made unavailable here, so not even a 503);
 * - every error is application/problem+json with the section 5 members and a code of the closed list;
 * - no body or header holds the secret part of a key the request carried, however it was carried;
 * - the process never crashes: no uncaught exception or unhandled rejection, and it still answers.
 *
 * Each part of a request is plausible most of the time and hostile some of the time, so that most
 * requests get past routing, keys and schemas into the handlers (every route must answer 2xx at
 * least once, or the generators have drifted from the API) while every check meets garbage too.
 *
 * Most requests go through `app.inject`, where the URL is normalised as WHATWG URL parsing does. A
 * share goes over real HTTPS with raw request targets (dot segments, backslashes, `%zz`) and
 * repeated header lines; that is also the only way in to the fast path in front of Fastify
 * (src/speed/fast-entry.ts), so each of those is sent twice: a cached answer is served by it.
 *
 * A failing property prints its seed and shrunk counterexample; the seed is fixed, so a failure
 * reproduces. The bugs these properties found have focused tests in
 * hostile-requests-found.test.ts; the generators are the hostile-*.ts files beside this one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { generateKey } from '../../src/domain/keys/key-format.js';
import { loadPageFiles } from '../../src/http/pages/pages.js';
import { parseSources } from '../../src/sources/source-config.js';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';
import { type Answer, checkAnswer, followUps, nodeHeaders, seen } from './hostile-answers.js';
import { type HostileRequest, METHODS, requestArb } from './hostile-request-heads.js';
import { FUZZ_EVENT_ID, type KeyRing, ROUTES, routeName } from './hostile-routes.js';
import { pct } from './hostile-values.js';

const SEED = 20261122;
/** Runs per route; the routes that take a body have the most to check. Sized for about 25 s of CPU. */
const RUNS = { read: 100, write: 200, https: 100 };

/** `text/event-stream`: an answer that stays open until the client goes. */
const isEventStream = (headers: Record<string, unknown>) =>
  String(headers['content-type'] ?? '').startsWith('text/event-stream');

describe('hostile requests', () => {
  let h: Harness;
  let client: Awaited<ReturnType<typeof listenHttps>>;
  let ring: KeyRing;
  const crashes: unknown[] = [];
  const onCrash = (error: unknown) => crashes.push(error);

  before(async () => {
    process.on('uncaughtException', onCrash);
    process.on('unhandledRejection', onCrash);
    // A source whose upstream refuses connections: a run answers 200 with its failure, quickly.
    const sources = parseSources(
      { ecb: { type: 'ecb', currencies: ['NOK'], baseUrl: 'http://127.0.0.1:9/' } },
      {},
    );
    // Open sign-up on, with room for every fuzzed request, so sign-ups are made as well as refused.
    const signup = {
      tier: 'free',
      scopes: ['read'] as const,
      perAddress: { limit: 100_000, windowSeconds: 60 },
      keyExpiresInMs: null,
    };
    h = await createHarness({ https: true, config: { sources, signup } });
    client = await listenHttps(h, 4);
    const make = (scopes: ('read' | 'write' | 'admin')[], kind: 'live' | 'test' = 'live') =>
      h.createKey({ tier: 'enterprise', scopes, kind });
    const revoked = await make(['admin']);
    await h.stores.keys.revoke(revoked.id, h.clock.now);
    const webhooks = async () => {
      const ids: string[] = [];
      for (let n = 0; n < 4; n += 1) {
        const created = await h.app.inject({
          method: 'POST',
          url: '/api/v1/webhooks',
          headers: { 'x-api-key': admin, 'content-type': 'application/json' },
          payload: { url: `https://hooks${n}.example.com/p`, events: ['day.published'] },
        });
        const { id } = created.json() as { id: string };
        await h.stores.webhooks?.enqueue([id], 0, [fuzzDelivery(id)]);
        ids.push(id);
      }
      return ids;
    };
    // Invitations with room for many claims, so claims succeed as well as fail.
    const invitations = async () => {
      const made = await Promise.all(
        [1, 2, 3].map(() => h.services.invitations.create({ tier: 'free', uses: 1000 })),
      );
      return { ids: made.map((m) => m.record.id), tokens: made.map((m) => m.token) };
    };
    const victims = async () => (await Promise.all([1, 2, 3, 4].map(() => make(['read'])))).map((v) => v.id);
    const admin = (await make(['admin'])).key;
    ring = {
      read: (await make(['read'])).key,
      write: (await make(['write'])).key,
      admin,
      demo: h.demoKey,
      test: (await make(['read'], 'test')).key,
      revoked: revoked.key,
      unknown: generateKey('live'),
      // The development data set lets pro keys rotate themselves.
      selfRotating: await Promise.all(
        [1, 2, 3, 4].map(async () => (await h.createKey({ tier: 'pro', scopes: ['read'] })).key),
      ),
      victims: { revoke: await victims(), rotate: await victims() },
      revokedId: revoked.id,
      webhooks: { remove: await webhooks(), keep: await webhooks() },
      assetsVersion: (await loadPageFiles()).version,
      invitations: await invitations(),
    };
  });
  after(async () => {
    process.off('uncaughtException', onCrash);
    process.off('unhandledRejection', onCrash);
    await client.close();
    await h.close();
  });

  /**
   * One request through `app.inject`; the fake clock moves a second, so no limit runs dry. The
   * answer is read as a stream: an event stream (GET /api/v1/events) never ends, so its body is
   * left unread and it stays open until the app closes (the tier's bound on open streams then
   * answers 429, as documented).
   */
  async function viaInject(request: HostileRequest): Promise<Answer> {
    h.clock.advance(1000);
    const response = await h.app.inject({
      method: request.method as InjectOptions['method'],
      url: request.url,
      headers: nodeHeaders(request.headers),
      remoteAddress: request.remoteAddress,
      ...(request.body && { payload: request.body }),
      payloadAsStream: true,
    });
    const stream = response.stream();
    if (isEventStream(response.headers)) {
      stream.destroy();
      return { status: response.statusCode, headers: response.headers, body: Buffer.alloc(0) };
    }
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
    return { status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks) };
  }

  test('the route list holds every operation of the OpenAPI document, and each is a route of the app', async () => {
    const response = await h.app.inject({ url: '/api/v1/openapi.json' });
    const document = response.json() as { paths: Record<string, Record<string, unknown>> };
    const listed = new Set(ROUTES.map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, '{$1}')}`));
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const method of Object.keys(operations)) {
        assert.ok(
          listed.has(`${method.toUpperCase()} ${path}`),
          `${method.toUpperCase()} ${path} is fuzzed here`,
        );
      }
    }
    for (const route of ROUTES) {
      assert.ok(
        h.app.hasRoute({ method: route.method, url: route.url }),
        `${routeName(route)} is a route of the app`,
      );
    }
  });

  for (const route of ROUTES) {
    test(`${routeName(route)}: no 5xx, every error problem+json with a documented code, no key echoed`, async () => {
      await fc.assert(
        fc.asyncProperty(requestArb(ring, route), async (request) => {
          const answer = await viaInject(request);
          checkAnswer(request, answer, ring);
          for (const next of followUps(request, answer, ring)) checkAnswer(next, await viaInject(next), ring);
        }),
        { numRuns: route.body === 'none' ? RUNS.read : RUNS.write, seed: SEED },
      );
    });
  }

  test('over real HTTPS, raw request targets and repeated header lines, each sent twice (the fast path answers the second)', async () => {
    /** What undici and Node's HTTP parser pass unchanged: printable ASCII; the rest percent-encoded. */
    const rawTarget = (url: string) => url.replace(/[^\x21-\x7e]/gu, (c) => pct(c));
    const token = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
    // Headers undici sets itself or refuses to send.
    const clientOwned = new Set([
      'host',
      'connection',
      'transfer-encoding',
      'keep-alive',
      'upgrade',
      'expect',
    ]);
    for (const name of ['content-length', 'te', 'trailer']) clientOwned.add(name);
    const arb = fc.constantFrom(...ROUTES).chain((route) => requestArb(ring, route));
    await fc.assert(
      fc.asyncProperty(arb, async (generated) => {
        const method = (METHODS as readonly string[]).includes(generated.method) ? generated.method : 'GET';
        const request: HostileRequest = {
          ...generated,
          method,
          url: rawTarget(generated.url),
          headers: generated.headers.filter(
            ([name]) => token.test(name) && !clientOwned.has(name.toLowerCase()),
          ),
          body: method === 'GET' || method === 'HEAD' ? undefined : generated.body,
          remoteAddress: '127.0.0.1',
        };
        // Node refuses request heads over 16 KiB before the app sees them: hostile-connections.test.ts.
        fc.pre(
          request.url.length + request.headers.reduce((n, [k, v]) => n + k.length + v.length + 4, 0) < 15_000,
        );
        const headers: Record<string, string[]> = {};
        for (const [name, value] of request.headers) {
          headers[name.toLowerCase()] = [...(headers[name.toLowerCase()] ?? []), value];
        }
        // A new minute each run: every request comes from one address, whose failed logins are limited.
        h.clock.advance(61_000);
        for (let i = 0; i < 2; i++) {
          const response = await client.agent.request({
            origin: client.base,
            path: request.url,
            method,
            headers,
            ...(request.body && { body: request.body }),
          });
          // An event stream never ends: its body is left unread and the connection dropped.
          const streaming = isEventStream(response.headers);
          if (streaming) {
            // undici ends a body destroyed before its end with an abort error: ours, not the server's.
            response.body.on('error', () => {});
            response.body.destroy();
          }
          const body = streaming ? Buffer.alloc(0) : Buffer.from(await response.body.arrayBuffer());
          checkAnswer(request, { status: response.statusCode, headers: response.headers, body }, ring);
        }
      }),
      { numRuns: RUNS.https, seed: SEED },
    );
  });

  test('the requests reached every handler: each route answered 2xx at least once', () => {
    for (const route of ROUTES) {
      const statuses = [...(seen.get(routeName(route)) ?? [])];
      assert.ok(
        statuses.some((s) => s >= 200 && s < 400),
        `${routeName(route)} answered ${statuses.sort().join(', ')}`,
      );
    }
  });

  test('afterwards the process is up: it answers normal requests, and nothing was thrown uncaught', async () => {
    const health = await h.app.inject({ url: '/healthz' });
    assert.equal(health.statusCode, 200, `healthz: ${health.body}`);
    const today = await h.app.inject({ url: '/api/v1/prices/today', headers: { 'x-api-key': ring.read } });
    assert.equal(today.statusCode, 200, `today through inject: ${today.body}`);
    const overHttps = await client.get('/api/v1/prices/today?symbols=NO1', {
      authorization: `Bearer ${ring.read}`,
    });
    assert.equal(overHttps.status, 200, `today over HTTPS: ${overHttps.text}`);
    assert.deepEqual(crashes, [], 'no uncaught exception or unhandled rejection during the run');
    const errors = h.logs.filter((line) => Number(line.level) >= 50);
    assert.deepEqual(errors, [], 'the server logged no error');
  });
});

/** A delivered delivery of `FUZZ_EVENT_ID` for webhook `id`, as the worker would leave it. */
function fuzzDelivery(id: string) {
  return {
    endpoint_id: id,
    event_id: FUZZ_EVENT_ID,
    event_seq: 1,
    payload: '{}',
    state: 'delivered' as const,
    attempts: 1,
    next_attempt_at: null,
    last_attempt_at: 0,
    last_status: 200,
    last_latency_ms: 5,
    last_error: null,
  };
}
