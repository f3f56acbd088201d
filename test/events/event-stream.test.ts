/**
 * `GET /api/v1/events` over a real HTTPS listener (docs/events.md): what a client reading the stream
 * sees when prices are imported, how it resumes, the bound on open streams, and shutdown.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { dayBounds } from '../../src/domain/time/days.js';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';
import { postgresSchemaUrl } from '../helpers/postgres.js';
import { describeOrSkip } from '../helpers/skip.js';

const Q = 15 * 60_000;

/** Every quarter hour of a local day, all priced `price`. */
function day(timezone: string, date: string, price: string) {
  const { start, end } = dayBounds(date, timezone);
  const points: { start: number; price: string }[] = [];
  for (let t = start; t < end; t += Q) points.push({ start: t, price });
  return points;
}

/** An open stream: what it has received so far, and a way to wait for more. */
interface Stream {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  text(): string;
  /** Resolves once the received text matches `pattern` (the test's own timeout bounds the wait). */
  until(pattern: RegExp): Promise<string>;
  /** Resolves when the server has ended the stream. */
  readonly ended: Promise<void>;
  /** Why the stream broke off, once it has: undefined when it ended cleanly (its last chunk came). */
  failure(): Error | undefined;
  close(): void;
}

type Client = Awaited<ReturnType<typeof listenHttps>>;

async function openStream(client: Client, path: string, headers: Record<string, string>): Promise<Stream> {
  const controller = new AbortController();
  const response = await request(`${client.base}${path}`, {
    method: 'GET',
    headers,
    dispatcher: client.agent,
    signal: controller.signal,
  });
  let received = '';
  let done = false;
  const waiters: (() => void)[] = [];
  response.body.setEncoding('utf8');
  response.body.on('data', (chunk: string) => {
    received += chunk;
    for (const wake of waiters.splice(0)) wake();
  });
  let failure: Error | undefined;
  const ended = new Promise<void>((resolve) => {
    const end = () => {
      done = true;
      for (const wake of waiters.splice(0)) wake();
      resolve();
    };
    response.body.on('end', end);
    response.body.on('error', (error: Error) => {
      failure = error;
      end();
    });
  });
  return {
    status: response.statusCode,
    headers: response.headers,
    text: () => received,
    async until(pattern) {
      while (!pattern.test(received)) {
        if (done)
          throw new Error(`the stream ended (${response.statusCode}) without ${pattern}: ${received}`);
        await new Promise<void>((wake) => waiters.push(wake));
      }
      return received;
    },
    ended,
    failure: () => failure,
    close: () => controller.abort(),
  };
}

/** The events in a stream's text, parsed from their `id:`, `event:` and `data:` lines. */
function framesOf(text: string) {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('id: '))
    .map((block) => {
      const field = (name: string) =>
        block
          .split('\n')
          .find((line) => line.startsWith(`${name}: `))
          ?.slice(name.length + 2);
      return { id: field('id'), event: field('event'), data: JSON.parse(field('data') ?? 'null') };
    });
}

describe('GET /api/v1/events', () => {
  let h: Harness;
  let client: Client;
  let reader: string;
  const streams: Stream[] = [];
  const open = async (path: string, headers: Record<string, string> = {}, key = reader) => {
    const stream = await openStream(client, path, { 'x-api-key': key, ...headers });
    streams.push(stream);
    return stream;
  };

  before(async () => {
    h = await createHarness({ https: true, eventStreams: { heartbeatMs: 100 } });
    client = await listenHttps(h);
    reader = (await h.createKey({ tier: 'pro', scopes: ['read'] })).key;
  });
  after(async () => {
    for (const stream of streams) stream.close();
    await client.close();
    await h.close();
  });

  test('sends day.published when an import completes a day, with id, event and data lines, and heartbeats', async () => {
    const stream = await open('/api/v1/events');
    assert.equal(stream.status, 200);
    assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
    await stream.until(/^retry: \d+\n/);
    await stream.until(/: heartbeat\n\n/);
    await h.stores.prices.upsertPrices('NO1', day('Europe/Oslo', '2026-12-01', '50.25'));
    await stream.until(/event: day\.published/);
    const [frame, ...more] = framesOf(stream.text());
    assert.deepEqual(more, []);
    assert.ok(frame);
    assert.match(frame.id ?? '', /^evt_\d+$/);
    assert.equal(frame.event, 'day.published');
    assert.equal(frame.data.id, frame.id);
    assert.equal(frame.data.type, 'day.published');
    assert.deepEqual(
      { ...frame.data.data, etag: undefined },
      { symbol: 'NO1', date: '2026-12-01', timezone: 'Europe/Oslo', intervals: 96, etag: undefined },
    );
    assert.match(frame.data.data.etag, /^"[\w-]+"$/);
    // A change of the complete day is a revision, with a new etag.
    await h.stores.prices.upsertPrices(
      'NO1',
      day('Europe/Oslo', '2026-12-01', '50.25')
        .slice(0, 1)
        .map((p) => ({ ...p, price: '1' })),
    );
    await stream.until(/event: day\.revised/);
    const revised = framesOf(stream.text())[1];
    assert.equal(revised?.data.data.date, '2026-12-01');
    assert.notEqual(revised?.data.data.etag, frame.data.data.etag);
    stream.close();
  });

  test('every open stream receives each event once, in commit order', async () => {
    const many = await Promise.all([open('/api/v1/events'), open('/api/v1/events'), open('/api/v1/events')]);
    for (const stream of many) await stream.until(/^retry:/);
    await h.stores.prices.upsertPrices('NO1', day('Europe/Oslo', '2026-12-07', '7'));
    await h.stores.prices.upsertPrices('NO1', day('Europe/Oslo', '2026-12-08', '8'));
    for (const stream of many) await stream.until(/"date":"2026-12-08"/);
    const ids = many.map((stream) => framesOf(stream.text()).map((f) => [f.id, f.data.data.date]));
    assert.equal(ids[0]?.length, 2);
    assert.deepEqual(ids[1], ids[0]);
    assert.deepEqual(ids[2], ids[0]);
    for (const stream of many) stream.close();
  });

  test('symbols= sends only the events of those series; an unknown symbol is 404, no key 401', async () => {
    const stream = await open('/api/v1/events?symbols=de-lu');
    await stream.until(/^retry:/);
    await h.stores.prices.upsertPrices('NO1', day('Europe/Oslo', '2026-12-02', '10'));
    await h.stores.prices.upsertPrices('DE-LU', day('Europe/Berlin', '2026-12-02', '20'));
    await stream.until(/event: day\.published/);
    assert.deepEqual(
      framesOf(stream.text()).map((f) => [f.data.data.symbol, f.data.data.date]),
      [['DE-LU', '2026-12-02']],
    );
    stream.close();
    assert.equal((await client.get('/api/v1/events?symbols=NOPE', { 'x-api-key': reader })).status, 404);
    assert.equal((await client.get('/api/v1/events')).status, 401);
  });

  test('Last-Event-ID replays what was missed; an unknown or too old id starts from now and says so', async () => {
    const first = await open('/api/v1/events');
    await first.until(/^retry:/);
    await h.stores.prices.upsertPrices('NO1', day('Europe/Oslo', '2026-12-03', '30'));
    await h.stores.prices.upsertPrices('NO1', day('Europe/Oslo', '2026-12-04', '31'));
    await first.until(/"date":"2026-12-04"/);
    first.close();
    const [seen, missed] = framesOf(first.text());
    assert.ok(seen?.id && missed?.id);

    const resumed = await open('/api/v1/events', { 'last-event-id': seen.id });
    await resumed.until(/"date":"2026-12-04"/);
    assert.deepEqual(
      framesOf(resumed.text()).map((f) => f.id),
      [missed.id],
    );
    resumed.close();

    const unknown = await open('/api/v1/events', { 'last-event-id': 'evt_999999999999' });
    await unknown.until(/: the Last-Event-ID is unknown here; starting from now\n/);
    unknown.close();

    // Events carry the real commit time; the app's clock is the harness's, set three days past it.
    const was = h.clock.now;
    h.clock.now = Date.now() + 3 * 86_400_000;
    try {
      const old = await open('/api/v1/events', { 'last-event-id': seen.id });
      await old.until(/: the events after Last-Event-ID are older than 24 hours; starting from now\n/);
      await old.until(/: heartbeat/);
      assert.deepEqual(framesOf(old.text()), []);
      old.close();
    } finally {
      h.clock.now = was;
    }
  });

  test("opening a stream counts one request, and a key holds at most its tier's open streams", async () => {
    const free = (await h.createKey({ tier: 'free', scopes: ['read'] })).key;
    const held: Stream[] = [];
    const remaining: number[] = [];
    for (let n = 0; n < 3; n++) {
      const stream = await open('/api/v1/events', {}, free);
      assert.equal(stream.status, 200);
      remaining.push(Number(stream.headers['x-ratelimit-remaining']));
      held.push(stream);
    }
    assert.deepEqual(remaining, [remaining[0], (remaining[0] ?? 0) - 1, (remaining[0] ?? 0) - 2]);
    const refused = await client.get('/api/v1/events', { 'x-api-key': free });
    assert.equal(refused.status, 429);
    assert.ok(refused.headers['retry-after']);
    // Another key is not bound by this one's streams.
    const other = await open('/api/v1/events');
    assert.equal(other.status, 200);
    other.close();
    held[0]?.close();
    // The server notices the closed stream soon; the key may then open another.
    const again = await client.get('/api/v1/events?symbols=NOPE', { 'x-api-key': free });
    assert.equal(again.status, 404, 'a refused stream is an answer like any other');
    for (;;) {
      const next = await openStream(client, '/api/v1/events', { 'x-api-key': free });
      if (next.status === 200) {
        streams.push(next);
        next.close();
        break;
      }
      assert.equal(next.status, 429);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (const stream of held) stream.close();
  });
});

describe('GET /api/v1/events when the server shuts down', () => {
  test('each stream gets a retry hint and ends cleanly, and the server closes', async () => {
    const h = await createHarness({ https: true });
    const client = await listenHttps(h);
    try {
      const stream = await openStream(client, '/api/v1/events', { 'x-api-key': h.demoKey });
      await stream.until(/^retry:/);
      await h.app.close();
      await stream.ended;
      assert.equal(stream.failure(), undefined, 'the stream ended with its last chunk, not cut off');
      assert.match(
        stream.text(),
        /retry: \d+\n: the server is shutting down; reconnect with Last-Event-ID\n\n$/,
      );
    } finally {
      await client.close();
      await h.close();
    }
  });
});

const postgres = await postgresSchemaUrl();

describeOrSkip(
  'GET /api/v1/events on PostgreSQL',
  { skip: 'skip' in postgres ? postgres.skip : false },
  () => {
    test('a stream hears the events an import commits, through the shared event log', async () => {
      const h = await createHarness({ https: true, engine: 'postgres' });
      const client = await listenHttps(h);
      try {
        const stream = await openStream(client, '/api/v1/events?symbols=NO1', { 'x-api-key': h.demoKey });
        await stream.until(/^retry:/);
        await h.stores.prices.upsertPrices('NO1', day('Europe/Oslo', '2026-12-01', '50.25'));
        await stream.until(/event: day\.published/);
        assert.deepEqual(
          framesOf(stream.text()).map((f) => [
            f.event,
            f.data.data.symbol,
            f.data.data.date,
            f.data.data.intervals,
          ]),
          [['day.published', 'NO1', '2026-12-01', 96]],
        );
        stream.close();
      } finally {
        await client.close();
        await h.close();
      }
    });
  },
);
