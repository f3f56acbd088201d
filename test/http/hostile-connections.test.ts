/**
 * Hostile connections (SECURITY.md). Headers trickled byte by byte are cut off by the server's
 * deadlines, oversized headers get 431 and oversized bodies 413, conflicting `Content-Length` and
 * `Transfer-Encoding` are refused, and many idle connections from one address do not starve other
 * clients. Real TLS connections to the app on 127.0.0.1, with deadlines shortened to about a second
 * (the defaults are in src/http/transport/connections.ts) so that nothing here waits long.
 */
import assert from 'node:assert/strict';
import { connect as tcpConnect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type TLSSocket } from 'node:tls';
import { createHarness, type Harness, listenHttps, testTls } from '../helpers/harness.js';

type Listening = Awaited<ReturnType<typeof listenHttps>>;

const DEADLINE_MS = 1_000;
const PER_ADDRESS = 20;

/** A TLS connection from `localAddress` (127.0.0.1 by default); rejects if the server ends it first. */
async function open(port: number, localAddress = '127.0.0.1'): Promise<TLSSocket> {
  const { cert } = await testTls();
  return new Promise((resolve, reject) => {
    const tcp = tcpConnect({ host: '127.0.0.1', port, localAddress });
    const socket = connect({ socket: tcp, servername: 'localhost', ca: cert });
    socket.once('secureConnect', () => resolve(socket));
    socket.once('error', reject);
    socket.once('close', () => reject(new Error('closed before the handshake finished')));
  });
}

/** Everything the server sends until it closes the connection. */
function untilClosed(socket: TLSSocket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', () => {});
    socket.once('close', () => resolve(text));
  });
}

/** One request written as given, on a fresh connection; the answer text once the server closes it or `done` says so. */
async function exchange(port: number, request: string | Buffer): Promise<string> {
  const socket = await open(port);
  const closed = untilClosed(socket);
  socket.on('data', () => {});
  socket.write(request);
  const answer = await Promise.race([closed, sleep(5 * DEADLINE_MS).then(() => undefined)]);
  socket.destroy();
  return answer ?? (await closed);
}

function status(answer: string): number {
  return Number(/^HTTP\/1\.1 (\d{3}) /.exec(answer)?.[1]);
}

/** The JSON body of a raw answer. */
function problemOf(answer: string): { code?: string; status?: number; requestId?: string } {
  const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
  return JSON.parse(body) as { code?: string; status?: number; requestId?: string };
}

describe('hostile connections', () => {
  let h: Harness;
  let server: Listening;
  let admin: string;

  before(async () => {
    h = await createHarness({
      https: true,
      connections: { handshakeMs: DEADLINE_MS, headersMs: DEADLINE_MS, idleMs: 3 * DEADLINE_MS },
    });
    server = await listenHttps(h, 4);
    admin = (await h.createKey({ name: 'operator', tier: 'pro', scopes: ['admin'] })).key;
  });
  after(async () => {
    await server.close();
    await h.close();
  });

  test('headers trickled byte by byte are cut off by the headers deadline', async () => {
    const socket = await open(server.port);
    const closed = untilClosed(socket);
    let open_ = true;
    void closed.then(() => (open_ = false));
    // Ten times the deadline's worth of header bytes, one every 50 ms; the server must end it first.
    const request = `GET /api/v1/prices/today HTTP/1.1\r\nHost: localhost\r\nX-Slow: ${'a'.repeat(200)}`;
    let sent = 0;
    for (const byte of request) {
      if (!open_) break;
      socket.write(byte);
      sent++;
      await sleep(50);
    }
    const answer = await closed;
    assert.ok(
      sent < request.length,
      `the server closed the connection after ${sent} of ${request.length} bytes`,
    );
    if (answer !== '') {
      assert.equal(status(answer), 408, `a trickled request that gets an answer gets 408: ${answer}`);
      assert.equal(problemOf(answer).code, 'invalid_parameter', 'as problem+json');
    }
  });

  test('a connection that completes TLS but never sends a request is closed', async () => {
    const socket = await open(server.port);
    const answer = await untilClosed(socket);
    assert.ok(answer === '' || status(answer) === 408, `closed, at most with a 408: ${answer.slice(0, 80)}`);
  });

  test('a TCP connection that never starts TLS is closed by the handshake deadline', async () => {
    const socket = tcpConnect({ host: '127.0.0.1', port: server.port });
    const closed = await new Promise<boolean>((resolve) => {
      socket.on('error', () => {});
      socket.once('close', () => resolve(true));
      // Far past the deadline: if it is still open then, the server is not enforcing it.
      setTimeout(() => resolve(false), 10 * DEADLINE_MS).unref();
    });
    socket.destroy();
    assert.ok(closed, 'the server closed the silent connection');
  });

  test('oversized headers get 431 as problem+json', async () => {
    const answer = await exchange(
      server.port,
      `GET /api/v1/prices/today HTTP/1.1\r\nHost: localhost\r\nX-Api-Key: ${h.demoKey}\r\nX-Filler: ${'b'.repeat(20_000)}\r\n\r\n`,
    );
    assert.equal(status(answer), 431, `431: ${answer.slice(0, 80)}`);
    assert.match(answer, /\r\ncontent-type: application\/problem\+json/i, 'a problem+json body');
    assert.equal(problemOf(answer).status, 431, 'whose status says 431');
    const id = /\r\nx-request-id: ([0-9a-f-]{36})\r\n/i.exec(answer)?.[1];
    assert.ok(id, 'with a request id header');
    assert.equal(problemOf(answer).requestId, id, 'which the body names too');
  });

  test('an oversized body gets 413 as problem+json, sent or only announced', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024), tier: 'free' });
    const sent = await server.request('POST', '/api/v1/keys', {
      headers: { 'x-api-key': admin, 'content-type': 'application/json' },
      body: big,
    });
    assert.equal(sent.status, 413, `a 2 MiB body gets 413: ${sent.text.slice(0, 120)}`);
    assert.match(String(sent.headers['content-type']), /application\/problem\+json/, 'as problem+json');
    const announced = await exchange(
      server.port,
      `POST /api/v1/keys HTTP/1.1\r\nHost: localhost\r\nX-Api-Key: ${admin}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 104857600\r\nConnection: close\r\n\r\n{"name":',
    );
    assert.equal(status(announced), 413, `100 MiB announced gets 413 at once: ${announced.slice(0, 80)}`);
    const keys = await server.get('/api/v1/keys', { 'x-api-key': admin });
    assert.equal(keys.text.includes('xxxxxxxxxx'), false, 'no key was created from either body');
  });

  const conflicts: [string, string][] = [
    [
      'Content-Length with Transfer-Encoding: chunked',
      'Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ],
    ['two different Content-Length values', 'Content-Length: 4\r\nContent-Length: 5\r\n\r\n{}{}'],
    ['a Transfer-Encoding other than chunked last', 'Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n'],
  ];
  for (const [what, rest] of conflicts) {
    test(`${what} is refused with 400 and the connection closed`, async () => {
      // A second request rides behind the first, as a smuggling attempt would: it must not be answered.
      const smuggled = `GET /api/v1/keys HTTP/1.1\r\nHost: localhost\r\nX-Api-Key: ${admin}\r\n\r\n`;
      const answer = await exchange(
        server.port,
        `POST /api/v1/keys HTTP/1.1\r\nHost: localhost\r\nX-Api-Key: ${admin}\r\n` +
          `Content-Type: application/json\r\n${rest}${smuggled}`,
      );
      assert.equal(status(answer), 400, `400: ${answer.slice(0, 80)}`);
      assert.equal(problemOf(answer).code, 'invalid_parameter', 'as problem+json');
      assert.equal(
        answer.match(/HTTP\/1\.1 /g)?.length,
        1,
        'exactly one answer: the smuggled request is not served',
      );
    });
  }
});

describe('connections per address', () => {
  let h: Harness;
  let server: Listening;

  before(async () => {
    // The default deadlines: the idle connections below must outlive the time it takes to open them.
    h = await createHarness({
      https: true,
      env: { PRICEPOINT_MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS) },
    });
    server = await listenHttps(h, 4);
  });
  after(async () => {
    await server.close();
    await h.close();
  });

  test('many idle connections from one address do not starve another address', async () => {
    const before = await h.app.inject({ method: 'GET', url: '/metrics' });
    const refusedBefore = Number(/^pricepoint_connections_refused_total (\d+)/m.exec(before.body)?.[1] ?? 0);
    // Three times the bound from 127.0.0.1: the first PER_ADDRESS are kept open and idle.
    const held: TLSSocket[] = [];
    let refused = 0;
    for (let i = 0; i < 3 * PER_ADDRESS; i++) {
      try {
        held.push(await open(server.port));
      } catch {
        refused++;
      }
    }
    try {
      assert.equal(held.length, PER_ADDRESS, `${PER_ADDRESS} connections are held open`);
      assert.equal(refused, 2 * PER_ADDRESS, 'every connection past the bound is closed at once');
      // Another client (127.0.0.2 is this machine too) is served as if nothing happened.
      const other = await open(server.port, '127.0.0.2');
      const closed = untilClosed(other);
      other.write(
        `GET /api/v1/prices/today HTTP/1.1\r\nHost: localhost\r\nX-Api-Key: ${h.demoKey}\r\nConnection: close\r\n\r\n`,
      );
      const answer = await closed;
      assert.equal(status(answer), 200, `the other address gets its prices: ${answer.slice(0, 80)}`);
      const metrics = await h.app.inject({ method: 'GET', url: '/metrics' });
      const refusedAfter = Number(/^pricepoint_connections_refused_total (\d+)/m.exec(metrics.body)?.[1]);
      assert.equal(refusedAfter - refusedBefore, 2 * PER_ADDRESS, 'each refused connection is counted');
    } finally {
      for (const socket of held) socket.destroy();
    }
    // Once they are closed, the address may connect again.
    await sleep(100);
    const again = await open(server.port);
    again.destroy();
  });
});
