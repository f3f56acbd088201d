/**
 * `client.events()` of `@pricepoint/client` against a real server over HTTPS (the test harness),
 * reached through a TCP proxy the test can cut: price uploads publish and revise days, and the
 * iterator yields each of their events once, in order, across a dropped connection and a silent one;
 * an answer that retrying cannot change throws; leaving the loop or aborting frees the server's
 * stream at once. Needs the client built (`npm run build`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type EventsOptions,
  PricepointClient,
  type PricepointClientOptions,
  PricepointError,
  type PricepointEvent,
  type ReconnectEvent,
  SseParser,
} from '@pricepoint/client';
import { fetch as undiciFetch } from 'undici';
import { DEFAULT_TIERS, mergeTiers } from '../../src/domain/limits/tiers.js';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const NOW = '2026-11-22T10:15:03.120Z';

/** Every quarter hour of a December day in Oslo or Berlin (UTC+1 all month), all priced `price`. */
function december(day: number, price: number) {
  const date = `2026-12-${String(day).padStart(2, '0')}`;
  return Array.from({ length: 96 }, (_, n) => {
    const time = `${String(Math.floor(n / 4)).padStart(2, '0')}:${String((n % 4) * 15).padStart(2, '0')}`;
    return { start: `${date}T${time}:00+01:00`, price };
  });
}

/** Waits until `check` holds, woken by `wake()`; fails after `timeoutMs` saying what it waited for. */
function waiter() {
  const wakers = new Set<() => void>();
  return {
    wake: () => {
      for (const wake of wakers) wake();
    },
    async until(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!check()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise<void>((resolve) => {
          const wake = () => {
            wakers.delete(wake);
            clearTimeout(timer);
            resolve();
          };
          // A short poll as well, for conditions nothing wakes.
          const timer = setTimeout(wake, 100);
          wakers.add(wake);
        });
      }
    },
  };
}

/** Runs `for await` over the client's events in the background, recording what it sees. */
function consume(client: PricepointClient, options: EventsOptions) {
  const signals = waiter();
  const got: PricepointEvent[] = [];
  const opens: (string | undefined)[] = [];
  const reconnects: ReconnectEvent[] = [];
  const state: { error?: unknown; done: boolean } = { done: false };
  const finished = (async () => {
    try {
      for await (const event of client.events({
        ...options,
        onOpen: ({ lastEventId }) => {
          opens.push(lastEventId);
          signals.wake();
        },
        onReconnect: (event) => {
          reconnects.push(event);
          signals.wake();
        },
      })) {
        got.push(event);
        signals.wake();
      }
    } catch (error) {
      state.error = error;
    } finally {
      state.done = true;
      signals.wake();
    }
  })();
  return {
    got,
    opens,
    reconnects,
    state,
    finished,
    until: (check: () => boolean, what: string) =>
      signals.until(() => {
        if (state.done && !check()) throw new Error(`the loop ended (${String(state.error)}) before ${what}`);
        return check();
      }, what),
  };
}

const summary = (events: readonly PricepointEvent[]) =>
  events.map((e) => `${e.type} ${e.data.symbol} ${e.data.date}`);

describe('client.events()', () => {
  let h: Harness;
  let server: Awaited<ReturnType<typeof listenHttps>>;
  let proxy: TcpProxy;
  let readKey: string;
  let freeKey: string;
  let writer: PricepointClient;

  const clientFor = (apiKey: string, port: number, options: Partial<PricepointClientOptions> = {}) =>
    new PricepointClient({
      baseUrl: `https://localhost:${port}`,
      apiKey,
      fetch: (url, init) => undiciFetch(url, { ...init, dispatcher: server.agent }),
      // Short backoff steps: the waits after the server's `retry:` hint stay small.
      retryBaseDelayMs: 100,
      maxRetryDelayMs: 1_000,
      ...options,
    });

  before(async () => {
    // A free key holds one open stream: the test of leaving the loop needs the server's count.
    h = await createHarness({
      https: true,
      now: NOW,
      eventStreams: { heartbeatMs: 200 },
      config: { tiers: mergeTiers(DEFAULT_TIERS, { free: { streams: 1 } }) },
    });
    server = await listenHttps(h);
    proxy = await startTcpProxy(server.port);
    readKey = (await h.createKey({ tier: 'pro', scopes: ['read'] })).key;
    freeKey = (await h.createKey({ tier: 'free', scopes: ['read'] })).key;
    const writeKey = (await h.createKey({ tier: 'pro', scopes: ['read', 'write'] })).key;
    writer = clientFor(writeKey, server.port);
  });
  after(async () => {
    await proxy.close();
    await server.close();
    await h.close();
  });

  test('yields each event once and in order, across a connection dropped mid-stream', async () => {
    const controller = new AbortController();
    const reader = consume(clientFor(readKey, proxy.port), { symbols: ['NO1'], signal: controller.signal });
    await reader.until(() => reader.opens.length === 1, 'the stream to open');
    assert.deepEqual(reader.opens, [undefined], 'the first stream starts from now');

    const first = await writer.uploadPrices('NO1', december(1, 40));
    assert.equal(first.written, 96);
    await reader.until(() => reader.got.length === 1, 'the first event');
    const event = reader.got[0]!;
    assert.match(event.id, /^evt_\d+$/);
    assert.equal(event.type, 'day.published');
    assert.ok(!Number.isNaN(Date.parse(event.time)), event.time);
    assert.deepEqual(
      { ...event.data, etag: undefined },
      { symbol: 'NO1', date: '2026-12-01', timezone: 'Europe/Oslo', intervals: 96, etag: undefined },
    );
    assert.match(event.data.etag, /^"[\w-]+"$/);

    // Another series is not asked for; the next NO1 day is.
    await writer.uploadPrices('DE-LU', december(2, 70));
    await writer.uploadPrices('NO1', december(2, 41));
    await reader.until(() => reader.got.length === 2, 'the second event');

    // A day published just before the connection drops (its event may be on the wire or not), and a
    // revision while the server cannot be reached at all.
    await writer.uploadPrices('NO1', december(3, 42));
    await proxy.cut();
    await writer.uploadPrices('NO1', december(1, 39.5));
    await reader.until(
      () => reader.reconnects.some((r) => r.failures >= 1),
      'an attempt to reconnect that failed while the proxy was down',
    );
    await proxy.restore();
    await reader.until(() => reader.got.length === 4, 'the events missed while the connection was down');
    await writer.uploadPrices('NO1', december(4, 43));
    await reader.until(() => reader.got.length === 5, 'the event after the reconnection');

    assert.deepEqual(summary(reader.got), [
      'day.published NO1 2026-12-01',
      'day.published NO1 2026-12-02',
      'day.published NO1 2026-12-03',
      'day.revised NO1 2026-12-01',
      'day.published NO1 2026-12-04',
    ]);
    const ids = reader.got.map((e) => e.id);
    assert.equal(new Set(ids).size, ids.length, 'no event twice');
    assert.notEqual(reader.got[3]?.data.etag, reader.got[0]?.data.etag, 'a revision has a new etag');
    // Reconnected with the id of the last event received before the drop.
    assert.ok(reader.opens.length >= 2, `opened ${reader.opens.length} times`);
    const resumedFrom = reader.opens.at(-1);
    assert.ok(resumedFrom === ids[1] || resumedFrom === ids[2], `resumed from ${resumedFrom}`);
    // The waits honour the server's `retry: 5000`, and are bounded.
    for (const r of reader.reconnects) assert.ok(r.delayMs >= 5_000 && r.delayMs <= 6_000, `${r.delayMs}`);

    controller.abort();
    await reader.finished;
    assert.equal(reader.state.error, undefined, 'an abort ends the loop without an error');
  });

  test('a connection that goes silent is dropped after the idle timeout and resumed', async () => {
    const controller = new AbortController();
    const reader = consume(clientFor(readKey, proxy.port), {
      symbols: ['NO1'],
      signal: controller.signal,
      idleTimeoutMs: 1_500,
    });
    await reader.until(() => reader.opens.length === 1, 'the stream to open');
    await writer.uploadPrices('NO1', december(10, 50));
    await reader.until(() => reader.got.length === 1, 'the first event');
    // The open connection never moves a byte again (a NAT that forgot it); new ones work.
    proxy.strand();
    await writer.uploadPrices('NO1', december(11, 51));
    await reader.until(() => reader.got.length === 2, 'the event sent while the connection was silent');
    assert.deepEqual(summary(reader.got), ['day.published NO1 2026-12-10', 'day.published NO1 2026-12-11']);
    assert.equal(reader.opens.at(-1), reader.got[0]?.id, 'resumed after the last event received');
    assert.equal(reader.reconnects[0]?.failures, 0);
    assert.match(String((reader.reconnects[0]?.error as Error | undefined)?.message), /no byte/);
    controller.abort();
    await reader.finished;
    assert.equal(reader.state.error, undefined);
  });

  test('a server that shuts down ends the stream with a retry hint, and the client waits it', async () => {
    // A server of its own, closed as SIGTERM closes one: each stream gets `retry: 5000`, then ends.
    const own = await createHarness({ https: true, now: NOW });
    const ownServer = await listenHttps(own);
    const key = (await own.createKey({ tier: 'pro', scopes: ['read'] })).key;
    const controller = new AbortController();
    const reader = consume(clientFor(key, ownServer.port), { signal: controller.signal });
    try {
      await reader.until(() => reader.opens.length === 1, 'the stream to open');
      await own.app.close();
      await reader.until(() => reader.reconnects.length >= 1, 'the stream to end');
      const [ended] = reader.reconnects;
      // The stream was open: this is a reconnection, not a failed attempt (the server may end the
      // answer or cut the connection right after the hint; either way the hint counts).
      assert.equal(ended?.failures, 0);
      // The server's hint (5 s), not the client's own default (3 s), plus at most one backoff step.
      assert.ok(ended && ended.delayMs >= 5_000 && ended.delayMs < 5_100, `waits ${ended?.delayMs} ms`);
      controller.abort();
      await reader.finished;
      assert.equal(reader.state.error, undefined);
      assert.deepEqual(reader.got, []);
    } finally {
      controller.abort();
      await ownServer.close();
      await own.close();
    }
  });

  test('an answer that retrying cannot change is thrown as a PricepointError, without retries', async () => {
    const cases = [
      { key: 'pp_live_NotAKeyAtAll0000000000000000', options: {}, status: 401, code: 'invalid_api_key' },
      { key: readKey, options: { symbols: ['NOPE'] }, status: 404, code: 'unknown_series' },
    ] as const;
    for (const { key, options, status, code } of cases) {
      const reader = consume(clientFor(key, server.port), options);
      await reader.finished;
      const error = reader.state.error;
      assert.ok(error instanceof PricepointError, `expected a PricepointError, got ${String(error)}`);
      assert.equal(error.status, status);
      assert.equal(error.code, code);
      assert.deepEqual(reader.reconnects, []);
      assert.deepEqual(reader.opens, []);
    }
  });

  test('leaving the loop or aborting closes the stream: the key’s only stream is free again at once', async () => {
    const client = clientFor(freeKey, server.port, { maxRetries: 0 });
    /** Opens the key's one stream; a 429 means the server still counts the last one as open. */
    const openOne = async (options: EventsOptions) => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const reader = consume(client, { ...options, maxRetries: 0 });
        await reader.until(() => reader.opens.length === 1 || reader.state.done, 'the stream to open');
        if (reader.opens.length === 1) return reader;
        const error = reader.state.error;
        if (!(error instanceof PricepointError && error.status === 429) || Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };

    // `break` after the first event.
    let opened = false;
    const seen: string[] = [];
    const loop = (async () => {
      const options = { symbols: ['NO1'], maxRetries: 0, onOpen: () => (opened = true) };
      for await (const event of client.events(options)) {
        seen.push(`${event.type} ${event.data.date}`);
        break;
      }
    })();
    await waiter().until(() => opened, 'the stream to open');
    await writer.uploadPrices('NO1', december(20, 60));
    await loop;
    assert.deepEqual(seen, ['day.published 2026-12-20']);

    // The key's one stream is free again: it opens, and an abort while it waits ends it cleanly.
    const controller = new AbortController();
    const second = await openOne({ signal: controller.signal });
    controller.abort();
    await second.finished;
    assert.equal(second.state.error, undefined);

    // Free again after the abort; and while it is open, the key has no second stream.
    const third = new AbortController();
    const again = await openOne({ signal: third.signal });
    const refused = consume(client, { maxRetries: 0 });
    await refused.finished;
    const error = refused.state.error;
    assert.ok(error instanceof PricepointError && error.status === 429, `refused: ${String(error)}`);
    third.abort();
    await again.finished;
    assert.equal(again.state.error, undefined);
  });
});

describe('SseParser (the stream format as the HTML standard defines it)', () => {
  const stream =
    '\uFEFF: a comment\r\nretry: 2500\r\nid: evt_1\r\nevent: day.published\r\ndata: {"a":\r\ndata:  1}\r\n\r\n' +
    ': heartbeat\n\nid: evt_2\revent: day.revised\rdata: x\r\r' +
    'retry: soon\nid: bad\0id\ndata\ndata: y\n\nevent: nothing\n\nid\ndata: z\n\n';
  const expected = [
    { type: 'day.published', data: '{"a":\n 1}', lastEventId: 'evt_1' },
    { type: 'day.revised', data: 'x', lastEventId: 'evt_2' },
    { type: 'message', data: '\ny', lastEventId: 'evt_2' },
    { type: 'message', data: 'z', lastEventId: '' },
  ];

  test('CRLF, CR and LF line ends, comments, multi-line data, retry and id rules', () => {
    const parser = new SseParser();
    // What TextDecoder gives: it drops the byte order mark.
    const text = new TextDecoder().decode(new TextEncoder().encode(stream));
    assert.deepEqual(parser.feed(text), expected);
    assert.equal(parser.retryMs, 2500, 'a retry that is not digits is ignored');
  });

  test('the same events whatever the chunks, even a CRLF split in two', () => {
    const text = stream.slice(1);
    for (let cut = 0; cut <= text.length; cut++) {
      const parser = new SseParser();
      const events = [...parser.feed(text.slice(0, cut)), ...parser.feed(text.slice(cut))];
      assert.deepEqual(events, expected, `split at ${cut}`);
    }
    const parser = new SseParser();
    assert.deepEqual(
      [...text].flatMap((c) => parser.feed(c)),
      expected,
      'one character at a time',
    );
  });
});
