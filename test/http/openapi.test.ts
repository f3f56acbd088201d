/**
 * The OpenAPI document (docs/api.md) against the server's real answers. openapi-examples.ts holds
 * example requests for every operation, successes and errors; each answer must be documented for its
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
import type { LightMyRequestResponse } from 'fastify';
import { createHarness } from '../helpers/harness.js';
import {
  listOperations,
  type OpenApiDoc,
  type OperationDoc,
  type ResponseDoc,
  resolveShared,
  schemaValidator,
} from './openapi-document.js';
import { createExamples } from './openapi-examples.js';

const dir = mkdtempSync(join(tmpdir(), 'pricepoint-openapi-'));
// A tier of one request a minute, to reach a 429 in two requests; EURUSD converts EUR into USD.
const configPath = join(dir, 'tiers.json');
writeFileSync(
  configPath,
  JSON.stringify({
    tiers: { tiny: { limits: [{ name: 'minute', limit: 1, windowSeconds: 60 }] } },
    fx: { EUR: { USD: 'EURUSD' } },
    // A household tariff in USD per kWh for tariff= (docs/tariffs.md).
    tariffs: {
      household: {
        currency: 'USD',
        unit: 'kWh',
        timezone: 'Europe/Oslo',
        vat: [{ from: '2026-01-01', percent: 25 }],
        fees: [{ from: '2026-01-01', rules: [{ hours: '06:00-22:00', amount: '0.05' }, { amount: '0.03' }] }],
      },
    },
  }),
);
const h = await createHarness({ env: { PRICEPOINT_CONFIG: configPath } });
after(async () => {
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});

const documentAnswer = await h.app.inject({ url: '/api/v1/openapi.json' });
/** The document as served, shared parts by reference. */
const servedDoc = documentAnswer.json() as OpenApiDoc;
/** The same with shared answers and headers in place. */
const doc = resolveShared(servedDoc);
const operations = listOperations(doc);
const validate = schemaValidator(doc);
const isKeyed = (operation: OperationDoc) => (operation.security ?? doc.security ?? []).length > 0;

// Enterprise keys (200 a second): the table must not run into a limit it does not aim at.
const reader = (await h.createKey({ tier: 'enterprise', scopes: ['read'] })).key;
const writer = (await h.createKey({ tier: 'enterprise', scopes: ['write'] })).key;
const admin = (await h.createKey({ tier: 'enterprise', scopes: ['admin'] })).key;
const { examples, missingKeyExamples, send, get } = createExamples(h, doc, operations, {
  reader,
  writer,
  admin,
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

  test('names its licence and a server relative to where it was fetched from', () => {
    const full = JSON.parse(documentAnswer.body) as {
      info: { license?: { name: string; identifier?: string } };
      servers?: { url: string }[];
    };
    assert.deepEqual(full.info.license, { name: 'MIT', identifier: 'MIT' });
    assert.deepEqual(
      full.servers?.map((s) => s.url),
      ['/'],
    );
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
      [
        'GET /api/v1/openapi.json',
        'GET /healthz',
        'GET /metrics',
        'GET /readyz',
        'POST /api/v1/invitations/claim',
        'POST /api/v1/signup',
      ],
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

  test('every operation has a stable, unique camelCase operationId (the method names of generated clients)', () => {
    const ids = Object.fromEntries(operations.map((o) => [o.name, o.operation.operationId]));
    assert.deepEqual(ids, {
      'GET /api/v1/prices/today': 'getPricesToday',
      'GET /api/v1/prices/latest': 'getLatestPrices',
      'GET /api/v1/prices/{date}': 'getPricesForDate',
      'GET /api/v1/prices': 'getPriceRange',
      'GET /api/v1/prices/cheapest': 'getCheapestPrices',
      'GET /api/v1/prices/now': 'getPriceNow',
      'GET /api/v1/prices/cheapest-now': 'getCheapestNow',
      'GET /api/v1/prices/forecast': 'getPriceForecast',
      'GET /api/v1/series': 'listSeries',
      'GET /api/v1/series/{symbol}': 'getSeries',
      'GET /api/v1/tariffs': 'listTariffs',
      'PUT /api/v1/series/{symbol}': 'upsertSeries',
      'PUT /api/v1/series/{symbol}/prices': 'uploadPrices',
      'GET /api/v1/usage': 'getUsage',
      'GET /api/v1/usage/history': 'getUsageHistory',
      'GET /api/v1/keys/{id}/usage': 'getKeyUsage',
      'GET /api/v1/usage/overview': 'getUsageOverview',
      'POST /api/v1/key/rotate': 'rotateOwnKey',
      'GET /api/v1/events': 'streamEvents',
      'POST /api/v1/keys': 'createKey',
      'GET /api/v1/keys': 'listKeys',
      'GET /api/v1/keys/{id}': 'getKey',
      'DELETE /api/v1/keys/{id}': 'revokeKey',
      'POST /api/v1/keys/{id}/rotate': 'rotateKey',
      'PATCH /api/v1/keys/{id}': 'updateKey',
      'GET /api/v1/audit': 'listAudit',
      'POST /api/v1/console/sign-in': 'signInToConsole',
      'POST /api/v1/invitations': 'createInvitation',
      'GET /api/v1/invitations': 'listInvitations',
      'GET /api/v1/invitations/{id}': 'getInvitation',
      'DELETE /api/v1/invitations/{id}': 'revokeInvitation',
      'POST /api/v1/invitations/claim': 'claimInvitation',
      'POST /api/v1/signup': 'signUp',
      'POST /api/v1/webhooks': 'createWebhook',
      'GET /api/v1/webhooks': 'listWebhooks',
      'GET /api/v1/webhooks/{id}': 'getWebhook',
      'DELETE /api/v1/webhooks/{id}': 'deleteWebhook',
      'POST /api/v1/webhooks/{id}/enable': 'enableWebhook',
      'POST /api/v1/webhooks/{id}/disable': 'disableWebhook',
      'GET /api/v1/webhooks/{id}/deliveries': 'listWebhookDeliveries',
      'POST /api/v1/webhooks/{id}/deliveries/{eventId}/redeliver': 'redeliverWebhook',
      'GET /api/v1/sources': 'listSources',
      'GET /api/v1/sources/zones': 'listSourceZones',
      'POST /api/v1/sources/{name}/run': 'runSource',
      'GET /api/v1/openapi.json': 'getOpenApiDocument',
      'GET /healthz': 'getLiveness',
      'GET /readyz': 'getReadiness',
      'GET /metrics': 'getMetrics',
    });
    const all = Object.values(ids);
    assert.equal(new Set(all).size, all.length, 'no two operations share an operationId');
    for (const id of all) assert.match(String(id), /^[a-z][a-zA-Z]*$/, `${id} is camelCase`);
  });

  test('the problem body is one named schema under components/schemas, referenced by every error', () => {
    const schemas = (doc.components?.schemas ?? {}) as Record<
      string,
      { title?: string; properties?: object }
    >;
    const named = Object.entries(schemas).filter(([name]) => name === 'Problem');
    assert.equal(named.length, 1, 'one component is the problem body');
    const [name, problem] = named[0] ?? [];
    assert.deepEqual(
      (problem?.properties as { type?: object } | undefined)?.type,
      {
        type: 'string',
        format: 'uri-reference',
        description: 'A URI naming the kind of problem, relative to this server: /docs#problem-CODE.',
      },
      'the problem type is a relative URI, and says so',
    );
    const inline = operations.flatMap((o) =>
      Object.entries(o.operation.responses).flatMap(([status, r]) => {
        const media = r.content?.['application/problem+json'];
        if (media === undefined) return [];
        const ref = (media.schema as { $ref?: string } | undefined)?.$ref;
        return ref === `#/components/schemas/${name}` ? [] : [`${o.name} ${status}`];
      }),
    );
    assert.deepEqual(inline, [], 'these errors do not reference the problem schema');
    const copies = documentAnswer.body.split('"violated-policies"').length - 1;
    assert.equal(copies, 1, 'the problem schema is written once');
  });

  test('the day answer is one named schema, referenced by every day read', () => {
    const schemas = (doc.components?.schemas ?? {}) as Record<string, { title?: string }>;
    const name = Object.keys(schemas).find((key) => key === 'DayAnswer');
    assert.ok(name, 'a component is the day answer');
    const reads = ['today', 'latest', '{date}']
      .map((p) => `GET /api/v1/prices/${p}`)
      .concat('GET /api/v1/prices');
    for (const read of reads) {
      const json = operations.find((o) => o.name === read)?.operation.responses['200']?.content?.[
        'application/json'
      ];
      assert.deepEqual(json?.schema, { $ref: `#/components/schemas/${name}` }, `${read} references it`);
    }
  });

  test('a series of the catalogue is one named schema, referenced by both catalogue reads', () => {
    const schemas = (doc.components?.schemas ?? {}) as Record<string, { title?: string }>;
    const name = Object.keys(schemas).find((key) => key === 'SeriesInfo');
    assert.ok(name, 'a component is a series of the catalogue');
    const json = (read: string) =>
      operations.find((o) => o.name === read)?.operation.responses['200']?.content?.['application/json']
        ?.schema;
    const ref = { $ref: `#/components/schemas/${name}` };
    assert.deepEqual(json('GET /api/v1/series/{symbol}'), ref, 'one series references it');
    assert.deepEqual(
      (json('GET /api/v1/series') as { properties?: { series?: { items?: object } } }).properties?.series
        ?.items,
      ref,
      'each series of the catalogue references it',
    );
  });

  test('a key is one named schema, referenced by the key operations', () => {
    const schemas = (doc.components?.schemas ?? {}) as Record<string, { title?: string }>;
    const name = Object.keys(schemas).find((key) => key === 'KeyView');
    assert.ok(name, 'a component is a key');
    const ref = { $ref: `#/components/schemas/${name}` };
    const json = (operation: string, status: string) =>
      operations.find((o) => o.name === operation)?.operation.responses[status]?.content?.['application/json']
        ?.schema as { items?: object; properties?: { previous?: object } } | undefined;
    assert.deepEqual(json('GET /api/v1/keys/{id}', '200'), ref, 'a key references it');
    assert.deepEqual(json('DELETE /api/v1/keys/{id}', '200'), ref, 'a revoked key references it');
    assert.deepEqual(json('GET /api/v1/keys', '200')?.items, ref, 'each listed key references it');
    assert.deepEqual(
      json('POST /api/v1/keys/{id}/rotate', '201')?.properties?.previous,
      ref,
      'the old key too',
    );
  });

  test('shared headers and error answers are described once under components and referenced', () => {
    const components = servedDoc.components as { headers?: object; responses?: Record<string, unknown> };
    assert.ok(Object.keys(components.headers ?? {}).length >= 10, 'headers under components/headers');
    for (const name of ['BadRequest', 'Unauthorized', 'TooManyRequests', 'ServiceUnavailableUncounted']) {
      assert.ok(components.responses?.[name], `${name} under components/responses`);
    }
    for (const o of listOperations(servedDoc)) {
      for (const [status, response] of Object.entries(o.operation.responses)) {
        const inline = response as ResponseDoc & { $ref?: string };
        if (inline.$ref !== undefined) continue;
        assert.ok(
          !inline.content?.['application/problem+json'],
          `${o.name} ${status}: a problem answer by $ref`,
        );
        for (const [name, header] of Object.entries(inline.headers ?? {})) {
          assert.ok('$ref' in header, `${o.name} ${status}: header ${name} by $ref`);
        }
      }
    }
    // Each problem answer is written once, however many operations give it.
    const problemAnswers = documentAnswer.body.split('"application/problem+json"').length - 1;
    assert.equal(problemAnswers, Object.keys(components.responses ?? {}).length);
  });

  test('every operation documents a 4xx answer', () => {
    for (const o of operations) {
      const statuses = Object.keys(o.operation.responses);
      assert.ok(
        statuses.some((status) => status.startsWith('4')),
        `${o.name}: ${statuses.join(', ')}`,
      );
    }
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

describe('the price upload body is typed per media type', () => {
  const upload = operations.find((o) => o.name === 'PUT /api/v1/series/{symbol}/prices')?.operation;
  const content = upload?.requestBody?.content ?? {};
  const put = (contentType: string, payload: string) =>
    send('PUT', '/api/v1/series/NO1/prices', writer, { headers: { 'content-type': contentType }, payload });

  test('application/json is the JSON document itself, in every shape the server takes', async () => {
    const schema = content['application/json']?.schema;
    assert.ok(schema, 'application/json has a schema');
    const read = await get('/api/v1/prices/2026-11-22?symbols=NO1', reader);
    assert.equal(read.statusCode, 200, read.body);
    const point = { start: '2026-11-22T00:15:00+01:00', price: 40.1 };
    const documents = [[point], { prices: [point] }, read.json(), point];
    for (const value of documents) {
      assert.equal(validate(schema, value), undefined, `documented: ${JSON.stringify(value).slice(0, 80)}`);
      const answer = await put('application/json', JSON.stringify(value));
      assert.equal(answer.statusCode, 200, `taken: ${answer.body}`);
    }
    // What a generated client sends when the body is typed as a string: a JSON string, refused.
    assert.notEqual(validate(schema, JSON.stringify([point])), undefined, 'a JSON string is no upload');
    assert.notEqual(validate(schema, [{ ...point, when: 'now' }]), undefined, 'an unknown field is no point');
  });

  test('JSON Lines and CSV are text, each with an example the server takes', async () => {
    for (const media of ['application/x-ndjson', 'application/jsonl', 'text/csv']) {
      const schema = content[media]?.schema;
      assert.equal(schema?.type, 'string', `${media} is text`);
      const example = content[media]?.example;
      assert.equal(typeof example, 'string', `${media} has an example`);
      const answer = await put(media, String(example));
      assert.equal(answer.statusCode, 200, `${media}: ${answer.body}`);
    }
  });
});
