/**
 * The one GET every connector makes: bounded in time and size, Retry-After kept as a delay, and
 * failures that name the upstream without its query string (where a token may be).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  getUpstream,
  parseRetryAfter,
  type UpstreamAnswer,
  whatArrived,
} from '../../src/sources/upstream-get.js';
import { FakeUpstream } from './fake-upstream.js';

let upstream: FakeUpstream;

describe('getUpstream', () => {
  before(async () => {
    upstream = await new FakeUpstream().start();
  });
  after(() => upstream.close());

  test('an upstream that never answers is a timeout failure', async () => {
    upstream.answer('/slow', { hang: true });
    const got = await getUpstream(new URL(upstream.url('/slow?securityToken=secret')), { timeoutMs: 200 });
    assert.ok(!got.ok);
    assert.equal(got.failure.kind, 'timeout');
    assert.equal(got.failure.message, `${upstream.url('/slow')} did not answer within 0.2 s`);
  });

  test('a body over the cap is refused, whether or not its length was declared', async () => {
    upstream.answer('/big', { body: 'x'.repeat(4096) });
    const declared = await getUpstream(new URL(upstream.url('/big')), { maxBytes: 1024 });
    assert.ok(!declared.ok);
    assert.equal(declared.failure.kind, 'too-large');

    const server = createServer((socket) => {
      socket.end(`HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n${'y'.repeat(4096)}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const undeclared = await getUpstream(new URL(`http://127.0.0.1:${port}/`), { maxBytes: 1024 });
    server.close();
    assert.ok(!undeclared.ok);
    assert.equal(undeclared.failure.kind, 'too-large');

    const fits = await getUpstream(new URL(upstream.url('/big')), { maxBytes: 4096 });
    assert.ok(fits.ok);
    assert.equal(fits.answer.body.byteLength, 4096);
  });

  test('a refused connection is a network failure', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    const got = await getUpstream(new URL(`http://127.0.0.1:${port}/api?token=secret`), {});
    assert.ok(!got.ok);
    assert.equal(got.failure.kind, 'network');
    assert.equal(got.failure.message, `http://127.0.0.1:${port}/api could not be reached: ECONNREFUSED`);
  });

  test('Retry-After only on 429 and 503, in seconds or as a date', async () => {
    upstream.answer('/busy', { status: 503, headers: { 'retry-after': '7' } });
    upstream.answer('/teapot', { status: 418, headers: { 'retry-after': '7' } });
    const busy = await getUpstream(new URL(upstream.url('/busy')), {});
    const teapot = await getUpstream(new URL(upstream.url('/teapot')), {});
    assert.ok(busy.ok && teapot.ok);
    assert.equal(busy.answer.retryAfterMs, 7000);
    assert.equal(teapot.answer.retryAfterMs, undefined);

    const now = Date.parse('2026-11-22T10:00:00Z');
    assert.equal(parseRetryAfter('Sun, 22 Nov 2026 10:02:00 GMT', now), 120_000);
    assert.equal(parseRetryAfter('Sun, 22 Nov 2026 09:00:00 GMT', now), 0);
    assert.equal(parseRetryAfter('soon', now), undefined);
    assert.equal(parseRetryAfter(null, now), undefined);
  });
});

describe('whatArrived', () => {
  const answer = (body: string | Uint8Array, contentType = ''): UpstreamAnswer => ({
    status: 200,
    contentType,
    body: typeof body === 'string' ? Buffer.from(body) : body,
    where: 'upstream.test',
  });

  test('names the kind by the first bytes, the content type, and the first bytes escaped', () => {
    assert.equal(whatArrived(answer('')), 'an empty body (no content type)');
    assert.equal(
      whatArrived(answer('{"error":"x"}', 'application/json')),
      'JSON (application/json), starting "{"error":"x"}"',
    );
    assert.equal(
      whatArrived(answer(Buffer.from([0x1f, 0x8b, 0x08, 0x00]), 'application/octet-stream')),
      'gzip data (application/octet-stream), starting "\\x1f\\x8b\\x08\\x00"',
    );
    assert.match(whatArrived(answer('Date,USD\n2026-01-02,1.1', 'text/csv')), /^text \(text\/csv\)/);
  });

  test('a secret in the first bytes never shows, whole or cut short', () => {
    const token = 'a1b2c3d4-e5f6-4711-8899-aabbccddeeff';
    const whole = whatArrived(answer(`<?xml version="1.0"?><echo>${token}</echo>`), [token]);
    assert.ok(!whole.includes('a1b2c3'), whole);
    const cut = whatArrived(answer(`token=${token}&more`), [token]);
    assert.ok(!cut.includes('a1b2'), cut);
    assert.match(cut, /starting "token=\*\*\*/);
  });
});
