/** The bugs the hostile requests (hostile-requests.test.ts) found, each pinned by a plain test. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { InjectOptions } from 'fastify';
import { ApiError } from '../../src/domain/errors/api-error.js';
import { generateKey, maskKeys } from '../../src/domain/keys/key-format.js';
import { createRateLimiter } from '../../src/services/rate-limiter.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { secretOf } from './hostile-routes.js';

describe('bugs the hostile requests found', () => {
  let h: Harness;
  let admin: string;
  const asAdmin = (options: InjectOptions) =>
    h.app.inject({ ...options, headers: { 'x-api-key': admin, ...options.headers } });

  before(async () => {
    h = await createHarness();
    admin = (await h.createKey({ tier: 'enterprise', scopes: ['admin'] })).key;
  });
  after(() => h.close());

  test('a key pasted twice in a row is masked as two keys, not left as "_live_<secret>" after the first', async () => {
    const key = generateKey('live');
    assert.equal(maskKeys(`${key}${key}`), 'pp_***pp_***', 'both copies are masked');
    const response = await asAdmin({ url: `/api/v1/keys/${key}${key}` });
    assert.equal(response.statusCode, 404, response.body);
    assert.ok(!response.body.includes(secretOf(key)), `no secret in ${response.body}`);
  });

  test('the docs redirect from static/index.html drops the query string: no key in Location, no loop', async () => {
    const key = generateKey('live');
    const response = await h.app.inject({ url: `/docs/static/index.html?api_key=${key}` });
    assert.equal(response.statusCode, 302, response.body);
    assert.equal(response.headers.location, '/docs/', 'redirected to the page, without the query');
    assert.ok(!JSON.stringify(response.headers).includes(secretOf(key)), 'no secret in any header');
    const page = await h.app.inject({ url: String(response.headers.location) });
    assert.equal(page.statusCode, 200, 'the redirect leads to the page');
  });

  test('a tier named after an Object.prototype member is refused: such a key would answer 500 to every request', async () => {
    for (const tier of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const response = await asAdmin({
        method: 'POST',
        url: '/api/v1/keys',
        payload: { name: 'probe', tier },
      });
      assert.equal(response.statusCode, 400, `${tier}: ${response.body}`);
      assert.equal(
        (response.json() as { parameter?: string }).parameter,
        'tier',
        `${tier}: the tier is named`,
      );
    }
  });

  test('a key stored with such a tier (by an older version) is refused with 503, as a tier no longer configured', async () => {
    const { id } = await h.createKey({ tier: 'free' });
    const record = await h.stores.keys.get(id);
    assert.ok(record, 'the key was stored');
    const limiter = createRateLimiter({
      store: h.stores.rateLimits,
      tiers: h.config.tiers,
      clock: h.clock.read,
    });
    assert.throws(
      () => limiter.tierOf({ ...record, tier: 'constructor' }),
      (error: unknown) => error instanceof ApiError && error.code === 'service_unavailable',
      'an inherited name is no tier',
    );
  });

  test('a key or series name that holds a key is refused, so it is neither stored in clear nor listed', async () => {
    const key = generateKey('live');
    const created = await asAdmin({
      method: 'POST',
      url: '/api/v1/keys',
      payload: { name: `ci ${key}`, tier: 'free' },
    });
    assert.equal(created.statusCode, 400, created.body);
    assert.equal((created.json() as { parameter?: string }).parameter, 'name', 'the name is named');
    const series = await asAdmin({
      method: 'PUT',
      url: '/api/v1/series/LEAK1',
      payload: { name: key, kind: 'fx', currency: 'EUR', unit: 'MWh', timezone: 'UTC', resolution: 'PT1H' },
    });
    assert.equal(series.statusCode, 400, series.body);
    assert.equal((series.json() as { parameter?: string }).parameter, 'name', 'the name is named');
    const listed = await asAdmin({ url: '/api/v1/keys' });
    for (const answer of [created, series, listed]) {
      assert.ok(!answer.body.includes(secretOf(key)), `no secret in ${answer.body.slice(0, 300)}`);
    }
  });
});
