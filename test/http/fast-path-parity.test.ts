/**
 * The speed switch (`PRICEPOINT_FAST_PATH`, src/speed/README.md) changes nothing a client or an
 * operator can see. The same requests, sent to a server with it on (the fast entry, trusted heads,
 * the hand-written log line, folded metrics) and to one with it off (Fastify, public `writeHead`,
 * plain pino and prom-client), get the same status, header fields and body bytes, leave the same
 * log lines and the same `/metrics` counts: over HTTPS and plain HTTP, with and without a trusted
 * proxy, for today, a date, a range, `latest` and the cheapest window, HEAD, refusals and a
 * request that arrives while the server shuts down. Only what differs by design is left out:
 * `Date`, request ids (in the header and in a problem body), times and durations, and key ids
 * (random per server; compared by the role of the key).
 */
import assert from 'node:assert/strict';
import { connect as connectTcp } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect as connectTls } from 'node:tls';
import { Agent, request } from 'undici';
import { DEFAULT_TIERS, type Tier } from '../../src/domain/limits/tiers.js';
import { createHarness, type Harness, listenHttps, testTls } from '../helpers/harness.js';

/** A tier whose limit the test reaches: two requests a minute. */
const TINY: Tier = {
  name: 'tiny',
  limits: [{ name: 'minute', limit: 2, windowSeconds: 60 }],
  countPer: 'key',
  kinds: null,
  historyDays: 31,
  streams: 3,
};

/** How the server is reached: over TLS or not, through a trusted proxy or straight. */
interface Shape {
  readonly https: boolean;
  readonly proxy: boolean;
}

/** The address a trusted proxy says the client has. */
const FORWARDED = '203.0.113.9';

interface Client {
  readonly port: number;
  request(
    method: 'GET' | 'HEAD',
    path: string,
    headers: Record<string, string>,
  ): Promise<{ status: number; headers: Record<string, unknown>; raw: Buffer }>;
  close(): Promise<void>;
}

/** One keep-alive connection to the harness' server, over HTTPS or plain HTTP. */
async function connect(h: Harness, https: boolean): Promise<Client> {
  if (https) {
    const tls = await listenHttps(h, 1);
    return {
      port: tls.port,
      request: (method, path, headers) => tls.request(method, path, { headers }),
      close: () => tls.close(),
    };
  }
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  const address = h.app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const agent = new Agent({ connections: 1, pipelining: 0 });
  return {
    port,
    async request(method, path, headers) {
      const answer = await request(`http://127.0.0.1:${port}${path}`, { method, headers, dispatcher: agent });
      return {
        status: answer.statusCode,
        headers: answer.headers,
        raw: Buffer.from(await answer.body.arrayBuffer()),
      };
    },
    close: () => agent.close(),
  };
}

interface Side {
  readonly h: Harness;
  readonly client: Client;
  readonly shape: Shape;
  /** Clear keys by role; ids by role, to compare log lines. */
  readonly keys: Record<string, string>;
  readonly ids: Map<string, string>;
}

async function side(fastPath: boolean, shape: Shape): Promise<Side> {
  const h = await createHarness({
    ...(shape.https && { https: true }),
    config: {
      fastPath,
      tiers: { ...DEFAULT_TIERS, tiny: TINY },
      fx: { EUR: { USD: 'EURUSD' } },
      ...(shape.proxy && { trustProxy: ['127.0.0.1', '::1'] }),
    },
  });
  const client = await connect(h, shape.https);
  const keys: Record<string, string> = {};
  const ids = new Map<string, string>();
  for (const [role, tier] of [
    ['reader', 'enterprise'],
    ['tiny', 'tiny'],
  ] as const) {
    const made = await h.createKey({ tier, name: role });
    keys[role] = made.key;
    ids.set(made.id, role);
  }
  return { h, client, shape, keys, ids };
}

/** One request of the script: path and headers, with `{reader}`-style placeholders for keys. */
interface Step {
  readonly what: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly method?: 'HEAD';
}

const ONE = '/api/v1/prices/today?symbols=NO1';
const DATE = '/api/v1/prices/2026-11-21?symbols=NO1';
const RANGE = '/api/v1/prices?from=2026-11-20&to=2026-11-21&symbols=NO1';
const LATEST = '/api/v1/prices/latest?symbols=NO1';
const CHEAPEST = '/api/v1/prices/cheapest?symbols=NO1&duration=PT3H&from=today&to=tomorrow';
const FULL = '/api/v1/prices/today';
const reader = { 'x-api-key': '{reader}' };

/** Every case twice or more: the first builds the answer, the next ones may be served fast. */
const SCRIPT: Step[] = [
  { what: 'one series', path: ONE, headers: reader },
  { what: 'one series again', path: ONE, headers: reader },
  { what: 'one series, Bearer', path: ONE, headers: { authorization: 'Bearer {reader}' } },
  { what: 'full day', path: FULL, headers: reader },
  { what: 'full day again', path: FULL, headers: reader },
  { what: 'full day, Brotli', path: FULL, headers: { ...reader, 'accept-encoding': 'br' } },
  { what: 'full day, Brotli again', path: FULL, headers: { ...reader, 'accept-encoding': 'br' } },
  { what: 'a date', path: DATE, headers: reader },
  { what: 'a date again', path: DATE, headers: reader },
  { what: 'a range', path: RANGE, headers: reader },
  { what: 'a range again', path: RANGE, headers: reader },
  { what: 'latest', path: LATEST, headers: reader },
  { what: 'latest again', path: LATEST, headers: reader },
  { what: 'cheapest', path: CHEAPEST, headers: reader },
  { what: 'cheapest again', path: CHEAPEST, headers: reader },
  { what: 'HEAD', path: ONE, headers: reader, method: 'HEAD' },
  { what: 'HEAD, Brotli', path: FULL, headers: { ...reader, 'accept-encoding': 'br' }, method: 'HEAD' },
  { what: 'full day, gzip', path: FULL, headers: { ...reader, 'accept-encoding': 'gzip, deflate' } },
  { what: 'full day, gzip again', path: FULL, headers: { ...reader, 'accept-encoding': 'gzip, deflate' } },
  { what: 'CSV by format', path: `${ONE}&format=csv`, headers: reader },
  { what: 'CSV by format again', path: `${ONE}&format=csv`, headers: reader },
  { what: 'CSV by Accept', path: ONE, headers: { ...reader, accept: 'text/csv' } },
  { what: 'CSV by Accept again', path: ONE, headers: { ...reader, accept: 'text/csv' } },
  { what: '304', path: ONE, headers: { ...reader, 'if-none-match': '{etag}' } },
  {
    what: '304, Brotli',
    path: FULL,
    headers: { ...reader, 'accept-encoding': 'br', 'if-none-match': '{etag-br}' },
  },
  { what: 'a stale tag', path: ONE, headers: { ...reader, 'if-none-match': '"not-the-tag"' } },
  { what: 'bad key', path: ONE, headers: { 'x-api-key': 'pp_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' } },
  { what: 'missing key', path: ONE },
  { what: 'two different keys', path: ONE, headers: { ...reader, authorization: 'Bearer {tiny}' } },
  { what: 'key in the query too', path: `${ONE}&api_key=x`, headers: reader },
  { what: 'wrong scope', path: '/api/v1/keys', headers: reader },
  { what: 'bad query', path: `${ONE}&bogus=1`, headers: reader },
  { what: 'bad zone', path: `${ONE}&tz=Not/AZone`, headers: reader },
  { what: 'converted', path: `${ONE}&currency=USD&unit=kWh`, headers: reader },
  { what: 'converted again', path: `${ONE}&currency=USD&unit=kWh`, headers: reader },
  { what: 'converted CSV', path: `${ONE}&currency=usd&format=csv`, headers: reader },
  { what: 'converted CSV again', path: `${ONE}&currency=usd&format=csv`, headers: reader },
  { what: 'plain after converted', path: ONE, headers: reader },
  { what: 'unit refused', path: '/api/v1/prices/today?symbols=EURUSD&unit=kWh', headers: reader },
  { what: 'tiny tier, first', path: ONE, headers: { 'x-api-key': '{tiny}' } },
  { what: 'tiny tier, second', path: ONE, headers: { 'x-api-key': '{tiny}' } },
  { what: 'tiny tier, rate-limited', path: ONE, headers: { 'x-api-key': '{tiny}' } },
  { what: 'tiny tier, rate-limited again', path: ONE, headers: { 'x-api-key': '{tiny}' } },
];

/** Tags learnt from earlier answers, for `If-None-Match`. */
interface Learnt {
  etag?: string;
  'etag-br'?: string;
}

function fill(text: string, s: Side, learnt: Learnt): string {
  return text
    .replace('{reader}', s.keys.reader as string)
    .replace('{tiny}', s.keys.tiny as string)
    .replace('{etag}', learnt.etag ?? '')
    .replace('{etag-br}', learnt['etag-br'] ?? '');
}

interface Seen {
  readonly status: number;
  readonly headers: Record<string, unknown>;
  readonly body: string;
}

async function send(s: Side, step: Step, learnt: Learnt): Promise<Seen> {
  const headers = Object.fromEntries(
    Object.entries(step.headers ?? {}).map(([name, value]) => [name, fill(value, s, learnt)]),
  );
  if (s.shape.proxy) headers['x-forwarded-for'] = FORWARDED;
  const answer = await s.client.request(step.method ?? 'GET', step.path, headers);
  const id = String(answer.headers['x-request-id']);
  assert.match(
    id,
    /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    'a UUID request id',
  );
  const { date: _date, 'x-request-id': _id, ...rest } = answer.headers;
  if (step.what === 'one series') learnt.etag = String(answer.headers.etag);
  if (step.what === 'full day, Brotli again') learnt['etag-br'] = String(answer.headers.etag);
  // Bodies compared as bytes (base64), with the request id a problem body names left out.
  const body = answer.raw.toString('base64');
  const named = answer.raw.toString('latin1').includes(id)
    ? answer.raw.toString('latin1').replaceAll(id, '<id>')
    : body;
  return { status: answer.status, headers: rest, body: named };
}

/** The request lines of a side, without time, ids and duration; key ids by the role of the key. */
function requestLines(s: Side): Record<string, unknown>[] {
  return s.h.logs
    .filter((line) => line.msg === 'request')
    .map(({ time: _time, reqId: _reqId, latencyMs, keyId, ...rest }) => {
      assert.equal(typeof latencyMs, 'number', 'a duration');
      return { ...rest, keyId: keyId === null ? null : (s.ids.get(String(keyId)) ?? 'unknown') };
    });
}

const fastAnswers = async (s: Side): Promise<number> => {
  const metric = await s.h.app.inject({ url: '/metrics' });
  const line = metric.body.split('\n').find((l) => l.startsWith('pricepoint_fast_path_answers_total{'));
  return line === undefined ? 0 : Number(line.split(' ').pop());
};

/**
 * The request metrics of the exposition, by design the same on both sides: every line of the
 * request, refusal and failed-login counters, and of the latency histogram its label sets and
 * counts (its buckets and sums are times). The fast answers' own counter is left out.
 */
async function requestMetrics(s: Side): Promise<string[]> {
  const text = (await s.h.app.inject({ url: '/metrics' })).body;
  return text
    .split('\n')
    .filter(
      (line) =>
        /^(# (HELP|TYPE) )?pricepoint_(http_requests_total|rate_limit_rejections_total|auth_failures_total)\b/.test(
          line,
        ) ||
        /^(# (HELP|TYPE) )?pricepoint_http_request_duration_seconds\b/.test(line) ||
        /^pricepoint_http_request_duration_seconds_count\{/.test(line),
    )
    .filter((line) => !/^pricepoint_http_request_duration_seconds_(bucket|sum)/.test(line))
    .map((line) => line.replace(/^(pricepoint_http_request_duration_seconds)\{/, '$1{'));
}

/**
 * A request whose head arrives in two parts, the second once the server has begun to shut down:
 * its connection is busy, so the server waits for it and answers it, the way a request that came
 * a moment earlier is answered. Gives the answer's status line, header fields and body.
 */
async function duringShutdown(
  s: Side,
): Promise<{ status: string; headers: Record<string, string>; body: string }> {
  const { cert } = await testTls();
  const socket = s.shape.https
    ? connectTls({ host: '127.0.0.1', port: s.client.port, ca: cert, servername: 'localhost' })
    : connectTcp({ host: '127.0.0.1', port: s.client.port });
  await new Promise((resolve) => socket.once(s.shape.https ? 'secureConnect' : 'connect', resolve));
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise((resolve) => socket.once('close', resolve));
  socket.write(`GET ${ONE} HTTP/1.1\r\nhost: localhost\r\n`);
  await sleep(50);
  const closed = s.h.app.close();
  await sleep(50);
  const forwarded = s.shape.proxy ? `x-forwarded-for: ${FORWARDED}\r\n` : '';
  socket.write(`x-api-key: ${s.keys.reader}\r\n${forwarded}\r\n`);
  await ended;
  await closed;
  const [head = '', body = ''] = Buffer.concat(chunks).toString('latin1').split('\r\n\r\n');
  const [status = '', ...fields] = head.split('\r\n');
  const headers = Object.fromEntries(
    fields
      .map((field) => field.split(': '))
      .filter(([name]) => name?.toLowerCase() !== 'date' && name?.toLowerCase() !== 'x-request-id')
      .map(([name, value]) => [name?.toLowerCase() ?? '', value ?? '']),
  );
  return { status, headers, body: body.replace(/"requestId":"[^"]+"/, '"requestId":"<id>"') };
}

const SHAPES: Shape[] = [
  { https: true, proxy: false },
  { https: true, proxy: true },
  { https: false, proxy: false },
  { https: false, proxy: true },
];

for (const shape of SHAPES) {
  const name = `${shape.https ? 'HTTPS' : 'HTTP'}${shape.proxy ? ', behind a trusted proxy' : ''}`;
  describe(`the speed switch on and off, ${name}`, () => {
    let on: Side;
    let off: Side;
    const seen = new Map<Side, Seen[]>();
    const lines = new Map<Side, Record<string, unknown>[]>();
    const metrics = new Map<Side, string[]>();
    const fast = new Map<Side, number>();
    const shutdown = new Map<Side, Awaited<ReturnType<typeof duringShutdown>>>();

    before(async () => {
      on = await side(true, shape);
      off = await side(false, shape);
      for (const s of [on, off]) {
        const learnt: Learnt = {};
        const answers: Seen[] = [];
        for (const step of SCRIPT) answers.push(await send(s, step, learnt));
        seen.set(s, answers);
        lines.set(s, requestLines(s));
        metrics.set(s, await requestMetrics(s));
        fast.set(s, await fastAnswers(s));
        await s.client.close();
        shutdown.set(s, await duringShutdown(s));
      }
    });
    after(async () => {
      for (const s of [on, off]) await s.h.close();
    });

    test('the fast entry served the repeated reads, and only with the switch on', () => {
      assert.ok((fast.get(on) ?? 0) >= 12, 'the repeated reads went the fast way');
      assert.equal(fast.get(off), 0, 'switched off, nothing is served fast');
    });

    test('every status, header field and body byte is the same', () => {
      const a = seen.get(on) ?? [];
      const b = seen.get(off) ?? [];
      assert.equal(a.length, SCRIPT.length);
      SCRIPT.forEach((step, i) => {
        assert.equal(a[i]?.status, b[i]?.status, `${step.what}: status`);
        assert.deepEqual(a[i]?.headers, b[i]?.headers, `${step.what}: headers`);
        assert.equal(a[i]?.body, b[i]?.body, `${step.what}: body`);
      });
      // The script reaches what it says it does.
      const statuses = Object.fromEntries(SCRIPT.map((step, i) => [step.what, a[i]?.status]));
      for (const what of [
        'one series again',
        'a date again',
        'a range again',
        'latest again',
        'cheapest again',
        'HEAD',
      ])
        assert.equal(statuses[what], 200, what);
      assert.equal(statuses['304'], 304);
      assert.equal(statuses['304, Brotli'], 304);
      assert.equal(statuses['bad key'], 401);
      assert.equal(statuses['missing key'], 401);
      assert.equal(statuses['key in the query too'], 401);
      assert.equal(statuses['wrong scope'], 403);
      assert.equal(statuses['bad query'], 400);
      assert.equal(statuses['tiny tier, rate-limited'], 429);
      const brotli = a[SCRIPT.findIndex((step) => step.what === 'full day, Brotli again')];
      assert.equal(brotli?.headers['content-encoding'], 'br');
      const head = a[SCRIPT.findIndex((step) => step.what === 'HEAD')];
      assert.equal(head?.body, '', 'HEAD has no body');
      if (shape.https) assert.ok(a[0]?.headers['strict-transport-security'], 'HSTS over HTTPS');
      else assert.equal(a[0]?.headers['strict-transport-security'], undefined, 'no HSTS over HTTP');
    });

    test('every request leaves the same log line, in the same order', () => {
      const a = lines.get(on) ?? [];
      const b = lines.get(off) ?? [];
      assert.ok(a.length >= SCRIPT.length, 'a line per request');
      assert.deepEqual(a, b);
      const ips = new Set(a.slice(0, SCRIPT.length).map((line) => line.ip));
      assert.deepEqual(
        [...ips],
        [shape.proxy ? FORWARDED : '127.0.0.1'],
        'the client address, as the proxy says',
      );
      assert.deepEqual(Object.keys(on.h.logs.find((l) => l.msg === 'request') ?? {}), [
        'level',
        'time',
        'pid',
        'hostname',
        'reqId',
        'method',
        'url',
        'status',
        'latencyMs',
        'keyId',
        'tier',
        'ip',
        'msg',
      ]);
    });

    test('/metrics counts the same requests, refusals and failed logins', () => {
      const a = metrics.get(on) ?? [];
      assert.ok(
        a.some((line) => line.startsWith('pricepoint_http_requests_total{') && line.includes('status="429"')),
      );
      assert.ok(a.some((line) => line.startsWith('pricepoint_auth_failures_total{')));
      assert.deepEqual(a, metrics.get(off));
    });

    test('a request that arrives as the server shuts down gets the same 503', () => {
      const a = shutdown.get(on);
      assert.equal(a?.status, 'HTTP/1.1 503 Service Unavailable');
      assert.equal(a?.headers.connection, 'close');
      assert.deepEqual(a, shutdown.get(off));
    });
  });
}
