/**
 * The first hour with Pricepoint: what a newcomer meets before reading the docs. The bare paths
 * point to the docs, a plain `http://` request to the HTTPS port says to use https, and the small
 * rough edges of parameters, errors and answers are gone.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';

/** Sends `text` over plain TCP and returns everything the server wrote before closing. */
function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });
}

describe('the first hour', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness();
  });
  after(() => h.close());

  for (const path of ['/', '/api', '/api/', '/api/v1', '/api/v1/']) {
    test(`GET ${path} without a key points to /docs and the OpenAPI document`, async () => {
      const response = await h.app.inject({ url: path });
      assert.equal(response.statusCode, 200, response.body);
      assert.match(String(response.headers['content-type']), /^application\/json/);
      const body = response.json() as { links: Record<string, string>; detail: string };
      assert.equal(body.links.docs, '/docs');
      assert.equal(body.links.openapi, '/api/v1/openapi.json');
      assert.match(body.detail, /\/docs/);
      assert.match(String(response.headers.link), /<\/docs>; rel="service-doc"/);
      // The links lead somewhere real.
      assert.equal((await h.app.inject({ url: body.links.openapi })).statusCode, 200);
      assert.notEqual((await h.app.inject({ url: body.links.docs })).statusCode, 404);
    });
  }

  test("a browser's /favicon.ico gets the docs page's mark, not a 404", async () => {
    const response = await h.app.inject({ url: '/favicon.ico' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^image\/svg\+xml/);
    assert.match(response.body, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  });

  test('a 415 names the media types the endpoint takes', async () => {
    const admin = (await h.createKey({ scopes: ['admin'] })).key;
    const writer = (await h.createKey({ scopes: ['write'] })).key;
    const keys = await h.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: { 'x-api-key': admin, 'content-type': 'application/xml' },
      payload: '<key/>',
    });
    assert.equal(keys.statusCode, 415, keys.body);
    assert.match(String(keys.json().detail), /Send the body as application\/json\b/);
    const prices = await h.app.inject({
      method: 'PUT',
      url: '/api/v1/series/EURUSD/prices',
      headers: { 'x-api-key': writer, 'content-type': 'text/plain' },
      payload: 'x',
    });
    assert.equal(prices.statusCode, 415, prices.body);
    assert.match(String(prices.json().detail), /application\/json.*text\/csv/);
  });

  test('a repeated parameter is refused with a 400 that says to separate values with commas', async () => {
    for (const query of ['symbols=NO1&symbols=DE-LU', 'tz=Europe/Oslo&tz=UTC', 'format=json&format=csv']) {
      const response = await h.app.inject({
        url: `/api/v1/prices/today?${query}`,
        headers: { 'x-api-key': h.demoKey },
      });
      assert.equal(response.statusCode, 400, `${query}: ${response.body}`);
      const body = response.json() as { detail: string; parameter: string };
      assert.equal(body.parameter, query.split('=')[0]);
      assert.match(body.detail, /more than once.*commas/);
    }
    const merged = await h.app.inject({
      url: '/api/v1/prices/today?symbols=NO1,DE-LU',
      headers: { 'x-api-key': h.demoKey },
    });
    assert.equal(merged.statusCode, 200, merged.body);
  });

  test('enumerated values are read in any letter case, as tz and symbols are', async () => {
    const read = (query: string) =>
      h.app.inject({ url: `/api/v1/series/NO1?${query}`, headers: { 'x-api-key': h.demoKey } });
    const csv = await read('format=CSV&resolution=pt1h&tz=europe/oslo');
    assert.equal(csv.statusCode, 200, csv.body);
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    assert.equal(csv.body, (await read('format=csv&resolution=PT1H&tz=Europe/Oslo')).body);
    const json = await read('format=Json&resolution=p1d');
    assert.equal(json.statusCode, 200, json.body);
    assert.match(json.body, /"resolution":"P1D"/);
    const bad = await read('format=xml');
    assert.equal(bad.statusCode, 400);
    assert.match(String(bad.json().detail), /must be one of json, csv/);
  });

  test('POST /api/v1/keys names every bad field at once, and creates nothing', async () => {
    const admin = (await h.createKey({ scopes: ['admin'] })).key;
    const count = async () =>
      ((await h.app.inject({ url: '/api/v1/keys', headers: { 'x-api-key': admin } })).json() as unknown[])
        .length;
    const before = await count();
    const response = await h.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: { 'x-api-key': admin },
      payload: { name: '', tier: 'gold', scopes: ['read', 'root'], expiresAt: 'next week' },
    });
    assert.equal(response.statusCode, 400, response.body);
    const problem = response.json() as { parameter: string; errors: { field: string; detail: string }[] };
    assert.deepEqual(
      problem.errors.map((e) => e.field),
      ['name', 'tier', 'scopes', 'expiresAt'],
    );
    assert.equal(problem.parameter, 'name');
    for (const error of problem.errors) assert.ok(error.detail.length > 0);
    const missing = await h.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: { 'x-api-key': admin },
      payload: {},
    });
    assert.deepEqual(
      (missing.json() as { errors: { field: string }[] }).errors.map((e) => e.field),
      ['name', 'tier'],
    );
    assert.equal(await count(), before);
  });

  test('CSV answers carry Content-Disposition with a file name that says what they hold', async () => {
    const cases: [string, string][] = [
      ['/api/v1/prices/today?format=csv', 'prices-2026-11-22.csv'],
      ['/api/v1/prices/2026-11-20?format=csv&symbols=NO1', 'prices-2026-11-20.csv'],
      ['/api/v1/prices?from=2026-11-18&to=2026-11-21&format=csv', 'prices-2026-11-18_2026-11-21.csv'],
      ['/api/v1/series?format=csv', 'series.csv'],
      ['/api/v1/series/no1?format=csv', 'series-NO1.csv'],
    ];
    for (const [url, name] of cases) {
      const response = await h.app.inject({ url, headers: { 'x-api-key': h.demoKey } });
      assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
      assert.equal(response.headers['content-disposition'], `attachment; filename="${name}"`, url);
    }
    const fromPage = await h.app.inject({
      url: '/api/v1/prices/today?format=csv',
      headers: { 'x-api-key': h.demoKey, origin: 'https://dashboard.example' },
    });
    assert.match(
      String(fromPage.headers['access-control-expose-headers']),
      /\bcontent-disposition\b/,
      'a page that fetched it may read the file name',
    );
    const json = await h.app.inject({ url: '/api/v1/prices/today', headers: { 'x-api-key': h.demoKey } });
    assert.equal(json.headers['content-disposition'], undefined, 'JSON is shown, not saved');
  });

  test("a problem's type leads to the reference page this server serves", async () => {
    const url = '/api/v1/prices/today?symbols=NOPE';
    const response = await h.app.inject({ url, headers: { 'x-api-key': h.demoKey } });
    const body = response.json() as { type: string; code: string };
    assert.equal(body.type, `/docs#problem-${body.code}`);
    const resolved = new URL(body.type, `https://localhost:8443${url}`);
    assert.equal(resolved.href, `https://localhost:8443/docs#problem-${body.code}`);
    const page = await h.app.inject({ url: resolved.pathname });
    const landing =
      page.statusCode === 200 ? page : await h.app.inject({ url: String(page.headers.location) });
    assert.equal(landing.statusCode, 200);
    assert.match(landing.body, /<html/i);
  });

  test('a path that does not exist is still a 404', async () => {
    assert.equal((await h.app.inject({ url: '/api/v2/' })).statusCode, 404);
    assert.equal((await h.app.inject({ url: '/nothing' })).statusCode, 404);
  });
});

describe('the HTTPS port', () => {
  let h: Harness;
  let listening: Awaited<ReturnType<typeof listenHttps>>;
  before(async () => {
    h = await createHarness({ https: true });
    listening = await listenHttps(h);
  });
  after(async () => {
    await listening.close();
    await h.close();
  });

  test('answers a plain http:// request with a 400 that says to use https, not an empty reply', async () => {
    const answer = await rawExchange(
      listening.port,
      'GET /api/v1/prices/today HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
    );
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.match(answer, /content-type: application\/problem\+json/i);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
    assert.equal(body.status, 400);
    assert.match(String(body.detail), /https:\/\//);
  });

  test('a CSV answer served again from the answer cache, before the framework, names its file too', async () => {
    const fastAnswers = async (): Promise<number> => {
      const metric = await h.app.inject({ url: '/metrics' });
      const line = metric.body.split('\n').find((l) => l.startsWith('pricepoint_fast_path_answers_total{'));
      return line === undefined ? 0 : Number(line.split(' ').pop());
    };
    const key = (await h.createKey({ tier: 'enterprise' })).key;
    const url = '/api/v1/prices/today?format=csv&symbols=NO1';
    const first = await listening.get(url, { 'x-api-key': key });
    assert.equal(first.status, 200, first.text);
    const before = await fastAnswers();
    const again = await listening.get(url, { 'x-api-key': key });
    assert.equal(await fastAnswers(), before + 1, 'served by the fast path');
    assert.equal(again.headers['content-disposition'], 'attachment; filename="prices-2026-11-22.csv"');
    assert.equal(again.headers['content-disposition'], first.headers['content-disposition']);
  });

  test('still serves https, and closes a connection that sends neither HTTP nor TLS', async () => {
    assert.equal((await listening.get('/healthz')).status, 200);
    assert.equal(await rawExchange(listening.port, '\x00\x01garbage\r\n\r\n'), '');
  });
});
