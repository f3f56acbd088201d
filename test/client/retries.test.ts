/**
 * The client's retry policy and error shapes against a scripted local HTTP server: 429 waits as long
 * as Retry-After says (seconds or an HTTP date), 503 and network failures back off with full jitter,
 * retries and waits are capped, an AbortSignal ends a wait, and bodies that are no problem still
 * give a PricepointError. Assertions are on attempts and requested waits, never on elapsed time.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import {
  PricepointClient,
  type PricepointClientOptions,
  PricepointError,
  type RetryEvent,
} from '@pricepoint/client';

const KEY = 'pp_test_client0retries0test0key0000000';

type Step = (req: IncomingMessage, res: ServerResponse) => void;

/** Each request takes the next step; the last step repeats. */
let script: Step[] = [];
let seen: { url: string; headers: IncomingMessage['headers'] }[] = [];
let server: Server;
let base: string;

before(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    const step = script[Math.min(seen.length, script.length) - 1];
    assert.ok(step, 'a scripted step');
    step(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  script = [];
  seen = [];
});

const problem =
  (status: number, code: string, headers: Record<string, string> = {}): Step =>
  (_req, res) => {
    res.writeHead(status, {
      'content-type': 'application/problem+json',
      'x-request-id': 'req-1',
      ...headers,
    });
    res.end(JSON.stringify({ type: 'about:blank', title: code, status, code, requestId: 'req-1' }));
  };
const usage: Step = (_req, res) => {
  res.writeHead(200, {
    'content-type': 'application/json',
    'x-ratelimit-limit': '30',
    'x-ratelimit-remaining': '29',
    'x-ratelimit-reset': '1795342560',
    'ratelimit-policy': '"minute";q=30;w=60',
  });
  res.end(JSON.stringify({ keyId: 'k1', tier: 'demo', limits: [], kinds: null, historyDays: 31 }));
};
const raw =
  (status: number, type: string, body: string): Step =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': type });
    res.end(body);
  };
/** Drops the connection without an answer: a network error for the client. */
const hangUp: Step = (req) => {
  req.socket.destroy();
};

function client(options: Partial<PricepointClientOptions> = {}, events: RetryEvent[] = []) {
  return new PricepointClient({ baseUrl: base, apiKey: KEY, onRetry: (e) => events.push(e), ...options });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected the call to fail');
}

describe('429: waits as long as Retry-After says', () => {
  test('Retry-After: 1 is one wait of 1000 ms, then the answer', async () => {
    script = [problem(429, 'rate_limited', { 'retry-after': '1' }), usage];
    const events: RetryEvent[] = [];
    const answer = await client({}, events).usage();
    assert.equal(answer.tier, 'demo');
    assert.equal(seen.length, 2);
    assert.deepEqual(
      events.map((e) => [e.retry, e.status, e.delayMs]),
      [[1, 429, 1000]],
    );
  });

  test('Retry-After as an HTTP date is counted from now', async () => {
    const at = new Date(Date.now() + 2_000).toUTCString();
    script = [problem(429, 'rate_limited', { 'retry-after': at }), usage];
    const events: RetryEvent[] = [];
    await client({}, events).usage();
    assert.equal(seen.length, 2);
    assert.equal(events.length, 1);
    const delay = events[0]?.delayMs ?? -1;
    // The date has whole seconds, so "2 s from now" is 1 or 2 s away.
    assert.ok(delay === 1000 || delay === 2000, `waited ${delay} ms`);
  });

  test('a Retry-After beyond maxRetryDelayMs is thrown at once, with retryAfterSeconds', async () => {
    script = [problem(429, 'rate_limited', { 'retry-after': '120' }), usage];
    const events: RetryEvent[] = [];
    const error = await rejection(client({ maxRetryDelayMs: 5_000 }, events).usage());
    assert.ok(error instanceof PricepointError, 'a PricepointError');
    assert.equal(error.status, 429);
    assert.equal(error.code, 'rate_limited');
    assert.equal(error.retryAfterSeconds, 120);
    assert.equal(error.requestId, 'req-1');
    assert.equal(seen.length, 1);
    assert.equal(events.length, 0);
  });

  test('an AbortSignal ends the wait at once', async () => {
    script = [problem(429, 'rate_limited', { 'retry-after': '30' }), usage];
    const controller = new AbortController();
    const events: RetryEvent[] = [];
    const c = client({
      onRetry: (e) => {
        events.push(e);
        setTimeout(() => controller.abort(), 20);
      },
    });
    const error = await rejection(c.usage({ signal: controller.signal }));
    assert.ok(error instanceof Error && error.name === 'AbortError', `an AbortError, got ${String(error)}`);
    assert.deepEqual(
      events.map((e) => e.delayMs),
      [30_000],
    );
    assert.equal(seen.length, 1, 'no second attempt');
  });

  test('an already aborted signal sends nothing', async () => {
    script = [usage];
    const error = await rejection(client().usage({ signal: AbortSignal.abort() }));
    assert.ok(error instanceof Error && error.name === 'AbortError', `an AbortError, got ${String(error)}`);
    assert.equal(seen.length, 0);
  });
});

describe('503 and network errors: exponential backoff with full jitter', () => {
  test('503 twice, then 200: three attempts, waits within the doubling ceilings', async () => {
    script = [problem(503, 'service_unavailable'), problem(503, 'service_unavailable'), usage];
    const events: RetryEvent[] = [];
    const answer = await client({ retryBaseDelayMs: 50 }, events).usage();
    assert.equal(answer.tier, 'demo');
    assert.equal(seen.length, 3);
    assert.deepEqual(
      events.map((e) => [e.retry, e.status]),
      [
        [1, 503],
        [2, 503],
      ],
    );
    assert.ok(events[0]!.delayMs >= 0 && events[0]!.delayMs < 50, `first wait ${events[0]!.delayMs}`);
    assert.ok(events[1]!.delayMs >= 0 && events[1]!.delayMs < 100, `second wait ${events[1]!.delayMs}`);
  });

  test('the backoff ceiling is capped by maxRetryDelayMs', async () => {
    script = [problem(503, 'service_unavailable'), usage];
    const events: RetryEvent[] = [];
    await client({ retryBaseDelayMs: 10_000, maxRetryDelayMs: 30 }, events).usage();
    assert.equal(events.length, 1);
    assert.ok(events[0]!.delayMs < 30, `wait ${events[0]!.delayMs}`);
  });

  test('a 503 that never ends: maxRetries retries, then the error', async () => {
    script = [problem(503, 'service_unavailable')];
    const events: RetryEvent[] = [];
    const error = await rejection(client({ maxRetries: 2, retryBaseDelayMs: 10 }, events).usage());
    assert.ok(error instanceof PricepointError, 'a PricepointError');
    assert.equal(error.status, 503);
    assert.equal(error.code, 'service_unavailable');
    assert.equal(seen.length, 3);
    assert.equal(events.length, 2);
  });

  test('a dropped connection is retried (every call is an idempotent GET)', async () => {
    script = [hangUp, usage];
    const events: RetryEvent[] = [];
    const answer = await client({ retryBaseDelayMs: 10 }, events).usage();
    assert.equal(answer.tier, 'demo');
    assert.equal(seen.length, 2);
    assert.equal(events.length, 1);
    assert.equal(events[0]?.status, undefined);
    assert.ok(events[0]?.error instanceof Error, 'the network error');
  });

  test('with maxRetries 0 a network error is thrown as fetch threw it', async () => {
    script = [hangUp];
    const error = await rejection(client({ maxRetries: 0 }).usage());
    assert.ok(error instanceof TypeError, `fetch's TypeError, got ${String(error)}`);
    assert.equal(seen.length, 1);
  });

  test('other errors are not retried', async () => {
    script = [problem(400, 'invalid_parameter')];
    const error = await rejection(client().usage());
    assert.ok(error instanceof PricepointError, 'a PricepointError');
    assert.equal(error.code, 'invalid_parameter');
    assert.equal(seen.length, 1);
  });
});

describe('answers that are no problem+json still give a PricepointError', () => {
  test('an HTML 502 from a proxy: code service_unavailable, the page start as detail', async () => {
    script = [raw(502, 'text/html', '<html><body>Bad gateway</body></html>')];
    const error = await rejection(client({ maxRetries: 0 }).usage());
    assert.ok(error instanceof PricepointError, 'a PricepointError');
    assert.equal(error.status, 502);
    assert.equal(error.code, 'service_unavailable');
    assert.equal(error.problem.detail, '<html><body>Bad gateway</body></html>');
  });

  test('a plain-text 500: code internal', async () => {
    script = [raw(500, 'text/plain', 'oops')];
    const error = await rejection(client().usage());
    assert.ok(error instanceof PricepointError, 'a PricepointError');
    assert.equal(error.code, 'internal');
    assert.equal(error.problem.status, 500);
    assert.equal(seen.length, 1, '500 is not retried');
  });

  test('a 200 that is not JSON: code internal, not a SyntaxError', async () => {
    script = [raw(200, 'text/html', '<html>login page</html>')];
    const error = await rejection(client().usage());
    assert.ok(error instanceof PricepointError, 'a PricepointError');
    assert.equal(error.code, 'internal');
  });
});

describe('what the client sends', () => {
  test('the key in x-api-key only, the query built from the options, rate-limit headers kept', async () => {
    script = [usage];
    const c = new PricepointClient({ baseUrl: `${base}/prefix/`, apiKey: KEY, userAgent: 'my-app/1.0' });
    await c.usage();
    assert.equal(seen[0]?.url, '/prefix/api/v1/usage');
    assert.equal(seen[0]?.headers['x-api-key'], KEY);
    assert.equal(seen[0]?.headers['user-agent'], 'my-app/1.0');
    assert.deepEqual(c.lastRateLimit, {
      limit: 30,
      remaining: 29,
      reset: 1795342560,
      policy: '"minute";q=30;w=60',
    });

    script = [raw(200, 'text/csv', 'symbol,date,start,end,price,currency,unit\r\n')];
    seen = [];
    const csv = await c.range('2026-11-01', 'today', {
      symbols: ['NO1', 'DE-LU'],
      tz: 'Europe/Oslo',
      resolution: 'PT1H',
      format: 'csv',
    });
    assert.equal(csv, 'symbol,date,start,end,price,currency,unit\r\n');
    const url = new URL(seen[0]?.url ?? '', base);
    assert.equal(url.pathname, '/prefix/api/v1/prices');
    assert.deepEqual(Object.fromEntries(url.searchParams), {
      from: '2026-11-01',
      to: 'today',
      symbols: 'NO1,DE-LU',
      tz: 'Europe/Oslo',
      resolution: 'PT1H',
      format: 'csv',
    });
    assert.equal(seen[0]?.url.includes(KEY), false);
  });

  test('a path segment is encoded', async () => {
    script = [raw(200, 'application/json', '{}')];
    await client().seriesInfo('A/B?x');
    assert.equal(seen[0]?.url, '/api/v1/series/A%2FB%3Fx');
  });
});
