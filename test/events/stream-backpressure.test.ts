/**
 * What an event stream may hold of the server (docs/events.md, "What a stream may hold"): streams
 * resumed from the start of a backlog of 20,000 events, over real TLS connections. Clients that
 * never read hold at most the documented bound each, counted with their address' unsent bytes, are
 * sent at most one connection's catch-up share, and are closed after the idle deadline; a client
 * that reads slowly gets every event, in order, resuming where each connection's share ended.
 */
import assert from 'node:assert/strict';
import { connect as netConnect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type TLSSocket } from 'node:tls';
import { request } from 'undici';
import { CATCH_UP_BYTES, CATCH_UP_RETRY_MS, STREAM_UNSENT_BOUND } from '../../src/events/event-stream.js';
import { createHarness, type Harness, listenHttps, testTls } from '../helpers/harness.js';

const BACKLOG = 20_000;
/** The idle deadline, short for the test (PRICEPOINT_IDLE_SECONDS, 30 by default). */
const IDLE_SECONDS = 2;
/** Generous, for a shared machine: the test's own waits, never a measure of speed. */
const WAIT_MS = 120_000;
const FROM_THE_START = { 'last-event-id': 'evt_000000000000' };

/** The /metrics text's samples, by their name and labels as written. */
async function metrics(h: Harness): Promise<Map<string, number>> {
  const { body } = await h.app.inject({ method: 'GET', url: '/metrics' });
  const samples = new Map<string, number>();
  for (const line of body.split('\n')) {
    const match = /^(\S+) (\S+)$/.exec(line);
    if (match?.[1] !== undefined && !line.startsWith('#')) samples.set(match[1], Number(match[2]));
  }
  return samples;
}

/** A daily series with `BACKLOG` complete days: one `day.published` event each, in one import. */
async function backlog(h: Harness): Promise<void> {
  await h.stores.prices.upsertSeries({
    symbol: 'DAILY',
    name: 'Daily',
    kind: 'electricity',
    currency: 'EUR',
    unit: 'MWh',
    timezone: 'UTC',
    resolution: 'P1D',
  });
  const first = Date.parse('1970-01-01T00:00:00Z');
  const days = Array.from({ length: BACKLOG }, (_, n) => ({
    start: first + n * 86_400_000,
    price: `${n}.5`,
  }));
  await h.stores.prices.upsertPrices('DAILY', days);
}

describe('event streams resumed from the start of a 20,000-event backlog', () => {
  let h: Harness;
  let client: Awaited<ReturnType<typeof listenHttps>>;
  const sockets: TLSSocket[] = [];

  before(async () => {
    h = await createHarness({
      https: true,
      env: { PRICEPOINT_IDLE_SECONDS: String(IDLE_SECONDS) },
      eventStreams: { heartbeatMs: 100 },
    });
    client = await listenHttps(h);
    await backlog(h);
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await client.close();
    await h.close();
  });

  /** Asks for the stream from `localAddress` on a TLS connection, then never reads from it. */
  async function neverReading(localAddress: string): Promise<void> {
    const { cert } = await testTls();
    // TCP from `localAddress` first: tls.connect takes no local address of its own.
    const tcp = netConnect({ host: '127.0.0.1', port: client.port, localAddress });
    const socket = connect({ socket: tcp, servername: 'localhost', ca: cert });
    sockets.push(socket);
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('secureConnect', resolve));
    socket.pause();
    socket.write(
      `GET /api/v1/events HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${h.demoKey}\r\n` +
        `last-event-id: ${FROM_THE_START['last-event-id']}\r\n\r\n`,
    );
  }

  test('50 clients that never read each hold at most the bound and their catch-up share, counted for their address, and are closed', async () => {
    // The demo key from five client addresses, ten streams each (127.0.0.0/8 is all loopback).
    await Promise.all(Array.from({ length: 50 }, (_, n) => neverReading(`127.0.0.${2 + (n % 5)}`)));

    let most = 0;
    const connectionsLeft = () =>
      new Promise<number>((resolve, reject) =>
        h.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
      );
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const m = await metrics(h);
      const streams = m.get('pricepoint_event_stream_unsent_bytes{of="all"}') ?? -1;
      const connections = m.get('pricepoint_unsent_answer_bytes{of="all"}') ?? -1;
      most = Math.max(most, m.get('pricepoint_event_stream_unsent_bytes{of="largest_stream"}') ?? -1);
      // What the streams hold is part of what their connections hold, against the address bound.
      assert.ok(connections >= streams, `connections hold ${connections}, streams ${streams}`);
      const left = await connectionsLeft();
      if (left === 0) break;
      assert.ok(Date.now() < deadline, `still ${left} connections open`);
      await sleep(20);
    }
    assert.ok(most <= STREAM_UNSENT_BOUND, `one stream held ${most} bytes`);
    // The server closed the connections; the clients never did. Now they read what reached them:
    // each was sent its catch-up share of the backlog and no more, and told to resume.
    assert.ok(sockets.every((socket) => !socket.destroyed));
    const received = await Promise.all(
      sockets.map(
        (socket) =>
          new Promise<string>((resolve) => {
            let text = '';
            socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
            socket.once('close', () => resolve(text));
            socket.resume();
          }),
      ),
    );
    for (const text of received) {
      // Headers, chunk sizes and the greeting besides the events: a few KiB.
      assert.ok(text.length >= CATCH_UP_BYTES, `a client was sent only ${text.length} bytes`);
      assert.ok(text.length <= CATCH_UP_BYTES + 16 * 1024, `a client was sent ${text.length} bytes`);
      assert.match(text, new RegExp(`retry: ${CATCH_UP_RETRY_MS}\\n: more to catch up`));
    }
  });

  test('a client that reads slowly gets every event in order, also those committed while it reads', async () => {
    const events = h.stores.events!;
    let text = '';
    let connections = 0;
    let ended = 0;
    /** A stream after the last event read (from the start at first), as EventSource reconnects. */
    const open = async () => {
      const last = [...text.matchAll(/^id: (\S+)$/gm)].pop()?.[1];
      const response = await request(`${client.base}/api/v1/events`, {
        headers: { 'x-api-key': h.demoKey, 'last-event-id': last ?? FROM_THE_START['last-event-id'] },
        dispatcher: client.agent,
      });
      assert.equal(response.statusCode, 200);
      connections++;
      return response;
    };
    let response = await open();
    let body = response.body[Symbol.asyncIterator]();
    /**
     * Reads, a chunk at a time with a pause after each, until the event `seq` has come; a stream that
     * ends after its catch-up share says so with a short `retry:`, and the next resumes after it.
     */
    const readThrough = async (seq: number) => {
      const line = `id: evt_${String(seq).padStart(12, '0')}\n`;
      for (;;) {
        const { value, done } = await body.next();
        if (done) {
          assert.match(text.slice(-200), new RegExp(`retry: ${CATCH_UP_RETRY_MS}\\n: more to catch up`));
          ended++;
          response = await open();
          body = response.body[Symbol.asyncIterator]();
          continue;
        }
        text += Buffer.from(value).toString('utf8');
        if (text.slice(-(value.length + line.length)).includes(line)) return;
        // The server's queue fills meanwhile, and it waits for this reader.
        await sleep(2);
      }
    };
    const days = (from: string, count: number) => {
      const first = Date.parse(from);
      return Array.from({ length: count }, (_, n) => ({ start: first + n * 86_400_000, price: '1' }));
    };

    // Forty more days while the stream catches up: they come after the backlog, in order.
    const reading = readThrough(BACKLOG);
    await sleep(100);
    await h.stores.prices.upsertPrices('DAILY', days('2030-01-01', 40));
    await reading;
    await readThrough(await events.latestSeq());
    // Then, caught up, far more at once than one stream queues: the rest is read from the log.
    await h.stores.prices.upsertPrices('DAILY', days('2031-01-01', 2_000));
    await readThrough(await events.latestSeq());
    response.body.destroy();

    const expected = (await events.after(0, 100_000)).map((event) => event.id);
    assert.ok(expected.length > BACKLOG + 2_040);
    const received = [...text.matchAll(/^id: (\S+)$/gm)].map((match) => match[1]);
    assert.equal(received.length, expected.length);
    assert.deepEqual(received, expected);
    // About 5 MB of events, a connection's share at a time (docs/events.md, "Catching up").
    assert.ok(
      ended >= Math.floor(text.length / CATCH_UP_BYTES) - 1,
      `${ended} streams ended for ${text.length} bytes`,
    );
    assert.equal(connections, ended + 1);
  });
});
