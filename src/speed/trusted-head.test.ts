/**
 * trusted-head.ts writes heads through a private symbol of Node's `OutgoingMessage`, so that Node
 * does not check fields that were checked before. These tests hold it to the public
 * `writeHead(status, fields)` byte for byte on the wire, over keep-alive, and show that it finds
 * no symbol to use where a message keeps its fields another way.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, OutgoingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import {
  checkFields,
  type HeadWriter,
  keptFieldsSymbol,
  type PreparedHead,
  preparedHead,
  trustedHeadWriter,
} from './trusted-head.js';

interface Answer {
  readonly status: number;
  readonly fields: readonly string[];
  readonly body?: string;
  /** Set with `setHeader` before the head is written. */
  readonly early?: readonly [string, string];
  /** Fields whose values change with each request (the request's number is put in them). */
  readonly slots?: readonly string[];
}

const BODY = '{"prices":[1,2,3]}';
const ANSWERS: Record<string, Answer> = {
  '/ok': {
    status: 200,
    fields: [
      'access-control-allow-origin',
      '*',
      'x-request-id',
      '0b6f1a8e-3c1d-4f6e-9a0b-5d2c7e8f9a10',
      'ratelimit-policy',
      '"minute";q=30;w=60, "day";q=1000;w=86400',
      'ratelimit',
      '"minute";r=29;t=41',
      'etag',
      '"abc-br"',
      'content-type',
      'application/json; charset=utf-8',
      'content-length',
      String(Buffer.byteLength(BODY)),
      'content-encoding',
      'br',
    ],
    body: BODY,
    slots: ['x-request-id', 'ratelimit'],
  },
  '/not-modified': { status: 304, fields: ['etag', '"abc"', 'cache-control', 'private, max-age=60'] },
  '/csv': {
    status: 200,
    fields: [
      'content-type',
      'text/csv; charset=utf-8',
      'content-disposition',
      'attachment; filename="prices-2026-11-24.csv"',
      'content-length',
      '3',
    ],
    body: 'a,b',
  },
  '/early': {
    status: 200,
    fields: ['content-type', 'text/plain', 'content-length', '2'],
    body: 'hi',
    early: ['X-Early', 'set before'],
  },
  '/no-length': { status: 200, fields: ['content-type', 'text/plain'], body: 'chunked' },
};

/**
 * Serves `ANSWERS` with `write`, each from a head prepared once, its slots filled with the number of
 * the request; notes what Node says of each response's fields afterwards.
 */
async function serveWith(write: HeadWriter) {
  const seen: Record<string, unknown>[] = [];
  const heads = new Map<string, PreparedHead>();
  let served = 0;
  const server = createServer((req, res: ServerResponse) => {
    const url = req.url ?? '';
    const answer = ANSWERS[url] as Answer;
    let head = heads.get(url);
    if (head === undefined) {
      head = preparedHead(answer.fields, answer.slots ?? []);
      heads.set(url, head);
    }
    served += 1;
    head.values.forEach((_, i) => {
      (head as PreparedHead).values[i] = `request ${served} slot ${i}`;
    });
    if (answer.early !== undefined) res.setHeader(...answer.early);
    write(res, answer.status, head);
    seen.push({ ...res.getHeaders() });
    res.end(answer.body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return { port, seen, close: () => new Promise((done) => server.close(done)) };
}

/** Every byte the server sends for `paths`, asked one after the other on one keep-alive connection. */
async function bytesFor(port: number, paths: readonly string[]): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  const request = paths.map((p) => `GET ${p} HTTP/1.1\r\nHost: localhost\r\n\r\n`).join('');
  const last = `GET /close HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`;
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.write(request + last.replace('/close', paths[0] as string));
  await once(socket, 'end');
  socket.destroy();
  return Buffer.concat(chunks)
    .toString('latin1')
    .replace(/\r\nDate: [^\r]*/g, '\r\nDate: -');
}

describe('a head written with trusted fields', () => {
  test('finds the fields Node keeps on this Node', () => {
    assert.equal(typeof keptFieldsSymbol(), 'symbol');
  });

  test('is the same on the wire as the public writeHead, again and again, and leaves no fields behind', async () => {
    // Each answer more than once: a prepared head is written again with its slots refilled.
    const paths = [...Object.keys(ANSWERS), ...Object.keys(ANSWERS), '/ok', '/ok'];
    const trusted = await serveWith(trustedHeadWriter(keptFieldsSymbol()));
    const plain = await serveWith(trustedHeadWriter(undefined));
    try {
      const ours = await bytesFor(trusted.port, paths);
      const theirs = await bytesFor(plain.port, paths);
      assert.match(ours, /^HTTP\/1\.1 200 OK\r\naccess-control-allow-origin: \*\r\n/);
      assert.match(ours, /\r\nx-request-id: request 1 slot 0\r\n/);
      assert.match(ours, /\r\nratelimit: request 11 slot 1\r\n/);
      assert.match(ours, /\r\nConnection: keep-alive\r\n/);
      assert.match(ours, /\r\nConnection: close\r\n/);
      assert.match(ours, /\r\nTransfer-Encoding: chunked\r\n/);
      assert.equal(ours, theirs);
      // Afterwards Node knows of the fields what it knows after the public call: only those set
      // with `setHeader` before it, merged with the rest.
      assert.deepEqual(trusted.seen, plain.seen);
      assert.deepEqual(trusted.seen[0], {});
      assert.equal(Object.keys(trusted.seen[3] as object).length, 3, 'the early field and the two given');
    } finally {
      await trusted.close();
      await plain.close();
    }
  });

  test('names its slots among its fields', () => {
    const head = preparedHead(['x-request-id', 'a', 'etag', '"b"'], ['etag']);
    assert.deepEqual(head.values, ['"b"']);
    assert.throws(() => preparedHead(['x-request-id', 'a'], ['etag']), /no field etag/);
    assert.throws(() => preparedHead(['x-request-id', 'etag'], ['etag']), /no field etag/);
  });

  test('takes only fields checked as Node checks them, with names in lower case', () => {
    const ok = ANSWERS['/ok'] as Answer;
    checkFields(ok.fields);
    assert.throws(() => checkFields(['etag', '"a"\r\nset-cookie: x=1']), { code: 'ERR_INVALID_CHAR' });
    assert.throws(() => checkFields(['bad name', 'x']), { code: 'ERR_INVALID_HTTP_TOKEN' });
    assert.throws(() => checkFields(['Content-Type', 'text/plain']), /lower case/);
  });

  test('finds no symbol where a message keeps its fields another way', () => {
    const elsewhere = new OutgoingMessage();
    const symbol = Object.getOwnPropertySymbols(elsewhere).find((s) => s.description === 'kOutHeaders');
    assert.ok(symbol);
    elsewhere.setHeader = function (this: Record<symbol, unknown>, name: string, value: unknown) {
      this[symbol] = new Map([[name.toLowerCase(), value]]);
      return this;
    } as unknown as typeof elsewhere.setHeader;
    assert.equal(keptFieldsSymbol(elsewhere), undefined);
    assert.equal(keptFieldsSymbol(Object.create(OutgoingMessage.prototype)), undefined);
  });
});
