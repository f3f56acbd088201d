/**
 * `@pricepoint/client` against a real server over HTTPS (the test harness: development data set,
 * demo key, fake clock at 2026-11-22T10:15:03.120Z). Every read endpoint through its typed method,
 * JSON and CSV, typed errors, the key only ever in the `x-api-key` header, and a real 429 retried.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  type FetchLike,
  PricepointClient,
  type PricepointClientOptions,
  PricepointError,
  type RetryEvent,
} from '@pricepoint/client';
import { fetch as undiciFetch } from 'undici';
import { DEV_SERIES } from '../../src/dev-data/dev-data.js';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';

const NOW = '2026-11-22T10:15:03.120Z';
/** Every series of the development data set. */
const ALL_SYMBOLS = DEV_SERIES.map((s) => s.symbol);

interface Sent {
  url: string;
  headers: Record<string, string>;
}

/** A fetch that trusts the harness certificate and records what the client sent. */
function recordingFetch(server: Awaited<ReturnType<typeof listenHttps>>, sent: Sent[]): FetchLike {
  return (url, init) => {
    sent.push({ url, headers: { ...init.headers } });
    return undiciFetch(url, { ...init, dispatcher: server.agent });
  };
}

async function rejection(promise: Promise<unknown>): Promise<PricepointError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof PricepointError, `expected a PricepointError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the call to fail');
}

let h: Harness;
let server: Awaited<ReturnType<typeof listenHttps>>;
let sent: Sent[];
let client: PricepointClient;

function clientWith(options: Partial<PricepointClientOptions> = {}): PricepointClient {
  return new PricepointClient({
    baseUrl: server.base,
    apiKey: h.demoKey,
    fetch: recordingFetch(server, sent),
    ...options,
  });
}

before(async () => {
  h = await createHarness({ https: true, now: NOW });
  server = await listenHttps(h);
  sent = [];
  client = clientWith();
});
after(async () => {
  await server.close();
  await h.close();
});

describe('today', () => {
  test('answers every series the demo key reads, typed, with the rate-limit headers', async () => {
    const answer = await client.today();
    assert.equal(answer.generatedAt, NOW);
    assert.deepEqual(answer.series.map((s) => s.symbol).sort(), [...ALL_SYMBOLS].sort());
    const no1 = answer.series.find((s) => s.symbol === 'NO1');
    assert.ok(no1, 'NO1 is in the answer');
    assert.equal(no1.timezone, 'Europe/Oslo');
    assert.equal(no1.resolution, 'PT15M');
    assert.equal(no1.date, '2026-11-22');
    assert.equal(no1.prices.length, 96);
    assert.equal(no1.prices[0]?.start, '2026-11-22T00:00:00+01:00');
    assert.equal(typeof no1.prices[0]?.price, 'number');
    assert.equal(client.lastRateLimit?.limit, 30);
    assert.equal(typeof client.lastRateLimit?.remaining, 'number');
    assert.equal(client.lastRateLimit?.reset, Date.parse('2026-11-22T10:16:00Z') / 1000);
  });

  test('symbols are sent comma-joined and pick the series in that order', async () => {
    sent.length = 0;
    const answer = await client.today({ symbols: ['DE-LU', 'no1'] });
    assert.deepEqual(
      answer.series.map((s) => s.symbol),
      ['DE-LU', 'NO1'],
    );
    assert.equal(new URL(sent[0]!.url).searchParams.get('symbols'), 'DE-LU,no1');
  });

  test('tz moves the calendar day of every series', async () => {
    // 10:15Z on the 22nd is already 00:15 on the 23rd in Kiritimati (UTC+14).
    const answer = await client.today({ symbols: ['NO1', 'BTC-USD'], tz: 'Pacific/Kiritimati' });
    assert.deepEqual(
      answer.series.map((s) => s.date),
      ['2026-11-23', '2026-11-23'],
    );
    assert.equal(answer.series[0]?.prices[0]?.start, '2026-11-23T00:00:00+14:00');
  });

  test('resolution P1D gives one mean per day', async () => {
    const answer = await client.today({ symbols: ['NO1'], resolution: 'P1D' });
    assert.equal(answer.series[0]?.resolution, 'P1D');
    assert.equal(answer.series[0]?.prices.length, 1);
  });

  test("format 'csv' answers the CSV text, one row per interval", async () => {
    const csv: string = await client.today({ symbols: ['NO1'], format: 'csv' });
    const lines = csv.trim().split(/\r?\n/);
    assert.equal(lines[0], 'symbol,date,start,end,price,currency,unit');
    assert.equal(lines.length, 1 + 96);
    assert.match(
      lines[1] ?? '',
      /^NO1,2026-11-22,2026-11-22T00:00:00\+01:00,2026-11-22T00:15:00\+01:00,-?[\d.]+,EUR,MWh$/,
    );
  });
});

describe('usage', () => {
  test("answers the demo key's tier and limits", async () => {
    const usage = await client.usage();
    assert.equal(usage.tier, 'demo');
    assert.deepEqual(
      usage.limits.map((l) => [l.name, l.limit, l.windowSeconds]),
      [
        ['minute', 30, 60],
        ['day', 1000, 86400],
      ],
    );
    assert.equal(usage.limits[0]?.resetAt, '2026-11-22T10:16:00.000Z');
    assert.equal(usage.historyDays, 31);
  });
});

describe('typed errors', () => {
  test('a bad key is a PricepointError 401 invalid_api_key with the request id, not retried', async () => {
    sent.length = 0;
    const bad = clientWith({ apiKey: 'pp_demo_notakeyatall' });
    const error = await rejection(bad.today());
    assert.equal(error.status, 401);
    assert.equal(error.code, 'invalid_api_key');
    assert.equal(error.problem.status, 401);
    assert.equal(error.problem.code, 'invalid_api_key');
    assert.equal(typeof error.problem.title, 'string');
    assert.ok(typeof error.requestId === 'string' && error.requestId.length > 0, 'a request id');
    assert.equal(error.requestId, error.problem.requestId);
    assert.equal(error.retryAfterSeconds, undefined);
    assert.equal(sent.length, 1);
  });

  test('an unknown symbol is a 404 unknown_series that names it', async () => {
    const error = await rejection(client.today({ symbols: ['NO1', 'NOPE'] }));
    assert.equal(error.status, 404);
    assert.equal(error.code, 'unknown_series');
    assert.deepEqual(error.problem['symbols'], ['NOPE']);
    assert.equal(error.problem.instance?.startsWith('/api/v1/prices/today'), true);
  });

  test('a malformed value is a 400 invalid_parameter naming the parameter', async () => {
    const error = await rejection(client.today({ tz: 'Mars/Olympus_Mons' }));
    assert.equal(error.status, 400);
    assert.equal(error.code, 'invalid_parameter');
    assert.equal(error.problem['parameter'], 'tz');
  });
});

describe('the key travels only in the x-api-key header', () => {
  test('never in a URL the client fetched, nor in any server log line', async () => {
    sent.length = 0;
    await client.today({ symbols: ['NO1'] });
    await client.usage();
    await rejection(client.today({ symbols: ['NOPE'] }));
    assert.equal(sent.length, 3);
    for (const request of sent) {
      assert.equal(request.url.includes(h.demoKey), false, `key in ${request.url}`);
      assert.equal(request.headers['x-api-key'], h.demoKey);
      assert.equal(request.headers['authorization'], undefined);
    }
    assert.ok(h.rawLogs.length > 0, 'the server logged the requests');
    assert.equal(
      h.rawLogs.some((line) => line.includes(h.demoKey)),
      false,
      'no log line holds the key',
    );
  });
});

describe('the other read endpoints', () => {
  test('day: a calendar date and a relative day', async () => {
    const past = await client.day('2026-11-20', { symbols: ['NO1'] });
    assert.equal(past.series[0]?.date, '2026-11-20');
    assert.equal(past.series[0]?.prices.length, 96);
    // The development data is written by an import, and every day of it is whole.
    assert.deepEqual([past.series[0]?.complete, past.series[0]?.source], [true, 'import']);
    const tomorrow = await client.day('tomorrow', { symbols: ['NO1', 'EURUSD'] });
    assert.deepEqual(
      tomorrow.series.map((s) => [s.symbol, s.date]),
      [
        ['NO1', '2026-11-23'],
        ['EURUSD', '2026-11-23'],
      ],
    );
    assert.equal(tomorrow.series[0]?.prices.length, 96, 'electricity has tomorrow');
    assert.deepEqual(tomorrow.series[1]?.prices, [], 'FX has no tomorrow yet');
    const csv = await client.day('yesterday', { symbols: ['NO1'], format: 'csv' });
    assert.match(csv, /^symbol,date,start,end,price,currency,unit\r?\nNO1,2026-11-21,/);
  });

  test('range: one entry per series per day, ordered by series, then date', async () => {
    const answer = await client.range('2026-11-20', '2026-11-22', { symbols: ['NO1', 'DE-LU'] });
    assert.deepEqual(
      answer.series.map((s) => `${s.symbol} ${s.date}`),
      [
        'NO1 2026-11-20',
        'NO1 2026-11-21',
        'NO1 2026-11-22',
        'DE-LU 2026-11-20',
        'DE-LU 2026-11-21',
        'DE-LU 2026-11-22',
      ],
    );
    const error = await rejection(client.range('2025-01-01', '2026-11-22', { symbols: ['NO1'] }));
    assert.equal(error.code, 'invalid_parameter');
  });

  test('latest: at most one point per series, the one containing now', async () => {
    const answer = await client.latest({ symbols: ['NO1', 'BTC-USD'] });
    assert.deepEqual(
      answer.series.map((s) => s.symbol),
      ['NO1', 'BTC-USD'],
    );
    for (const day of answer.series) assert.ok(day.prices.length <= 1, `${day.symbol}: at most one point`);
    assert.equal(answer.series[0]?.prices[0]?.start, '2026-11-22T11:15:00+01:00');
    assert.equal(answer.series[1]?.prices[0]?.start, '2026-11-22T10:00:00+00:00');
  });

  test('series: the catalogue with coverage', async () => {
    const { series } = await client.series();
    assert.deepEqual(series.map((s) => s.symbol).sort(), [...ALL_SYMBOLS].sort());
    const no1 = series.find((s) => s.symbol === 'NO1');
    assert.deepEqual(no1?.coverage, { first: '2026-08-24', last: '2026-11-23' });
    const csv = await client.series({ symbols: ['NO1'], format: 'csv' });
    assert.match(
      csv,
      /^symbol,name,kind,currency,unit,timezone,resolution,first,last,license,attribution\r?\nNO1,/,
    );
  });

  test('seriesInfo: one series in any letter case, unknown is unknown_series', async () => {
    const info = await client.seriesInfo('no1');
    assert.equal(info.symbol, 'NO1');
    assert.equal(info.kind, 'electricity');
    assert.equal(info.currency, 'EUR');
    assert.equal(info.coverage?.last, '2026-11-23');
    const error = await rejection(client.seriesInfo('NOPE'));
    assert.equal(error.status, 404);
    assert.equal(error.code, 'unknown_series');
  });
});

describe('a real 429 from the server', () => {
  let dir: string;
  let tiny: Harness;
  let tinyServer: Awaited<ReturnType<typeof listenHttps>>;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pricepoint-client-'));
    const path = join(dir, 'tiers.json');
    const tier = { limits: [{ name: 'minute', limit: 1, windowSeconds: 60 }], countPer: 'key' };
    writeFileSync(path, JSON.stringify({ tiers: { tiny: tier } }));
    tiny = await createHarness({ https: true, now: NOW, env: { PRICEPOINT_CONFIG: path } });
    tinyServer = await listenHttps(tiny);
  });
  after(async () => {
    await tinyServer.close();
    await tiny.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function tinyClient(key: string, options: Partial<PricepointClientOptions> = {}) {
    return new PricepointClient({
      baseUrl: tinyServer.base,
      apiKey: key,
      fetch: (url, init) => undiciFetch(url, { ...init, dispatcher: tinyServer.agent }),
      ...options,
    });
  }

  test('a Retry-After beyond maxRetryDelayMs is thrown at once, with retryAfterSeconds', async () => {
    tiny.clock.set(NOW);
    const { key } = await tiny.createKey({ tier: 'tiny' });
    const events: RetryEvent[] = [];
    const c = tinyClient(key, { maxRetryDelayMs: 5_000, onRetry: (e) => events.push(e) });
    await c.today({ symbols: ['NO1'] });
    const error = await rejection(c.today({ symbols: ['NO1'] }));
    assert.equal(error.status, 429);
    assert.equal(error.code, 'rate_limited');
    assert.equal(error.retryAfterSeconds, 57, 'the minute window ends at 10:16:00Z');
    assert.deepEqual(error.problem['violated-policies'], ['minute']);
    assert.equal(events.length, 0, 'no wait was even started');
    assert.equal(c.lastRateLimit?.remaining, 0);
  });

  test('a short Retry-After is waited for, then the request succeeds', async () => {
    // One second before the window ends the server says Retry-After: 1; the hook moves the fake
    // clock into the next window while the client sleeps that second for real.
    tiny.clock.set('2026-11-22T10:20:59.500Z');
    const { key } = await tiny.createKey({ tier: 'tiny' });
    const events: RetryEvent[] = [];
    const c = tinyClient(key, {
      onRetry: (e) => {
        events.push(e);
        tiny.clock.advance(1_000);
      },
    });
    await c.today({ symbols: ['NO1'] });
    const answer = await c.today({ symbols: ['NO1'] });
    assert.equal(answer.series[0]?.symbol, 'NO1');
    assert.deepEqual(
      events.map((e) => [e.retry, e.status, e.delayMs]),
      [[1, 429, 1000]],
    );
    assert.ok(events[0]?.error instanceof PricepointError, 'the event carries the 429 error');
  });
});
