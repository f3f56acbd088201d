/**
 * The OpenAPI document (DESIGN section 2) against the server's real answers. A table holds example
 * requests for every operation, successes and errors; each answer must be documented for its
 * operation (status, media type, body schema, every header it always sends, and no header beyond
 * those documented and a short list of transport ones), and an operation without an example fails
 * the suite, so the table grows with the API. Every keyed operation is also asked without a key.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { createHarness } from '../helpers/harness.js';

interface MediaType {
  schema?: object;
}
interface ResponseDoc {
  description: string;
  headers?: Record<string, { schema?: { type?: string; required?: unknown }; required?: boolean }>;
  content?: Record<string, MediaType>;
}
interface ParameterDoc {
  name: string;
  in: string;
  required?: boolean;
}
interface OperationDoc {
  responses: Record<string, ResponseDoc>;
  parameters?: ParameterDoc[];
  security?: Record<string, string[]>[];
}
interface OpenApiDoc {
  openapi: string;
  paths: Record<string, Record<string, OperationDoc>>;
  components?: Record<string, unknown>;
  security?: Record<string, string[]>[];
}

const dir = mkdtempSync(join(tmpdir(), 'pricepoint-openapi-'));
// A tier of one request a minute, to reach a 429 in two requests.
const configPath = join(dir, 'tiers.json');
writeFileSync(
  configPath,
  JSON.stringify({ tiers: { tiny: { limits: [{ name: 'minute', limit: 1, windowSeconds: 60 }] } } }),
);
const h = await createHarness({ env: { PRICEPOINT_CONFIG: configPath } });
after(async () => {
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});

// Enterprise keys (200 a second): the table must not run into a limit it does not aim at.
const reader = (await h.createKey({ tier: 'enterprise', scopes: ['read'] })).key;
const writer = (await h.createKey({ tier: 'enterprise', scopes: ['write'] })).key;
const admin = (await h.createKey({ tier: 'enterprise', scopes: ['admin'] })).key;

const documentAnswer = await h.app.inject({ url: '/api/v1/openapi.json' });
const doc = documentAnswer.json() as OpenApiDoc;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => METHODS.includes(method))
    .map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, path, method, operation })),
);

const ajv = new Ajv2020({ strict: false, allErrors: true });
// ajv-formats is CommonJS: under NodeNext its default export sits on `.default`.
ajvFormats.default(ajv);

/** Validates against a schema of the document; `#/components/...` references resolve in the document. */
function validate(schema: object, value: unknown): string | undefined {
  const check = ajv.compile({ components: doc.components ?? {}, allOf: [schema] });
  return check(value) ? undefined : ajv.errorsText(check.errors);
}

let addressCount = 0;
/** A fresh client address: failed authentications are limited per address. */
function freshAddress(): string {
  addressCount += 1;
  return `198.51.${Math.floor(addressCount / 250)}.${(addressCount % 250) + 1}`;
}

function send(
  method: InjectOptions['method'],
  url: string,
  key: string | undefined,
  options: { headers?: Record<string, string>; payload?: string; remoteAddress?: string } = {},
): Promise<LightMyRequestResponse> {
  return h.app.inject({
    method,
    url,
    headers: { ...(key !== undefined && { 'x-api-key': key }), ...options.headers },
    ...(options.payload !== undefined && { payload: options.payload }),
    ...(options.remoteAddress !== undefined && { remoteAddress: options.remoteAddress }),
  });
}
const get = (url: string, key?: string, headers: Record<string, string> = {}) =>
  send('GET', url, key, { headers });

/** The answer to `If-None-Match` with the ETag of a first answer. */
async function notModified(url: string, key: string): Promise<LightMyRequestResponse> {
  const first = await get(url, key);
  assert.equal(first.statusCode, 200, first.body);
  return get(url, key, { 'if-none-match': String(first.headers.etag) });
}

/** The second request of a key in the one-a-minute tier. */
async function overLimit(
  scopes: ('read' | 'write' | 'admin')[],
  ask: (key: string) => Promise<LightMyRequestResponse>,
) {
  const { key } = await h.createKey({ tier: 'tiny', scopes });
  const first = await ask(key);
  assert.ok(first.statusCode < 400, `the first request of the minute is allowed: ${first.body}`);
  return ask(key);
}

/** Failed authentications from one address until it is refused before any lookup. */
async function authFailures(ask: (remoteAddress: string) => Promise<LightMyRequestResponse>) {
  const address = freshAddress();
  for (let i = 0; i < h.config.authFailuresPerMinute; i++) {
    const failed = await ask(address);
    assert.equal(failed.statusCode, 401, failed.body);
  }
  return ask(address);
}

const BAD_KEY = 'pp_live_0000000000000000000000000000000000000';
const CSV_ROW_NO1 = 'start,price\r\n2026-11-22T00:00:00+01:00,41.27\r\n';
const jsonHeaders = { 'content-type': 'application/json' };

interface Example {
  readonly operation: string;
  readonly name: string;
  readonly status: number;
  readonly send: () => Promise<LightMyRequestResponse>;
}

const ex = (operation: string, status: number, name: string, run: () => Promise<LightMyRequestResponse>) =>
  ({ operation, name, status, send: run }) satisfies Example;

/**
 * The examples every read endpoint shares: JSON, CSV, 304, bad parameters, bad keys, 406 and 429.
 * (No 403 for scope: every scope includes `read`.)
 */
function readExamples(operation: string, url: string): Example[] {
  const join = url.includes('?') ? '&' : '?';
  return [
    ex(operation, 200, 'JSON', () => get(url, reader)),
    ex(operation, 200, 'JSON with the key as a bearer token', () =>
      get(url, undefined, { authorization: `Bearer ${reader}` }),
    ),
    ex(operation, 200, 'CSV by format=csv', () => get(`${url}${join}format=csv`, reader)),
    ex(operation, 200, 'CSV by Accept', () => get(url, reader, { accept: 'text/csv' })),
    ex(operation, 200, 'JSON, compressed as Accept-Encoding allows', () =>
      get(url, reader, { 'accept-encoding': 'br, gzip' }),
    ),
    ex(operation, 200, 'the demo key', () => get(url, h.demoKey)),
    ex(operation, 304, 'If-None-Match with the current ETag', () => notModified(url, reader)),
    ex(operation, 400, 'an unknown parameter', () => get(`${url}${join}colour=red`, reader)),
    ex(operation, 400, 'a resolution that does not exist', () => get(`${url}${join}resolution=PT7M`, reader)),
    ex(operation, 400, 'a time zone that does not exist', () => get(`${url}${join}tz=Mars/Olympus`, reader)),
    ex(operation, 401, 'an unknown key', () => get(url, BAD_KEY)),
    ex(operation, 401, 'a key in the query string', () => get(`${url}${join}api_key=${reader}`)),
    ex(operation, 406, 'Accept: image/png', () => get(url, reader, { accept: 'image/png' })),
    ex(operation, 429, 'the limit of the tier is used up', () => overLimit(['read'], (key) => get(url, key))),
  ];
}

/** The day endpoints add `symbols`: an unknown one is a 404, a malformed one a 400. */
function dayExamples(operation: string, url: string): Example[] {
  const join = url.includes('?') ? '&' : '?';
  return [
    ...readExamples(operation, url),
    ex(operation, 200, 'symbols, tz and resolution', () =>
      get(`${url}${join}symbols=NO1,DE-LU&tz=Europe/Oslo&resolution=PT1H`, reader),
    ),
    ex(operation, 400, 'a malformed symbol', () => get(`${url}${join}symbols=NO%201`, reader)),
    ex(operation, 404, 'an unknown series', () => get(`${url}${join}symbols=NO1,NOPE`, reader)),
  ];
}

let adminSymbol = 0;
const newSymbol = () => `DOC-TEST-${++adminSymbol}`;
const seriesBody = JSON.stringify({
  name: 'Documented series',
  kind: 'equity',
  currency: 'EUR',
  unit: 'share',
  timezone: 'Europe/Oslo',
  resolution: 'P1D',
});

const examples: Example[] = [
  // No key.
  ex('GET /healthz', 200, 'alive', () => get('/healthz')),
  ex('GET /metrics', 200, 'Prometheus text', () => get('/metrics')),
  ex('GET /readyz', 200, 'ready', () => get('/readyz')),
  ex('GET /readyz', 503, 'a store is unreachable', async () => {
    const prices = h.stores.prices;
    const ping = prices.ping;
    prices.ping = () => Promise.reject(new Error('down'));
    try {
      return await get('/readyz');
    } finally {
      prices.ping = ping;
    }
  }),
  ex('GET /api/v1/openapi.json', 200, 'the document', () => get('/api/v1/openapi.json')),

  // Prices.
  ...dayExamples('GET /api/v1/prices/today', '/api/v1/prices/today'),
  ...dayExamples('GET /api/v1/prices/{date}', '/api/v1/prices/2026-11-20'),
  ex('GET /api/v1/prices/{date}', 200, 'tomorrow', () => get('/api/v1/prices/tomorrow', reader)),
  ex('GET /api/v1/prices/{date}', 200, 'the DST day', () =>
    get('/api/v1/prices/2026-10-25?symbols=NO1', reader),
  ),
  ex('GET /api/v1/prices/{date}', 400, 'a date that does not exist', () =>
    get('/api/v1/prices/2026-02-30', reader),
  ),
  ex('GET /api/v1/prices/{date}', 403, 'a day before the tier history', () =>
    get('/api/v1/prices/2026-09-01', h.demoKey),
  ),
  ...dayExamples('GET /api/v1/prices', '/api/v1/prices?from=2026-11-20&to=2026-11-22'),
  ex('GET /api/v1/prices', 403, 'days before the tier history', () =>
    get('/api/v1/prices?from=2026-09-01&to=2026-09-02', h.demoKey),
  ),
  ex('GET /api/v1/prices', 400, 'to is missing', () => get('/api/v1/prices?from=2026-11-20', reader)),
  ex('GET /api/v1/prices', 400, 'more than 366 days', () =>
    get('/api/v1/prices?from=2024-01-01&to=2026-11-22', reader),
  ),
  ...dayExamples('GET /api/v1/prices/latest', '/api/v1/prices/latest'),

  // The catalogue.
  ...dayExamples('GET /api/v1/series', '/api/v1/series'),
  ...readExamples('GET /api/v1/series/{symbol}', '/api/v1/series/NO1'),
  ex('GET /api/v1/series/{symbol}', 200, 'any letter case', () => get('/api/v1/series/no1', reader)),
  ex('GET /api/v1/series/{symbol}', 404, 'an unknown series', () => get('/api/v1/series/NOPE', reader)),
  ex('GET /api/v1/series/{symbol}', 404, 'not a symbol at all', () => get('/api/v1/series/no%20pe', reader)),

  // Usage: keyed, not counted.
  ex('GET /api/v1/usage', 200, 'the demo key', () => get('/api/v1/usage', h.demoKey)),
  ex('GET /api/v1/usage', 400, 'an unknown parameter', () => get('/api/v1/usage?colour=red', reader)),
  ex('GET /api/v1/usage', 401, 'an unknown key', () => get('/api/v1/usage', BAD_KEY)),
  ex('GET /api/v1/usage', 429, 'too many failed authentications from one address', () =>
    authFailures((remoteAddress) => send('GET', '/api/v1/usage', BAD_KEY, { remoteAddress })),
  ),

  // Keys.
  ex('POST /api/v1/keys', 201, 'a new key', () =>
    send('POST', '/api/v1/keys', admin, {
      headers: jsonHeaders,
      payload: JSON.stringify({
        name: 'doc',
        tier: 'free',
        scopes: ['read'],
        expiresAt: '2030-01-01T00:00:00Z',
      }),
    }),
  ),
  ex('POST /api/v1/keys', 400, 'an unknown tier', () =>
    send('POST', '/api/v1/keys', admin, { headers: jsonHeaders, payload: '{"name":"doc","tier":"gold"}' }),
  ),
  ex('POST /api/v1/keys', 400, 'an unknown field', () =>
    send('POST', '/api/v1/keys', admin, {
      headers: jsonHeaders,
      payload: '{"name":"doc","tier":"free","colour":"red"}',
    }),
  ),
  ex('POST /api/v1/keys', 400, 'malformed JSON', () =>
    send('POST', '/api/v1/keys', admin, { headers: jsonHeaders, payload: '{"name":' }),
  ),
  ex('POST /api/v1/keys', 403, 'a key without the admin scope', () =>
    send('POST', '/api/v1/keys', reader, { headers: jsonHeaders, payload: '{"name":"doc","tier":"free"}' }),
  ),
  ex('POST /api/v1/keys', 413, 'a body over 1 MiB', () =>
    send('POST', '/api/v1/keys', admin, {
      headers: jsonHeaders,
      payload: JSON.stringify({ name: 'x'.repeat(1_100_000), tier: 'free' }),
    }),
  ),
  ex('POST /api/v1/keys', 415, 'an XML body', () =>
    send('POST', '/api/v1/keys', admin, {
      headers: { 'content-type': 'application/xml' },
      payload: '<key/>',
    }),
  ),
  ex('POST /api/v1/keys', 429, 'the limit of the tier is used up', () =>
    overLimit(['admin'], (key) =>
      send('POST', '/api/v1/keys', key, { headers: jsonHeaders, payload: '{"name":"doc","tier":"free"}' }),
    ),
  ),
  ex('GET /api/v1/keys', 200, 'every key', () => get('/api/v1/keys', admin)),
  ex('GET /api/v1/keys', 400, 'an unknown parameter', () => get('/api/v1/keys?colour=red', admin)),
  ex('GET /api/v1/keys', 403, 'a key without the admin scope', () => get('/api/v1/keys', h.demoKey)),
  ex('GET /api/v1/keys', 429, 'the limit of the tier is used up', () =>
    overLimit(['admin'], (key) => get('/api/v1/keys', key)),
  ),
  ex('GET /api/v1/keys/{id}', 200, 'one key', async () => {
    const { id } = await h.createKey();
    return get(`/api/v1/keys/${id}`, admin);
  }),
  ex('GET /api/v1/keys/{id}', 404, 'an unknown id', () => get('/api/v1/keys/nope', admin)),
  ex('DELETE /api/v1/keys/{id}', 200, 'revoked', async () => {
    const { id } = await h.createKey();
    return send('DELETE', `/api/v1/keys/${id}`, admin);
  }),
  ex('DELETE /api/v1/keys/{id}', 404, 'an unknown id', () => send('DELETE', '/api/v1/keys/nope', admin)),
  ex('DELETE /api/v1/keys/{id}', 403, 'a key without the admin scope', () =>
    send('DELETE', '/api/v1/keys/nope', writer),
  ),
  ex('POST /api/v1/keys/{id}/rotate', 201, 'rotated, without a body', async () => {
    const { id } = await h.createKey();
    return send('POST', `/api/v1/keys/${id}/rotate`, admin);
  }),
  ex('POST /api/v1/keys/{id}/rotate', 201, 'rotated with a grace period', async () => {
    const { id } = await h.createKey();
    return send('POST', `/api/v1/keys/${id}/rotate`, admin, {
      headers: jsonHeaders,
      payload: '{"graceSeconds":60}',
    });
  }),
  ex('POST /api/v1/keys/{id}/rotate', 400, 'a negative grace period', async () => {
    const { id } = await h.createKey();
    return send('POST', `/api/v1/keys/${id}/rotate`, admin, {
      headers: jsonHeaders,
      payload: '{"graceSeconds":-1}',
    });
  }),
  ex('POST /api/v1/keys/{id}/rotate', 404, 'an unknown id', () =>
    send('POST', '/api/v1/keys/nope/rotate', admin),
  ),
  ex('POST /api/v1/keys/{id}/rotate', 415, 'an XML body', () =>
    send('POST', '/api/v1/keys/nope/rotate', admin, {
      headers: { 'content-type': 'application/xml' },
      payload: '<rotate/>',
    }),
  ),

  // Series metadata.
  ex('PUT /api/v1/series/{symbol}', 201, 'created', () =>
    send('PUT', `/api/v1/series/${newSymbol()}`, admin, { headers: jsonHeaders, payload: seriesBody }),
  ),
  ex('PUT /api/v1/series/{symbol}', 200, 'updated', () =>
    send('PUT', '/api/v1/series/NO1', admin, { headers: jsonHeaders, payload: '{"name":"Oslo day-ahead"}' }),
  ),
  ex('PUT /api/v1/series/{symbol}', 400, 'a bad time zone', () =>
    send('PUT', `/api/v1/series/${newSymbol()}`, admin, {
      headers: jsonHeaders,
      payload: JSON.stringify({ ...JSON.parse(seriesBody), timezone: 'Mars/Olympus' }),
    }),
  ),
  ex('PUT /api/v1/series/{symbol}', 403, 'a key with the write scope only', () =>
    send('PUT', '/api/v1/series/NO1', writer, { headers: jsonHeaders, payload: '{"name":"x"}' }),
  ),
  ex('PUT /api/v1/series/{symbol}', 413, 'a body over 1 MiB', () =>
    send('PUT', '/api/v1/series/NO1', admin, {
      headers: jsonHeaders,
      payload: JSON.stringify({ name: 'x'.repeat(1_100_000) }),
    }),
  ),
  ex('PUT /api/v1/series/{symbol}', 415, 'a CSV body', () =>
    send('PUT', '/api/v1/series/NO1', admin, {
      headers: { 'content-type': 'text/csv' },
      payload: 'name\nx\n',
    }),
  ),

  // Price uploads.
  ex('PUT /api/v1/series/{symbol}/prices', 200, 'CSV', () =>
    send('PUT', '/api/v1/series/NO1/prices', writer, {
      headers: { 'content-type': 'text/csv' },
      payload: CSV_ROW_NO1,
    }),
  ),
  ex('PUT /api/v1/series/{symbol}/prices', 200, 'JSON Lines', () =>
    send('PUT', '/api/v1/series/NO1/prices', writer, {
      headers: jsonHeaders,
      payload: '{"start":"2026-11-22T00:15:00+01:00","price":40.1}\n',
    }),
  ),
  ex('PUT /api/v1/series/{symbol}/prices', 403, 'a key with the read scope only', () =>
    send('PUT', '/api/v1/series/NO1/prices', reader, {
      headers: { 'content-type': 'text/csv' },
      payload: CSV_ROW_NO1,
    }),
  ),
  ex('PUT /api/v1/series/{symbol}/prices', 404, 'an unknown series', () =>
    send('PUT', '/api/v1/series/NOPE/prices', writer, {
      headers: { 'content-type': 'text/csv' },
      payload: CSV_ROW_NO1,
    }),
  ),
  ex('PUT /api/v1/series/{symbol}/prices', 413, 'a body over 16 MiB', () =>
    send('PUT', '/api/v1/series/NO1/prices', writer, {
      headers: { 'content-type': 'text/csv' },
      payload: `start,price\n${'x'.repeat(16 * 1024 * 1024)}\n`,
    }),
  ),
  ex('PUT /api/v1/series/{symbol}/prices', 415, 'a plain-text body', () =>
    send('PUT', '/api/v1/series/NO1/prices', writer, {
      headers: { 'content-type': 'text/plain' },
      payload: CSV_ROW_NO1,
    }),
  ),
  ex('PUT /api/v1/series/{symbol}/prices', 422, 'a point off the grid and a bad price', () =>
    send('PUT', '/api/v1/series/NO1/prices', writer, {
      headers: { 'content-type': 'text/csv' },
      payload: 'start,price\n2026-11-22T00:07:00+01:00,1\n2026-11-22T00:30:00+01:00,abc\n',
    }),
  ),
  ex('PUT /api/v1/series/{symbol}/prices', 429, 'too many failed authentications from one address', () =>
    authFailures((remoteAddress) =>
      send('PUT', '/api/v1/series/NO1/prices', BAD_KEY, {
        headers: { 'content-type': 'text/csv' },
        payload: CSV_ROW_NO1,
        remoteAddress,
      }),
    ),
  ),
];

const isKeyed = (operation: OperationDoc) => (operation.security ?? doc.security ?? []).length > 0;

/** Every keyed operation, asked without a key, from its own address (failures are limited per address). */
const missingKeyExamples: Example[] = operations
  .filter((o) => isKeyed(o.operation))
  .map((o) => {
    const url = o.path.replace(/\{[^}]+\}/g, 'NO1');
    return ex(o.name, 401, 'no key', () =>
      send(o.method.toUpperCase() as InjectOptions['method'], url, undefined, {
        remoteAddress: freshAddress(),
      }),
    );
  });

/**
 * Headers the document need not list: they belong to HTTP itself or to every answer of the site,
 * not to an operation. Everything else a real answer carries must be documented for its status.
 */
const EXEMPT_HEADERS = new Set([
  // The media type is documented as the keys of `content`.
  'content-type',
  // Message framing and connection management, written by Node's HTTP server.
  'content-length',
  'transfer-encoding',
  'date',
  'connection',
  'keep-alive',
  // Hardening on every answer (app.ts onRequest hook).
  'x-content-type-options',
  'strict-transport-security',
]);
/** CORS response headers (@fastify/cors): on every answer to a browser, whatever the operation. */
const isExempt = (name: string) => EXEMPT_HEADERS.has(name) || name.startsWith('access-control-');

/** The body as text, decompressed when the server compressed it. */
function bodyText(response: LightMyRequestResponse): string {
  const coding = response.headers['content-encoding'];
  if (coding === 'br') return brotliDecompressSync(response.rawPayload).toString('utf8');
  if (coding === 'gzip') return gunzipSync(response.rawPayload).toString('utf8');
  return response.body;
}

/** Checks one answer against its operation in the document; returns what is wrong, if anything. */
function checkAnswer(operationName: string, response: LightMyRequestResponse): string[] {
  const operation = operations.find((o) => o.name === operationName)?.operation;
  if (operation === undefined) return [`${operationName} is not in the document`];
  const documented = operation.responses[String(response.statusCode)];
  if (documented === undefined) {
    return [
      `status ${response.statusCode} is not documented for ${operationName}: ${response.body.slice(0, 300)}`,
    ];
  }
  const problems: string[] = [];
  const headers = documented.headers ?? {};
  for (const [name, header] of Object.entries(headers)) {
    const value = response.headers[name];
    if (value === undefined) {
      // OpenAPI: a header is optional unless `required`; ours say `required` when every answer has it.
      if (header.required === true) problems.push(`header ${name} is documented as always sent, but missing`);
    } else if (header.schema?.type === 'integer' && !/^-?\d+$/.test(String(value))) {
      problems.push(`header ${name} is documented as an integer, got ${String(value)}`);
    }
  }
  for (const name of Object.keys(response.headers)) {
    if (!isExempt(name) && headers[name] === undefined) {
      problems.push(`header ${name} is sent but not documented for ${response.statusCode}`);
    }
  }
  const content = documented.content;
  if (content === undefined) {
    if (response.body !== '') problems.push(`no body is documented, got ${response.body.slice(0, 200)}`);
    return problems;
  }
  const media =
    String(response.headers['content-type'] ?? '')
      .split(';')[0]
      ?.trim() ?? '';
  const entry = content[media];
  if (entry === undefined) {
    problems.push(`media type "${media}" is not documented (documented: ${Object.keys(content).join(', ')})`);
    return problems;
  }
  if (entry.schema !== undefined) {
    const json = media === 'application/json' || media.endsWith('+json');
    const text = bodyText(response);
    const error = validate(entry.schema, json ? JSON.parse(text) : text);
    if (error !== undefined) problems.push(`the body does not match the schema: ${error}`);
  }
  return problems;
}

describe('GET /api/v1/openapi.json', () => {
  test('is an OpenAPI 3.1 document, served without a key', () => {
    assert.equal(documentAnswer.statusCode, 200, documentAnswer.body);
    assert.match(String(documentAnswer.headers['content-type']), /^application\/json/, 'served as JSON');
    assert.match(doc.openapi, /^3\.1\./, `OpenAPI 3.1, got ${doc.openapi}`);
    assert.ok(operations.length > 0, 'the document lists operations');
  });

  test('names both key schemes, and the open operations need none', () => {
    assert.deepEqual(
      Object.keys((doc.components?.securitySchemes ?? {}) as object).sort(),
      ['apiKey', 'bearer'],
      'the key schemes',
    );
    const open = operations.filter((o) => !isKeyed(o.operation)).map((o) => o.name);
    assert.deepEqual(
      open.sort(),
      ['GET /api/v1/openapi.json', 'GET /healthz', 'GET /metrics', 'GET /readyz'],
      'the operations that need no key',
    );
  });

  test('hides the reference page and its files', () => {
    const docsPaths = Object.keys(doc.paths).filter((p) => p.startsWith('/docs'));
    assert.deepEqual(docsPaths, [], 'no /docs path in the document');
  });

  test('every operation has an example request in this file, and every example an operation', () => {
    const covered = new Set(examples.map((e) => e.operation));
    const missing = operations.map((o) => o.name).filter((name) => !covered.has(name));
    assert.deepEqual(missing, [], 'add example requests for these operations');
    const known = new Set(operations.map((o) => o.name));
    const unknown = [...covered].filter((name) => !known.has(name));
    assert.deepEqual(unknown, [], 'these example operations are not in the document');
  });

  test('the key headers are security schemes only, and no example looks like a key', () => {
    const keyHeaders = operations.flatMap((o) =>
      (o.operation.parameters ?? [])
        .filter((p) => p.in === 'header' && ['x-api-key', 'authorization'].includes(p.name.toLowerCase()))
        .map((p) => `${o.name}: ${p.name}`),
    );
    assert.deepEqual(keyHeaders, [], 'the key travels in a security scheme, not a parameter');
    const keyLike = documentAnswer.body.match(/pp_(live|test|demo)_\w+/g) ?? [];
    assert.deepEqual(keyLike, [], 'the document holds nothing that looks like a key');
  });

  test('every response header says whether it is always sent on the Header Object, not in its schema', () => {
    const misplaced = operations.flatMap((o) =>
      Object.entries(o.operation.responses).flatMap(([status, response]) =>
        Object.entries(response.headers ?? {})
          .filter(([, header]) => header.schema !== undefined && 'required' in header.schema)
          .map(([name]) => `${o.name} ${status} ${name}`),
      ),
    );
    assert.deepEqual(misplaced, [], 'a boolean `required` inside a header schema is no JSON Schema');
    const problem = operations.find((o) => o.name === 'GET /api/v1/prices/today')?.operation.responses['429'];
    assert.equal(problem?.headers?.['retry-after']?.required, true, 'every 429 carries Retry-After');
    assert.equal(problem?.headers?.ratelimit?.required, undefined, 'only rate_limited carries RateLimit');
  });

  test('every operation that answers 304 takes If-None-Match as an optional header parameter', () => {
    const missing = operations
      .filter((o) => o.operation.responses['304'] !== undefined)
      .filter(
        (o) =>
          !(o.operation.parameters ?? []).some(
            (p) => p.in === 'header' && p.name.toLowerCase() === 'if-none-match' && p.required !== true,
          ),
      )
      .map((o) => o.name);
    assert.deepEqual(missing, [], 'these operations do not document If-None-Match');
  });

  test('every keyed operation documents 401, and every operation 500', () => {
    for (const o of operations) {
      if (isKeyed(o.operation)) assert.ok(o.operation.responses['401'], `${o.name} documents 401`);
      assert.ok(o.operation.responses['500'], `${o.name} documents 500`);
    }
  });
});

describe('real answers match the document', () => {
  for (const example of [...examples, ...missingKeyExamples]) {
    test(`${example.operation}: ${example.name} → ${example.status}`, async () => {
      // Each example in its own second, so no per-second limit is shared between examples.
      h.clock.advance(1000);
      const response = await example.send();
      assert.equal(response.statusCode, example.status, response.body.slice(0, 500));
      assert.deepEqual(checkAnswer(example.operation, response), [], 'the answer as documented');
    });
  }
});
