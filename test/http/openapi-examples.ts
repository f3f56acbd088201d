/**
 * Example requests for every operation of the OpenAPI document, successes and errors, each with the
 * status it must answer. openapi.test.ts sends them and checks each answer against the document.
 */
import assert from 'node:assert/strict';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Harness } from '../helpers/harness.js';
import type { OpenApiDoc, Operation, OperationDoc } from './openapi-document.js';

export interface Example {
  readonly operation: string;
  readonly name: string;
  readonly status: number;
  readonly send: () => Promise<LightMyRequestResponse>;
}

/** The keys the examples use: enterprise (200 a second), so no limit is met by accident. */
export interface ExampleKeys {
  readonly reader: string;
  readonly writer: string;
  readonly admin: string;
}

export function createExamples(h: Harness, doc: OpenApiDoc, operations: Operation[], keys: ExampleKeys) {
  const { reader, writer, admin } = keys;
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

  const WEBHOOK =
    '{"url":"https://hooks.example.com/pricepoint","events":["day.published"],"symbols":["NO1"]}';
  const createWebhook = () =>
    send('POST', '/api/v1/webhooks', admin, {
      headers: { 'content-type': 'application/json' },
      payload: WEBHOOK,
    });
  async function webhookId(): Promise<string> {
    const created = await createWebhook();
    assert.equal(created.statusCode, 201, created.body);
    return (created.json() as { id: string }).id;
  }

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
      ex(operation, 400, 'a resolution that does not exist', () =>
        get(`${url}${join}resolution=PT7M`, reader),
      ),
      ex(operation, 400, 'a time zone that does not exist', () =>
        get(`${url}${join}tz=Mars/Olympus`, reader),
      ),
      ex(operation, 401, 'an unknown key', () => get(url, BAD_KEY)),
      ex(operation, 401, 'a key in the query string', () => get(`${url}${join}api_key=${reader}`)),
      ex(operation, 406, 'Accept: image/png', () => get(url, reader, { accept: 'image/png' })),
      ex(operation, 429, 'the limit of the tier is used up', () =>
        overLimit(['read'], (key) => get(url, key)),
      ),
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

  /** The examples every device answer shares (docs/integrations.md): `url` names one series. */
  function deviceExamples(operation: string, url: string): Example[] {
    return [
      ex(operation, 200, 'JSON', () => get(url, reader)),
      ex(operation, 200, 'JSON with the key as a bearer token', () =>
        get(url, undefined, { authorization: `Bearer ${reader}` }),
      ),
      ex(operation, 200, 'under a tariff', () => get(`${url}&tariff=household`, reader)),
      ex(operation, 200, 'the demo key', () => get(url, h.demoKey)),
      ex(operation, 304, 'If-None-Match with the current ETag', () => notModified(url, reader)),
      ex(operation, 400, 'an unknown parameter', () => get(`${url}&colour=red`, reader)),
      ex(operation, 400, 'two series', () => get(`${url},DE-LU`, reader)),
      ex(operation, 401, 'an unknown key', () => get(url, BAD_KEY)),
      ex(operation, 401, 'a key in the query string', () => get(`${url}&api_key=${reader}`)),
      ex(operation, 404, 'an unknown series', () => get(url.replace('NO1', 'NOPE'), reader)),
      ex(operation, 406, 'Accept: image/png', () => get(url, reader, { accept: 'image/png' })),
      ex(operation, 429, 'the limit of the tier is used up', () =>
        overLimit(['read'], (key) => get(url, key)),
      ),
    ];
  }

  /** A day example, and the conversions the price endpoints take (docs/data-model.md). */
  function priceExamples(operation: string, url: string): Example[] {
    const join = url.includes('?') ? '&' : '?';
    return [
      ...dayExamples(operation, url),
      ex(operation, 200, 'in USD per kWh', () =>
        get(`${url}${join}symbols=NO1,DE-LU&currency=USD&unit=kWh`, reader),
      ),
      ex(operation, 200, 'in USD per kWh, as CSV', () =>
        get(`${url}${join}symbols=NO1&currency=USD&unit=kWh&format=csv`, reader),
      ),
      ex(operation, 400, 'unit on an FX series', () => get(`${url}${join}symbols=EURUSD&unit=kWh`, reader)),
      ex(operation, 400, 'a currency no FX series converts into', () =>
        get(`${url}${join}symbols=NO1&currency=SEK`, reader),
      ),
      // Ranks are of whole days: latest refuses include=rank.
      ...(url.endsWith('/latest')
        ? [
            ex(operation, 200, 'under a tariff', () =>
              get(`${url}${join}symbols=NO1&tariff=household`, reader),
            ),
            ex(operation, 400, 'include=rank', () => get(`${url}${join}symbols=NO1&include=rank`, reader)),
          ]
        : [
            ex(operation, 200, 'under a tariff, ranked', () =>
              get(`${url}${join}symbols=NO1&tariff=household&include=rank`, reader),
            ),
            ex(operation, 200, 'under a tariff, ranked, as CSV', () =>
              get(`${url}${join}symbols=NO1&tariff=household&include=provenance,rank&format=csv`, reader),
            ),
          ]),
      ex(operation, 400, 'a tariff the server does not have', () =>
        get(`${url}${join}symbols=NO1&tariff=nope`, reader),
      ),
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
    ...priceExamples('GET /api/v1/prices/today', '/api/v1/prices/today'),
    ...priceExamples('GET /api/v1/prices/{date}', '/api/v1/prices/2026-11-20'),
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
    ...priceExamples('GET /api/v1/prices', '/api/v1/prices?from=2026-11-20&to=2026-11-22'),
    ex('GET /api/v1/prices', 403, 'days before the tier history', () =>
      get('/api/v1/prices?from=2026-09-01&to=2026-09-02', h.demoKey),
    ),
    ex('GET /api/v1/prices', 400, 'to is missing', () => get('/api/v1/prices?from=2026-11-20', reader)),
    ex('GET /api/v1/prices', 400, 'more than 366 days', () =>
      get('/api/v1/prices?from=2024-01-01&to=2026-11-22', reader),
    ),
    ...priceExamples('GET /api/v1/prices/latest', '/api/v1/prices/latest'),
    ...readExamples(
      'GET /api/v1/prices/cheapest',
      '/api/v1/prices/cheapest?symbols=NO1&duration=PT3H&from=today&to=tomorrow',
    ),
    ex('GET /api/v1/prices/cheapest', 200, 'the 4 cheapest intervals, in USD per kWh', () =>
      get(
        '/api/v1/prices/cheapest?symbols=NO1,DE-LU&contiguous=false&count=4&from=today&to=today&currency=USD&unit=kWh',
        reader,
      ),
    ),
    ex('GET /api/v1/prices/cheapest', 200, 'between two instants, across the repeated autumn hour', () =>
      get(
        '/api/v1/prices/cheapest?symbols=NO1&duration=PT3H&from=2026-10-24T22:00:00%2B02:00&to=2026-10-25T06:00:00%2B01:00',
        reader,
      ),
    ),
    ex('GET /api/v1/prices/cheapest', 400, 'a duration that is no whole number of intervals', () =>
      get('/api/v1/prices/cheapest?symbols=NO1&duration=PT20M&from=today&to=today', reader),
    ),
    ex('GET /api/v1/prices/cheapest', 403, 'days before the tier history', () =>
      get('/api/v1/prices/cheapest?symbols=NO1&duration=PT3H&from=2026-09-01&to=2026-09-02', h.demoKey),
    ),
    ex('GET /api/v1/prices/cheapest', 404, 'an unknown series', () =>
      get('/api/v1/prices/cheapest?symbols=NO1,NOPE&duration=PT3H&from=today&to=today', reader),
    ),

    // The device answers (docs/integrations.md).
    ...deviceExamples('GET /api/v1/prices/now', '/api/v1/prices/now?symbols=NO1'),
    ex('GET /api/v1/prices/now', 200, 'the number alone, per kWh', () =>
      get('/api/v1/prices/now?symbols=NO1&unit=kWh&format=text', reader),
    ),
    ex('GET /api/v1/prices/now', 200, 'the number alone by Accept', () =>
      get('/api/v1/prices/now?symbols=NO1', reader, { accept: 'text/plain' }),
    ),
    ...deviceExamples('GET /api/v1/prices/cheapest-now', '/api/v1/prices/cheapest-now?symbols=NO1&hours=4'),
    ex('GET /api/v1/prices/cheapest-now', 200, '1 or 0', () =>
      get('/api/v1/prices/cheapest-now?symbols=NO1&hours=4&format=text', reader),
    ),
    ex('GET /api/v1/prices/cheapest-now', 400, 'hours missing', () =>
      get('/api/v1/prices/cheapest-now?symbols=NO1', reader),
    ),
    ex('GET /api/v1/prices/cheapest-now', 400, 'more than 24 hours', () =>
      get('/api/v1/prices/cheapest-now?symbols=NO1&hours=25', reader),
    ),
    ...deviceExamples('GET /api/v1/prices/forecast', '/api/v1/prices/forecast?symbols=NO1'),
    ex('GET /api/v1/prices/forecast', 200, "evcc's list, per kWh", () =>
      get('/api/v1/prices/forecast?symbols=NO1&format=evcc', reader),
    ),
    ex('GET /api/v1/prices/forecast', 200, 'half hours, for EMHASS', () =>
      get('/api/v1/prices/forecast?symbols=NO1&resolution=PT30M&tariff=household', reader),
    ),
    ex('GET /api/v1/prices/forecast', 400, 'evcc per MWh', () =>
      get('/api/v1/prices/forecast?symbols=NO1&format=evcc&unit=MWh', reader),
    ),

    // The catalogue.
    ...dayExamples('GET /api/v1/series', '/api/v1/series'),
    ...readExamples('GET /api/v1/series/{symbol}', '/api/v1/series/NO1'),
    ex('GET /api/v1/series/{symbol}', 200, 'any letter case', () => get('/api/v1/series/no1', reader)),

    // The tariffs.
    ex('GET /api/v1/tariffs', 200, 'JSON', () => get('/api/v1/tariffs', reader)),
    ex('GET /api/v1/tariffs', 304, 'If-None-Match with the current ETag', () =>
      notModified('/api/v1/tariffs', reader),
    ),
    ex('GET /api/v1/tariffs', 400, 'an unknown parameter', () => get('/api/v1/tariffs?colour=red', reader)),
    ex('GET /api/v1/tariffs', 401, 'an unknown key', () => get('/api/v1/tariffs', BAD_KEY)),
    ex('GET /api/v1/tariffs', 429, 'the limit of the tier is used up', () =>
      overLimit(['read'], (key) => get('/api/v1/tariffs', key)),
    ),
    ex('GET /api/v1/series/{symbol}', 404, 'an unknown series', () => get('/api/v1/series/NOPE', reader)),
    ex('GET /api/v1/series/{symbol}', 404, 'not a symbol at all', () =>
      get('/api/v1/series/no%20pe', reader),
    ),

    // Usage: keyed, not counted.
    ex('GET /api/v1/usage', 200, 'the demo key', () => get('/api/v1/usage', h.demoKey)),
    ex('GET /api/v1/usage', 400, 'an unknown parameter', () => get('/api/v1/usage?colour=red', reader)),
    ex('GET /api/v1/usage', 401, 'an unknown key', () => get('/api/v1/usage', BAD_KEY)),
    ex('GET /api/v1/usage', 429, 'too many failed authentications from one address', () =>
      authFailures((remoteAddress) => send('GET', '/api/v1/usage', BAD_KEY, { remoteAddress })),
    ),

    // Usage history: counted like a read.
    ex('GET /api/v1/usage/history', 200, 'hours of today, JSON', () =>
      get('/api/v1/usage/history?from=today&to=today', reader),
    ),
    ex('GET /api/v1/usage/history', 200, 'days as CSV', () =>
      get('/api/v1/usage/history?granularity=P1D&format=csv', reader),
    ),
    ex('GET /api/v1/usage/history', 400, 'to before from', () =>
      get('/api/v1/usage/history?from=today&to=yesterday', reader),
    ),
    ex('GET /api/v1/usage/history', 401, 'an unknown key', () => get('/api/v1/usage/history', BAD_KEY)),
    ex('GET /api/v1/usage/history', 406, 'Accept: application/xml', () =>
      get('/api/v1/usage/history', reader, { accept: 'application/xml' }),
    ),
    ex('GET /api/v1/usage/history', 429, 'the limit of the tier is used up', () =>
      overLimit(['read'], (key) => get('/api/v1/usage/history', key)),
    ),
    ex('GET /api/v1/keys/{id}/usage', 200, "a key's days", async () => {
      const { id } = await h.createKey();
      return get(`/api/v1/keys/${id}/usage?granularity=P1D&tz=Europe/Oslo`, admin);
    }),
    ex('GET /api/v1/keys/{id}/usage', 400, 'over 744 hours', async () => {
      const { id } = await h.createKey();
      return get(`/api/v1/keys/${id}/usage?from=2026-01-01&to=2026-03-01`, admin);
    }),
    ex('GET /api/v1/keys/{id}/usage', 403, 'a key without the admin scope', () =>
      get('/api/v1/keys/nope/usage', reader),
    ),
    ex('GET /api/v1/keys/{id}/usage', 404, 'an unknown id', () => get('/api/v1/keys/nope/usage', admin)),
    ex('GET /api/v1/usage/overview', 200, 'every tier by hour, JSON', () =>
      get('/api/v1/usage/overview', admin),
    ),
    ex('GET /api/v1/usage/overview', 200, 'days as CSV', () =>
      get('/api/v1/usage/overview?granularity=P1D&format=csv', admin),
    ),
    ex('GET /api/v1/usage/overview', 400, 'over 744 hours', () =>
      get('/api/v1/usage/overview?from=2026-01-01&to=2026-03-01', admin),
    ),
    ex('GET /api/v1/usage/overview', 403, 'a key without the admin scope', () =>
      get('/api/v1/usage/overview', reader),
    ),

    // Event stream (a 200 never ends: test/events/event-stream.test.ts reads real streams).
    ex('GET /api/v1/events', 400, 'an unknown parameter', () => get('/api/v1/events?colour=red', reader)),
    ex('GET /api/v1/events', 401, 'an unknown key', () => get('/api/v1/events', BAD_KEY)),
    ex('GET /api/v1/events', 404, 'an unknown series', () => get('/api/v1/events?symbols=NOPE', reader)),

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
    ex('POST /api/v1/console/sign-in', 200, 'an admin key', () =>
      send('POST', '/api/v1/console/sign-in', admin),
    ),
    ex('POST /api/v1/console/sign-in', 400, 'an unknown body field', () =>
      send('POST', '/api/v1/console/sign-in', admin, { headers: jsonHeaders, payload: '{"remember":true}' }),
    ),
    ex('POST /api/v1/console/sign-in', 401, 'an unknown key', () =>
      send('POST', '/api/v1/console/sign-in', BAD_KEY),
    ),
    ex('POST /api/v1/console/sign-in', 403, 'a key without the admin scope', () =>
      send('POST', '/api/v1/console/sign-in', reader),
    ),
    // A key rotating itself: the development data set lets pro keys.
    ex('POST /api/v1/key/rotate', 201, 'a pro key, without a body', async () => {
      const { key } = await h.createKey({ tier: 'pro' });
      return send('POST', '/api/v1/key/rotate', key);
    }),
    ex('POST /api/v1/key/rotate', 201, 'with a grace period', async () => {
      const { key } = await h.createKey({ tier: 'pro' });
      return send('POST', '/api/v1/key/rotate', key, {
        headers: jsonHeaders,
        payload: '{"graceSeconds":60}',
      });
    }),
    ex('POST /api/v1/key/rotate', 400, 'a negative grace period', async () => {
      const { key } = await h.createKey({ tier: 'pro' });
      return send('POST', '/api/v1/key/rotate', key, {
        headers: jsonHeaders,
        payload: '{"graceSeconds":-1}',
      });
    }),
    ex('POST /api/v1/key/rotate', 403, 'a tier that does not allow it', async () => {
      const { key } = await h.createKey({ tier: 'free' });
      return send('POST', '/api/v1/key/rotate', key);
    }),
    ex('POST /api/v1/key/rotate', 415, 'an XML body', () =>
      send('POST', '/api/v1/key/rotate', reader, {
        headers: { 'content-type': 'application/xml' },
        payload: '<rotate/>',
      }),
    ),
    ex('PATCH /api/v1/keys/{id}', 200, 'own limits, an allow-list and owner fields', async () => {
      const { id } = await h.createKey();
      return send('PATCH', `/api/v1/keys/${id}`, admin, {
        headers: jsonHeaders,
        payload: JSON.stringify({
          limits: [{ name: 'minute', limit: 600, windowSeconds: 60 }],
          allowedAddresses: ['192.0.2.0/24'],
          customerRef: 'C-42',
          contact: 'ops@example.com',
          expiresAt: '2030-01-01T00:00:00Z',
        }),
      });
    }),
    ex('PATCH /api/v1/keys/{id}', 400, 'a CIDR that is none', async () => {
      const { id } = await h.createKey();
      return send('PATCH', `/api/v1/keys/${id}`, admin, {
        headers: jsonHeaders,
        payload: '{"allowedAddresses":["300.1.2.3/8"]}',
      });
    }),
    ex('PATCH /api/v1/keys/{id}', 403, 'a key without the admin scope', () =>
      send('PATCH', '/api/v1/keys/nope', writer, { headers: jsonHeaders, payload: '{"contact":null}' }),
    ),
    ex('PATCH /api/v1/keys/{id}', 404, 'an unknown id', () =>
      send('PATCH', '/api/v1/keys/nope', admin, { headers: jsonHeaders, payload: '{"contact":null}' }),
    ),
    ex('PATCH /api/v1/keys/{id}', 415, 'an XML body', () =>
      send('PATCH', '/api/v1/keys/nope', admin, {
        headers: { 'content-type': 'application/xml' },
        payload: '<key/>',
      }),
    ),
    ex('GET /api/v1/audit', 200, 'the newest entries', () => get('/api/v1/audit?limit=5', admin)),
    ex('GET /api/v1/audit', 200, 'key creations since a day', () =>
      get('/api/v1/audit?action=keys.create&from=2026-11-01', admin),
    ),
    ex('GET /api/v1/audit', 400, 'a limit out of range', () => get('/api/v1/audit?limit=0', admin)),
    ex('GET /api/v1/audit', 403, 'a key without the admin scope', () => get('/api/v1/audit', writer)),
    ex('GET /api/v1/audit', 401, 'an unknown key', () => get('/api/v1/audit', BAD_KEY)),

    // Webhooks: test/webhooks/ delivers to real receivers; here only the admin answers.
    // Invitations, claims and sign-up (open sign-up is off on this server).
    ex('POST /api/v1/invitations', 201, 'a new invitation', () =>
      send('POST', '/api/v1/invitations', admin, {
        headers: jsonHeaders,
        payload: JSON.stringify({
          tier: 'free',
          uses: 2,
          note: 'Acme',
          keyExpiresAt: '2030-01-01T00:00:00Z',
        }),
      }),
    ),
    ex('POST /api/v1/invitations', 400, 'an unknown tier and no uses', () =>
      send('POST', '/api/v1/invitations', admin, {
        headers: jsonHeaders,
        payload: '{"tier":"gold","uses":0}',
      }),
    ),
    ex('POST /api/v1/invitations', 403, 'a key without the admin scope', () =>
      send('POST', '/api/v1/invitations', writer, { headers: jsonHeaders, payload: '{"tier":"free"}' }),
    ),
    ex('POST /api/v1/invitations', 415, 'an XML body', () =>
      send('POST', '/api/v1/invitations', admin, {
        headers: { 'content-type': 'application/xml' },
        payload: '<x/>',
      }),
    ),
    ex('GET /api/v1/invitations', 200, 'every invitation', () => get('/api/v1/invitations', admin)),
    ex('GET /api/v1/invitations', 401, 'no key', () => get('/api/v1/invitations')),
    ex('GET /api/v1/invitations/{id}', 200, 'one invitation', async () => {
      const { record } = await h.services.invitations.create({ tier: 'free' });
      return get(`/api/v1/invitations/${record.id}`, admin);
    }),
    ex('GET /api/v1/invitations/{id}', 404, 'an unknown id', () =>
      get('/api/v1/invitations/inv_nope', admin),
    ),
    ex('DELETE /api/v1/invitations/{id}', 204, 'revoked', async () => {
      const { record } = await h.services.invitations.create({ tier: 'free' });
      return send('DELETE', `/api/v1/invitations/${record.id}`, admin);
    }),
    ex('DELETE /api/v1/invitations/{id}', 404, 'an unknown id', () =>
      send('DELETE', '/api/v1/invitations/inv_nope', admin),
    ),
    ex('POST /api/v1/invitations/claim', 201, 'a key claimed', async () => {
      const { token } = await h.services.invitations.create({ tier: 'free' });
      return send('POST', '/api/v1/invitations/claim', undefined, {
        headers: jsonHeaders,
        payload: JSON.stringify({ token, name: 'dashboard' }),
        remoteAddress: freshAddress(),
      });
    }),
    ex('POST /api/v1/invitations/claim', 400, 'no name', () =>
      send('POST', '/api/v1/invitations/claim', undefined, {
        headers: jsonHeaders,
        payload: '{"token":"ppi_x"}',
        remoteAddress: freshAddress(),
      }),
    ),
    ex('POST /api/v1/invitations/claim', 404, 'an unknown token', () =>
      send('POST', '/api/v1/invitations/claim', undefined, {
        headers: jsonHeaders,
        payload: `{"token":"ppi_${'A'.repeat(32)}","name":"guess"}`,
        remoteAddress: freshAddress(),
      }),
    ),
    ex('POST /api/v1/invitations/claim', 410, 'a revoked invitation', async () => {
      const { token, record } = await h.services.invitations.create({ tier: 'free' });
      await h.services.invitations.revoke(record.id);
      return send('POST', '/api/v1/invitations/claim', undefined, {
        headers: jsonHeaders,
        payload: JSON.stringify({ token, name: 'late' }),
        remoteAddress: freshAddress(),
      });
    }),
    ex(
      'POST /api/v1/invitations/claim',
      429,
      'the failed-login budget of the address is used up',
      async () => {
        const remoteAddress = freshAddress();
        const guess = () =>
          send('POST', '/api/v1/invitations/claim', undefined, {
            headers: jsonHeaders,
            payload: `{"token":"ppi_${'C'.repeat(32)}","name":"guess"}`,
            remoteAddress,
          });
        for (let n = 0; n < h.config.authFailuresPerMinute; n++) await guess();
        return guess();
      },
    ),
    ex('POST /api/v1/signup', 403, 'open sign-up is off', () =>
      send('POST', '/api/v1/signup', undefined, { headers: jsonHeaders, payload: '{"name":"me"}' }),
    ),
    ex('POST /api/v1/signup', 400, 'no name', () =>
      send('POST', '/api/v1/signup', undefined, { headers: jsonHeaders, payload: '{}' }),
    ),
    ex('POST /api/v1/webhooks', 201, 'registered', () => createWebhook()),
    ex('POST /api/v1/webhooks', 400, 'a URL to a private address', () =>
      send('POST', '/api/v1/webhooks', admin, {
        headers: jsonHeaders,
        payload: '{"url":"https://169.254.169.254/","events":["day.published"]}',
      }),
    ),
    ex('POST /api/v1/webhooks', 403, 'a key without the admin scope', () =>
      send('POST', '/api/v1/webhooks', writer, { headers: jsonHeaders, payload: WEBHOOK }),
    ),
    ex('GET /api/v1/webhooks', 200, 'every endpoint', () => get('/api/v1/webhooks', admin)),
    ex('GET /api/v1/webhooks/{id}', 200, 'one endpoint', async () =>
      get(`/api/v1/webhooks/${await webhookId()}`, admin),
    ),
    ex('GET /api/v1/webhooks/{id}', 404, 'an unknown id', () => get('/api/v1/webhooks/nope', admin)),
    ex('DELETE /api/v1/webhooks/{id}', 200, 'removed', async () =>
      send('DELETE', `/api/v1/webhooks/${await webhookId()}`, admin),
    ),
    ex('DELETE /api/v1/webhooks/{id}', 404, 'an unknown id', () =>
      send('DELETE', '/api/v1/webhooks/nope', admin),
    ),
    ex('POST /api/v1/webhooks/{id}/enable', 200, 'enabled', async () =>
      send('POST', `/api/v1/webhooks/${await webhookId()}/enable`, admin),
    ),
    ex('POST /api/v1/webhooks/{id}/disable', 200, 'disabled', async () =>
      send('POST', `/api/v1/webhooks/${await webhookId()}/disable`, admin),
    ),
    ex('POST /api/v1/webhooks/{id}/disable', 404, 'an unknown id', () =>
      send('POST', '/api/v1/webhooks/nope/disable', admin),
    ),
    ex('GET /api/v1/webhooks/{id}/deliveries', 200, 'the delivery log', async () =>
      get(`/api/v1/webhooks/${await webhookId()}/deliveries`, admin),
    ),
    ex('GET /api/v1/webhooks/{id}/deliveries', 404, 'an unknown id', () =>
      get('/api/v1/webhooks/nope/deliveries', admin),
    ),
    ex('POST /api/v1/webhooks/{id}/deliveries/{eventId}/redeliver', 404, 'no such delivery', async () =>
      send('POST', `/api/v1/webhooks/${await webhookId()}/deliveries/evt_0/redeliver`, admin),
    ),

    // Sources: the harness configures none (test/sources/source-routes.test.ts runs one).
    ex('GET /api/v1/sources', 200, 'the sources', () => get('/api/v1/sources', admin)),
    ex('GET /api/v1/sources', 403, 'a key without the admin scope', () => get('/api/v1/sources', reader)),
    ex('GET /api/v1/sources/zones', 200, 'every type, a zone by an alias', () =>
      get('/api/v1/sources/zones?all=true&q=Oslo', admin),
    ),
    ex('GET /api/v1/sources/zones', 400, 'a parameter it does not take', () =>
      get('/api/v1/sources/zones?zone=NO1', admin),
    ),
    ex('GET /api/v1/sources/zones', 403, 'a key without the admin scope', () =>
      get('/api/v1/sources/zones', reader),
    ),
    ex('POST /api/v1/sources/{name}/run', 404, 'no source of that name', () =>
      send('POST', '/api/v1/sources/nothing/run', admin),
    ),
    ex('POST /api/v1/sources/{name}/run', 400, 'from without to', () =>
      send('POST', '/api/v1/sources/nothing/run?from=2026-01-01', admin),
    ),
    ex('POST /api/v1/sources/{name}/run', 403, 'a key without the admin scope', () =>
      send('POST', '/api/v1/sources/nothing/run', writer),
    ),

    // Series metadata.
    ex('PUT /api/v1/series/{symbol}', 201, 'created', () =>
      send('PUT', `/api/v1/series/${newSymbol()}`, admin, { headers: jsonHeaders, payload: seriesBody }),
    ),
    ex('PUT /api/v1/series/{symbol}', 200, 'updated', () =>
      send('PUT', '/api/v1/series/NO1', admin, {
        headers: jsonHeaders,
        payload: '{"name":"Oslo day-ahead"}',
      }),
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

  return { examples, missingKeyExamples, send, get };
}
