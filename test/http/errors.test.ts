/**
 * Errors (docs/errors.md): every error is RFC 9457 problem+json with a code from one closed list,
 * including the answers for paths, versions and methods no route serves.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { ERROR_CODES, type ErrorCode } from '../../src/domain/errors/api-error.js';
import { generateKey } from '../../src/domain/keys/key-format.js';
import { DEFAULT_TIERS, mergeTiers } from '../../src/domain/limits/tiers.js';
import { errorStatus } from '../../src/http/contract/error-status.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const TODAY = '/api/v1/prices/today';

/** docs/errors.md's table, written out independently of the code: each code and its status. */
const DOCUMENTED_CODES: Record<string, number> = {
  missing_api_key: 401,
  invalid_api_key: 401,
  conflicting_api_keys: 401,
  api_key_in_query: 401,
  insufficient_scope: 403,
  outside_tier_history: 403,
  address_not_allowed: 403,
  self_rotation_not_allowed: 403,
  rate_limited: 429,
  too_many_auth_failures: 429,
  invalid_parameter: 400,
  unknown_series: 404,
  not_found: 404,
  invitation_not_found: 404,
  invitation_expired: 410,
  invitation_used_up: 410,
  invitation_revoked: 410,
  signup_closed: 403,
  method_not_allowed: 405,
  not_acceptable: 406,
  payload_too_large: 413,
  unsupported_media_type: 415,
  invalid_prices: 422,
  service_unavailable: 503,
  internal: 500,
};

/**
 * Checks that `response` is a complete problem+json answer with `status` and `code`, and returns
 * its body for the checks particular to one error.
 */
function assertProblem(
  response: LightMyRequestResponse,
  status: number,
  code: ErrorCode,
  instance: string = TODAY,
): Record<string, unknown> {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json(;|$)/);
  const body = response.json() as Record<string, unknown>;
  for (const member of ['type', 'title', 'detail', 'instance', 'code', 'requestId']) {
    assert.equal(typeof body[member], 'string', `${member} in ${response.body}`);
    assert.notEqual(body[member], '', member);
  }
  // A URI reference: absolute (IANA's) or relative to the request, as RFC 9457 allows.
  assert.ok(URL.canParse(String(body.type), 'https://localhost:8443/api/v1/'), 'type is a URI reference');
  assert.equal(body.status, status);
  assert.ok((ERROR_CODES as string[]).includes(String(body.code)), `${body.code} is in the closed list`);
  assert.equal(body.code, code);
  assert.equal(DOCUMENTED_CODES[code], status, `docs/errors.md gives ${code} ${DOCUMENTED_CODES[code]}`);
  assert.equal(body.instance, instance);
  assert.equal(body.requestId, response.headers['x-request-id']);
  return body;
}

test('the closed list of error codes is exactly the one of docs/errors.md, each with its status', () => {
  assert.deepEqual([...ERROR_CODES].sort(), Object.keys(DOCUMENTED_CODES).sort());
  for (const code of ERROR_CODES) assert.equal(errorStatus(code), DOCUMENTED_CODES[code], code);
});

describe('error answers', () => {
  let h: Harness;
  let key: string;
  const get = (url: string, options: Omit<InjectOptions, 'url'> = {}) =>
    h.app.inject({ method: 'GET', url, ...options, headers: { 'x-api-key': key, ...options.headers } });

  before(async () => {
    h = await createHarness({
      config: {
        tiers: mergeTiers(DEFAULT_TIERS, {
          power: { limits: [{ name: 'minute', limit: 60, windowSeconds: 60 }], kinds: ['electricity'] },
        }),
      },
    });
    ({ key } = await h.createKey());
  });
  after(() => h.close());

  test('every kind of error the API gives is problem+json with type, title, status, detail, instance, code and requestId', async (t) => {
    const other = await h.createKey();
    const power = await h.createKey({ tier: 'power' });
    const spent = await h.createKey();
    for (let i = 0; i < 60; i++) {
      assert.equal((await get(TODAY, { headers: { 'x-api-key': spent.key } })).statusCode, 200);
    }
    const guesser = '203.0.113.99';
    for (let i = 0; i < 20; i++) {
      await get(TODAY, { headers: { 'x-api-key': generateKey('test') }, remoteAddress: guesser });
    }
    const unknownKey = { 'x-api-key': generateKey('live') };
    const bigBody = { headers: { 'content-type': 'text/plain' }, payload: 'x'.repeat(2_000_000) };

    const cases: {
      what: string;
      send: () => Promise<LightMyRequestResponse>;
      code: ErrorCode;
      path?: string;
    }[] = [
      { what: 'no key', send: () => h.app.inject({ url: TODAY }), code: 'missing_api_key' },
      { what: 'unknown key', send: () => get(TODAY, { headers: unknownKey }), code: 'invalid_api_key' },
      {
        what: 'two keys',
        send: () => get(TODAY, { headers: { authorization: `Bearer ${other.key}` } }),
        code: 'conflicting_api_keys',
      },
      { what: 'key in the query', send: () => get(`${TODAY}?api_key=${key}`), code: 'api_key_in_query' },
      {
        what: 'a kind the tier may not read',
        send: () => get(`${TODAY}?symbols=EURUSD`, { headers: { 'x-api-key': power.key } }),
        code: 'insufficient_scope',
      },
      {
        what: 'quota used up',
        send: () => get(TODAY, { headers: { 'x-api-key': spent.key } }),
        code: 'rate_limited',
      },
      {
        what: 'too many failures',
        send: () => get(TODAY, { remoteAddress: guesser }),
        code: 'too_many_auth_failures',
      },
      { what: 'unknown parameter', send: () => get(`${TODAY}?foo=1`), code: 'invalid_parameter' },
      { what: 'unknown series', send: () => get(`${TODAY}?symbols=ZZZ1`), code: 'unknown_series' },
      { what: 'unknown path', send: () => h.app.inject({ url: '/nope' }), code: 'not_found', path: '/nope' },
      {
        what: 'unknown method',
        send: () => h.app.inject({ method: 'DELETE', url: TODAY }),
        code: 'method_not_allowed',
      },
      {
        what: 'unacceptable media type',
        send: () => get(TODAY, { headers: { accept: 'image/png' } }),
        code: 'not_acceptable',
      },
      {
        what: 'body too large',
        send: () => h.app.inject({ method: 'POST', url: '/nope', ...bigBody }),
        code: 'payload_too_large',
        path: '/nope',
      },
    ];
    for (const { what, send, code, path } of cases) {
      const response = await send();
      await t.test(what, () => {
        assertProblem(response, DOCUMENTED_CODES[code] ?? 0, code, path);
      });
    }
  });

  test('an unknown path is 404 not_found that points to /api/v1/', async () => {
    for (const path of ['/nope', '/api/v1/nope', '/api/v1/prices/today/extra']) {
      const body = assertProblem(await h.app.inject({ url: path }), 404, 'not_found', path);
      assert.match(String(body.detail), /\/api\/v1\//, path);
    }
  });

  test('an unknown API version is 404 not_found whose detail names the version', async () => {
    for (const version of ['v2', 'v0', 'v1beta']) {
      const path = `/api/${version}/prices/today`;
      const body = assertProblem(await get(path), 404, 'not_found', path);
      assert.match(String(body.detail), new RegExp(`API version ${version} does not exist`));
    }
  });

  test('a method the path does not serve is 405 method_not_allowed with an Allow header listing GET and HEAD', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      const response = await h.app.inject({ method, url: TODAY, headers: { 'x-api-key': key } });
      const body = assertProblem(response, 405, 'method_not_allowed');
      const allowed = String(response.headers.allow)
        .split(',')
        .map((m) => m.trim())
        .sort();
      assert.deepEqual(allowed, ['GET', 'HEAD'], method);
      assert.match(String(body.detail), new RegExp(`^${method} is not allowed`));
    }
  });

  test('an Accept header the endpoint cannot satisfy is 406 not_acceptable; text/csv is served', async () => {
    assertProblem(await get(TODAY, { headers: { accept: 'image/png' } }), 406, 'not_acceptable');
    const csv = await get(`${TODAY}?symbols=NO1`, { headers: { accept: 'text/csv' } });
    assert.equal(csv.statusCode, 200, csv.body);
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
  });

  test('an unknown parameter or a malformed value is 400 invalid_parameter naming the parameter', async () => {
    const cases: [query: string, parameter: string][] = [
      ['foo=1', 'foo'],
      ['format=xml', 'format'],
      ['tz=Mars/Olympus', 'tz'],
      ['tz=%2B01:00', 'tz'],
      ['symbols=NO1,bad!', 'symbols'],
      ['symbols=NO1,,DE-LU', 'symbols'],
      [`symbols=${Array.from({ length: 101 }, (_, i) => `S${i}`).join(',')}`, 'symbols'],
      ['tz=UTC&tz=UTC', 'tz'],
      ['symbols=NO1&symbols=NO1', 'symbols'],
    ];
    for (const [query, parameter] of cases) {
      const body = assertProblem(await get(`${TODAY}?${query}`), 400, 'invalid_parameter');
      assert.equal(body.parameter, parameter, query);
      assert.match(String(body.detail), new RegExp(`"${parameter}"`), query);
    }
  });

  test('unknown series are 404 unknown_series naming every unknown symbol and no known one', async () => {
    const body = assertProblem(await get(`${TODAY}?symbols=no1,zzz1,DE-LU,qqq2`), 404, 'unknown_series');
    assert.deepEqual(body.symbols, ['ZZZ1', 'QQQ2']);
    assert.match(String(body.detail), /ZZZ1/);
    assert.match(String(body.detail), /QQQ2/);
    assert.doesNotMatch(String(body.detail), /NO1|DE-LU/);
  });

  test('instance is the path of the request without its query string', async () => {
    assertProblem(await get(`${TODAY}?foo=1&bar=2`), 400, 'invalid_parameter', TODAY);
    assertProblem(await h.app.inject({ url: '/nope?x=1' }), 404, 'not_found', '/nope');
  });

  test('a key written into the path is masked in instance, also when percent-encoded', async () => {
    const secretPart = key.slice('pp_live_'.length);
    const plain = await h.app.inject({ url: `/api/v1/${key}` });
    assertProblem(plain, 404, 'not_found', '/api/v1/pp_***');
    assert.ok(!plain.body.includes(secretPart), plain.body);

    const encoded = await h.app.inject({ url: `/api/v1/nothing/${key.replaceAll('_', '%5F')}` });
    assertProblem(encoded, 404, 'not_found', '/api/v1/nothing/pp_***');
    assert.ok(!encoded.body.includes(secretPart), encoded.body);
  });

  test('a path that is not a valid URL is answered with problem+json that does not echo a key in it', async () => {
    const response = await h.app.inject({ url: `/api/v1/${key}%zz` });
    assert.ok(!response.body.includes(key.slice('pp_live_'.length)), `the key is echoed: ${response.body}`);
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/, response.body);
    const body = response.json() as Record<string, unknown>;
    assert.ok((ERROR_CODES as string[]).includes(String(body.code)), response.body);
    assert.equal(body.status, response.statusCode);
    assert.equal(body.requestId, response.headers['x-request-id']);
  });
});
