/**
 * "A response never contains a key" (docs/errors.md) and logs are "never a key" (docs/api.md): a
 * long run of requests that put keys everywhere a client might, then a search of every log line,
 * body and header. Also: a 500 tells the client nothing and the server everything.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { loadConfig } from '../../src/config/config.js';
import { ApiError } from '../../src/domain/errors/api-error.js';
import { generateKey } from '../../src/domain/keys/key-format.js';
import { composeApp } from '../../src/server/compose.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import type { Stores } from '../../src/stores/types.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const TODAY = '/api/v1/prices/today';

/** What must never be seen: the part of a key after `pp_<kind>_`, so that masked or re-prefixed copies count too. */
function secretOf(key: string): string {
  return key.replace(/^pp_[a-z]+_/, '');
}

function leaksIn(text: string, secrets: readonly string[]): string[] {
  return secrets.filter((secret) => text.includes(secret));
}

describe('keys never reach a log line or a response', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness();
  });
  after(() => h.close());

  test('a run of requests with keys in headers, query strings and paths leaves no key in logs, bodies or headers', async () => {
    const valid = await h.createKey();
    const other = await h.createKey();
    const revoked = await h.createKey();
    await h.stores.keys.revoke(revoked.id, h.clock.now);
    const unknown = generateKey('live');
    const mistyped = `${valid.key.slice(0, -1)}${valid.key.endsWith('A') ? 'B' : 'A'}`;
    const malformed = 'pp_live_TooShortToBeAKey';
    const keys = [valid.key, other.key, revoked.key, unknown, mistyped, h.demoKey];
    const secrets = [...keys.map(secretOf), 'TooShortToBeAKey'];

    const requests: InjectOptions[] = [
      // Accepted, in both forms.
      { url: TODAY, headers: { 'x-api-key': valid.key } },
      { url: `${TODAY}?symbols=NO1`, headers: { authorization: `Bearer ${valid.key}` } },
      { url: `${TODAY}?format=csv`, headers: { authorization: `bearer ${h.demoKey}` } },
      { url: TODAY, headers: { 'x-api-key': valid.key, authorization: `BEARER ${valid.key}` } },
      { method: 'HEAD', url: TODAY, headers: { 'x-api-key': valid.key } },
      // Refused keys.
      { url: TODAY, headers: { 'x-api-key': valid.key, authorization: `Bearer ${other.key}` } },
      { url: TODAY, headers: { 'x-api-key': unknown } },
      { url: TODAY, headers: { 'x-api-key': mistyped } },
      { url: TODAY, headers: { authorization: `Bearer ${malformed}` } },
      { url: TODAY, headers: { authorization: `Basic ${valid.key}` } },
      { url: TODAY, headers: { 'x-api-key': revoked.key } },
      { url: TODAY, headers: { 'x-api-key': `${valid.key} ${other.key}` } },
      // Keys in the query string, with and without a key in the header.
      { url: `${TODAY}?api_key=${valid.key}` },
      { url: `${TODAY}?api_key=${valid.key}`, headers: { 'x-api-key': valid.key } },
      { url: `${TODAY}?symbols=NO1,${other.key}` },
      { url: `${TODAY}?${valid.key}=1`, headers: { 'x-api-key': valid.key } },
      { url: `${TODAY}?token=${unknown}&tz=UTC` },
      { url: `/healthz?api_key=${valid.key}` },
      // Keys in the path.
      { url: `/api/v1/${valid.key}` },
      { url: `/api/v1/prices/${valid.key}`, headers: { 'x-api-key': valid.key } },
      { url: `/${h.demoKey}?x=${other.key}` },
      { url: `/api/v2/${valid.key}/prices` },
      // Errors of other kinds, each with a key somewhere in the request.
      { method: 'POST', url: TODAY, headers: { 'x-api-key': valid.key }, payload: { key: valid.key } },
      { method: 'DELETE', url: `${TODAY}?key=${valid.key}` },
      { url: TODAY, headers: { 'x-api-key': valid.key, accept: 'image/png' } },
      { url: `${TODAY}?foo=1`, headers: { 'x-api-key': valid.key } },
      { url: `${TODAY}?tz=Mars/Olympus`, headers: { 'x-api-key': valid.key } },
      { url: `${TODAY}?symbols=ZZZ1`, headers: { 'x-api-key': valid.key } },
      // Headers nobody should log.
      {
        url: TODAY,
        headers: {
          'x-api-key': valid.key,
          'user-agent': `script ${other.key}`,
          referer: `https://x/?k=${unknown}`,
        },
      },
    ];
    // Enough failures from one address to be refused with 429 too.
    for (let i = 0; i < 21; i++) {
      requests.push({ url: TODAY, headers: { 'x-api-key': unknown }, remoteAddress: '203.0.113.5' });
    }

    const responses: LightMyRequestResponse[] = [];
    for (const request of requests) responses.push(await h.app.inject(request));

    const statuses = new Set(responses.map((r) => r.statusCode));
    for (const status of [200, 400, 401, 404, 405, 406, 429])
      assert.ok(statuses.has(status), `a ${status} was seen`);
    for (const [i, response] of responses.entries()) {
      const where = `${requests[i]?.method ?? 'GET'} ${requests[i]?.url}`;
      assert.deepEqual(leaksIn(response.body, secrets), [], `body of ${where}`);
      assert.deepEqual(leaksIn(JSON.stringify(response.headers), secrets), [], `headers of ${where}`);
    }

    const requestLines = h.logs.filter((line) => line.msg === 'request');
    assert.equal(requestLines.length, requests.length, 'one log line per request was captured');
    for (const line of h.rawLogs) assert.deepEqual(leaksIn(line, secrets), [], line);
  });

  test('a percent-encoded key in the URL does not reach the log either', async () => {
    const { key } = await h.createKey();
    const encoded = key.replaceAll('_', '%5F');
    const before = h.rawLogs.length;
    await h.app.inject({ url: `${TODAY}?api_key=${encoded}` });
    await h.app.inject({ url: `/api/v1/${encoded}` });
    const lines = h.rawLogs.slice(before);
    assert.equal(lines.length, 2);
    for (const line of lines) assert.deepEqual(leaksIn(line, [secretOf(key)]), [], line);
  });
});

describe('an unexpected error', () => {
  const secret = 'postgres://pricepoint:hunter2-s3cret@db.internal:5432/prices';
  let app: FastifyInstance;
  let stores: Stores;
  const rawLogs: string[] = [];
  const leakedKey = generateKey('live');

  before(async () => {
    // Built by hand rather than through the harness: routes must be added before `ready`.
    const config = loadConfig({ PRICEPOINT_LOG_LEVEL: 'info' }, { databasePath: ':memory:' });
    stores = await openEmbeddedStores(':memory:');
    const logStream = new Writable({
      write(chunk, _encoding, done) {
        rawLogs.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    app = (await composeApp(config, { stores, logStream })).app;
    app.get('/boom', async () => {
      throw new Error(`connection to ${secret} refused`);
    });
    app.get('/boom-with-status-and-headers', async () => {
      throw Object.assign(new Error(`upstream answered for ${secret}`), {
        statusCode: 502,
        code: 'E_UPSTREAM',
        headers: { 'x-upstream-token': secret },
      });
    });
    app.get('/problem-echoing-a-key', async () => {
      throw new ApiError('invalid_parameter', 'The parameter is wrong.', { extra: { parameter: leakedKey } });
    });
    await app.ready();
  });
  after(async () => {
    await app.close();
    await stores.close();
  });

  test('is a 500 problem+json with code internal that reveals no message, stack or secret', async () => {
    for (const url of ['/boom', '/boom-with-status-and-headers']) {
      const response = await app.inject({ url });
      assert.equal(response.statusCode, 500, url);
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
      const body = response.json() as Record<string, unknown>;
      assert.deepEqual(Object.keys(body).sort(), [
        'code',
        'detail',
        'instance',
        'requestId',
        'status',
        'title',
        'type',
      ]);
      assert.equal(body.code, 'internal');
      assert.equal(body.instance, url);
      for (const revealing of [
        'hunter2',
        'db.internal',
        'E_UPSTREAM',
        'upstream',
        'Error',
        '.ts:',
        'node_modules',
      ]) {
        assert.ok(!response.body.includes(revealing), `${url} body reveals ${revealing}: ${response.body}`);
      }
      assert.ok(!JSON.stringify(response.headers).includes('hunter2'), `${url} headers reveal the secret`);
      assert.equal(response.headers['x-upstream-token'], undefined);
    }
  });

  test('is logged on the server with its message and stack under the request id', async () => {
    const response = await app.inject({ url: '/boom' });
    const requestId = (response.json() as { requestId: string }).requestId;
    const logged = rawLogs
      .map(
        (line) =>
          JSON.parse(line) as { level: number; reqId?: string; err?: { message?: string; stack?: string } },
      )
      .find((line) => line.reqId === requestId && line.level >= 50);
    assert.ok(logged, 'an error line carries the request id');
    assert.match(String(logged.err?.message), /hunter2-s3cret/);
    assert.match(String(logged.err?.stack), /at /);
  });

  test('a problem body masks a key in any member, not only in detail and instance', async () => {
    const response = await app.inject({ url: '/problem-echoing-a-key' });
    assert.equal(response.statusCode, 400);
    assert.deepEqual(leaksIn(response.body, [secretOf(leakedKey)]), [], response.body);
    assert.equal((response.json() as { parameter: string }).parameter, 'pp_***');
  });
});
