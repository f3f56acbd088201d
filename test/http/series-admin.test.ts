/**
 * PUT /api/v1/series/{symbol} (docs/data-model.md, docs/api.md, docs/errors.md): create or update a
 * series' metadata with an admin key. Happy, error and security cases; every bad field is named, and
 * the grid of a series with prices (time zone and resolution) cannot change.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../helpers/harness.js';

interface SeriesView {
  symbol: string;
  name: string;
  kind: string;
  currency: string;
  unit: string;
  timezone: string;
  resolution: string;
  coverage: { first: string; last: string } | null;
}

const NEW_SERIES = {
  name: 'Stockholm day-ahead',
  kind: 'electricity',
  currency: 'SEK',
  unit: 'MWh',
  timezone: 'Europe/Stockholm',
  resolution: 'PT15M',
};

let h: Harness;
let admin: string;

/** `key` null: no key at all. */
function put(symbol: string, payload: unknown, key: string | null = admin) {
  return h.app.inject({
    method: 'PUT',
    url: `/api/v1/series/${symbol}`,
    headers: key === null ? {} : { 'x-api-key': key },
    payload: payload as object,
  });
}

async function stored(symbol: string) {
  return h.stores.prices.getSeries(symbol);
}

before(async () => {
  h = await createHarness();
  // Enterprise (200 a second): the fake clock stands still, and this file sends more than pro's 20.
  admin = (await h.createKey({ tier: 'enterprise', scopes: ['admin'], name: 'admin' })).key;
});
after(() => h.close());

describe('PUT /api/v1/series/{symbol}: security', () => {
  test('without a key: 401 missing_api_key, and nothing is written', async () => {
    const response = await put('SE3', NEW_SERIES, null);
    assert.equal(response.statusCode, 401);
    assert.equal(response.json().code, 'missing_api_key');
    assert.equal(await stored('SE3'), undefined);
  });

  test('with an invalid key: 401 invalid_api_key', async () => {
    const response = await put('SE3', NEW_SERIES, 'pp_live_NotARealKeyAtAll000000000000');
    assert.equal(response.statusCode, 401);
    assert.equal(response.json().code, 'invalid_api_key');
  });

  test('read and write keys: 403 insufficient_scope naming the admin scope, and nothing is written', async () => {
    for (const scopes of [['read'], ['write']] as const) {
      const { key } = await h.createKey({ tier: 'pro', scopes: [...scopes] });
      const response = await put('SE3', NEW_SERIES, key);
      assert.equal(response.statusCode, 403, scopes.join());
      assert.equal(response.json().code, 'insufficient_scope');
      assert.equal(response.json().requiredScope, 'admin');
    }
    const demo = await put('SE3', NEW_SERIES, h.demoKey);
    assert.equal(demo.statusCode, 403);
    assert.equal(await stored('SE3'), undefined);
  });
});

describe('PUT /api/v1/series/{symbol}: create and update', () => {
  test('a new series: 201 with the series, symbol upper-cased, no coverage yet; readable at once', async () => {
    const response = await put('se3', { ...NEW_SERIES, currency: 'sek' });
    assert.equal(response.statusCode, 201, response.body);
    const body = response.json() as SeriesView;
    assert.deepEqual(body, { symbol: 'SE3', ...NEW_SERIES, coverage: null });
    assert.deepEqual(await stored('SE3'), { symbol: 'SE3', ...NEW_SERIES });
    const today = await h.app.inject({
      url: '/api/v1/prices/today?symbols=se3',
      headers: { 'x-api-key': admin },
    });
    assert.equal(today.statusCode, 200);
    assert.deepEqual(today.json().series[0].prices, []);
  });

  test('the same PUT again: 200 updated, nothing changed', async () => {
    const response = await put('SE3', NEW_SERIES);
    assert.equal(response.statusCode, 200);
    assert.equal((response.json() as SeriesView).name, NEW_SERIES.name);
  });

  test('a series without prices may change its time zone and resolution', async () => {
    const response = await put('SE3', { timezone: 'Europe/Oslo', resolution: 'PT1H' });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json() as SeriesView;
    assert.equal(body.timezone, 'Europe/Oslo');
    assert.equal(body.resolution, 'PT1H');
    assert.equal(body.name, NEW_SERIES.name, 'omitted fields keep their values');
  });

  test('a series with prices may change its name and currency; coverage shows its local dates', async () => {
    const response = await put('no1', { name: 'Oslo (NO1) day-ahead', currency: 'NOK' });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json() as SeriesView;
    assert.equal(body.name, 'Oslo (NO1) day-ahead');
    assert.equal(body.currency, 'NOK');
    assert.equal(body.timezone, 'Europe/Oslo');
    assert.deepEqual(body.coverage, { first: '2026-08-24', last: '2026-11-23' });
    const today = await h.app.inject({
      url: '/api/v1/prices/today?symbols=NO1',
      headers: { 'x-api-key': admin },
    });
    assert.equal(today.json().series[0].name, 'Oslo (NO1) day-ahead');
    assert.equal(today.json().series[0].prices.length, 96);
  });

  test('a series with prices may not change its time zone: 400 naming the field and why', async () => {
    const response = await put('NO1', { timezone: 'Europe/Berlin' });
    assert.equal(response.statusCode, 400);
    const problem = response.json();
    assert.equal(problem.code, 'invalid_parameter');
    assert.equal(problem.parameter, 'timezone');
    assert.match(problem.detail, /^NO1 already has prices on its Europe\/Oslo PT15M grid; /);
    assert.match(problem.detail, /timezone \(Europe\/Oslo to Europe\/Berlin\)/);
    assert.equal((await stored('NO1'))?.timezone, 'Europe/Oslo');
  });

  test('a series with prices may not change its resolution, nor both at once', async () => {
    const one = await put('NO1', { resolution: 'PT1H' });
    assert.equal(one.statusCode, 400);
    assert.equal(one.json().parameter, 'resolution');
    assert.match(one.json().detail, /resolution \(PT15M to PT1H\)/);
    const both = await put('NO1', { timezone: 'UTC', resolution: 'PT1H', name: 'renamed' });
    assert.equal(both.statusCode, 400);
    assert.deepEqual(
      both.json().errors.map((e: { field: string }) => e.field),
      ['timezone', 'resolution'],
    );
    const after = await stored('NO1');
    assert.equal(after?.resolution, 'PT15M');
    assert.notEqual(after?.name, 'renamed', 'a refused request changes nothing');
  });
});

describe('PUT /api/v1/series/{symbol}: invalid requests name the field', () => {
  const bad: Record<string, unknown> = {
    name: '',
    kind: 'Electricity',
    currency: 'E$',
    unit: 'u'.repeat(33),
    timezone: 'europe/stockholm',
    resolution: 'PT5M',
  };
  for (const [field, value] of Object.entries(bad)) {
    test(`a bad ${field} is a 400 naming "${field}"`, async () => {
      const response = await put('SE4', { ...NEW_SERIES, [field]: value });
      assert.equal(response.statusCode, 400, response.body);
      const problem = response.json();
      assert.equal(problem.code, 'invalid_parameter');
      assert.equal(problem.parameter, field);
      assert.match(problem.detail, new RegExp(`"${field}"`));
      assert.equal(await stored('SE4'), undefined);
    });
  }

  test('several bad fields are all named at once', async () => {
    const response = await put('SE4', { ...NEW_SERIES, kind: 'X', timezone: 'Mars/Base' });
    assert.equal(response.statusCode, 400);
    assert.deepEqual(
      response.json().errors.map((e: { field: string }) => e.field),
      ['kind', 'timezone'],
    );
  });

  test('a new series without fields: 400 naming every missing one', async () => {
    const response = await put('SE4', { name: 'only a name' });
    assert.equal(response.statusCode, 400);
    assert.deepEqual(
      response.json().errors.map((e: { field: string }) => e.field),
      ['kind', 'currency', 'unit', 'timezone', 'resolution'],
    );
    assert.match(response.json().detail, /"kind" is required for a new series/);
  });

  test('a malformed symbol in the path is a 400 naming "symbol"', async () => {
    for (const symbol of ['-SE4', 'A'.repeat(33), 'S%20E4']) {
      const response = await put(symbol, NEW_SERIES);
      assert.equal(response.statusCode, 400, symbol);
      assert.equal(response.json().parameter, 'symbol', symbol);
    }
  });

  test('an unknown field, a wrong type and a body that is not JSON are 400s', async () => {
    const unknown = await put('SE4', { ...NEW_SERIES, symbol: 'SE4' });
    assert.equal(unknown.statusCode, 400);
    assert.equal(unknown.json().parameter, 'symbol');
    const wrongType = await put('SE4', { ...NEW_SERIES, name: 5 });
    assert.equal(wrongType.statusCode, 400);
    assert.equal(wrongType.json().parameter, 'name');
    const notJson = await h.app.inject({
      method: 'PUT',
      url: '/api/v1/series/SE4',
      headers: { 'x-api-key': admin, 'content-type': 'application/json' },
      payload: '{"name":',
    });
    assert.equal(notJson.statusCode, 400);
    assert.equal(notJson.json().code, 'invalid_parameter');
    assert.equal(await stored('SE4'), undefined);
  });
});
