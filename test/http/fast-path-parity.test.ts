/**
 * The fast entry point (src/speed/fast-entry.ts) changes nothing a client or an operator can see: the
 * same requests, sent to a server with it on and to one with it off (`PRICEPOINT_FAST_PATH`), get
 * the same status, header fields and body bytes, and leave the same log lines. Only what differs by
 * design is left out: `Date`, request ids (in the header and in a problem body), the time and
 * duration of a log line, and key ids (random per server; compared by the order keys were made).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_TIERS, type Tier } from '../../src/domain/limits/tiers.js';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';

/** A tier whose limit the test reaches: two requests a minute. */
const TINY: Tier = {
  name: 'tiny',
  limits: [{ name: 'minute', limit: 2, windowSeconds: 60 }],
  countPer: 'key',
  kinds: null,
  historyDays: 31,
  streams: 3,
};

interface Side {
  readonly h: Harness;
  readonly client: Awaited<ReturnType<typeof listenHttps>>;
  /** Clear keys by role; ids by role, to compare log lines. */
  readonly keys: Record<string, string>;
  readonly ids: Map<string, string>;
}

async function side(fastPath: boolean): Promise<Side> {
  const h = await createHarness({
    https: true,
    config: { fastPath, tiers: { ...DEFAULT_TIERS, tiny: TINY }, fx: { EUR: { USD: 'EURUSD' } } },
  });
  const client = await listenHttps(h, 1);
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
  return { h, client, keys, ids };
}

/** One request of the script: path and headers, with `{reader}`-style placeholders for keys. */
interface Step {
  readonly what: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
}

const ONE = '/api/v1/prices/today?symbols=NO1';
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
  const answer = await s.client.request('GET', step.path, { headers });
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

describe('the fast entry point on and off', () => {
  let on: Side;
  let off: Side;
  const seen = new Map<Side, Seen[]>();
  const lines = new Map<Side, Record<string, unknown>[]>();

  before(async () => {
    on = await side(true);
    off = await side(false);
    for (const s of [on, off]) {
      const learnt: Learnt = {};
      const answers: Seen[] = [];
      for (const step of SCRIPT) answers.push(await send(s, step, learnt));
      seen.set(s, answers);
      lines.set(s, requestLines(s));
    }
  });
  after(async () => {
    for (const s of [on, off]) {
      await s.client.close();
      await s.h.close();
    }
  });

  test('the fast entry point served the repeated reads, and only with it on', async () => {
    assert.ok((await fastAnswers(on)) >= 8, 'the repeated reads went the fast way');
    assert.equal(await fastAnswers(off), 0, 'switched off, nothing is served fast');
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
    assert.equal(statuses['one series again'], 200);
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
  });

  test('every request leaves the same log line, in the same order', () => {
    const a = lines.get(on) ?? [];
    const b = lines.get(off) ?? [];
    assert.equal(a.length, SCRIPT.length, 'one line per request');
    assert.deepEqual(a, b);
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
});
