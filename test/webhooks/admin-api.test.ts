/**
 * The webhooks admin API (docs/webhooks.md): admin keys only; the secret in the answer of create and
 * in no other answer, nor in the database; refused URLs named; enable, disable and remove.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../helpers/harness.js';

describe('webhooks admin API', () => {
  let h: Harness;
  let admin: string;
  let writer: string;
  before(async () => {
    h = await createHarness({ env: { PRICEPOINT_KEY_SECRET: 'admin-api-test-key-secret-012345' } });
    admin = (await h.createKey({ tier: 'enterprise', scopes: ['read', 'write', 'admin'] })).key;
    writer = (await h.createKey({ tier: 'enterprise', scopes: ['read', 'write'] })).key;
  });
  after(() => h.close());

  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, key: string, body?: object) =>
    h.app.inject({
      method,
      url,
      headers: { 'x-api-key': key, ...(body && { 'content-type': 'application/json' }) },
      ...(body && { payload: JSON.stringify(body) }),
    });

  test('the secret is shown by create only, and stored sealed', async () => {
    const created = await call('POST', '/api/v1/webhooks', admin, {
      url: 'https://hooks.example.com/p',
      events: ['day.published'],
      symbols: ['NO1'],
    });
    assert.equal(created.statusCode, 201, created.body);
    const { id, secret, enabled, symbols } = created.json() as {
      id: string;
      secret: string;
      enabled: boolean;
      symbols: string[];
    };
    assert.match(secret, /^whsec_/);
    assert.equal(enabled, true);
    assert.deepEqual(symbols, ['NO1']);
    for (const url of ['/api/v1/webhooks', `/api/v1/webhooks/${id}`, `/api/v1/webhooks/${id}/deliveries`]) {
      const answer = await call('GET', url, admin);
      assert.equal(answer.statusCode, 200, url);
      assert.ok(!answer.body.includes(secret) && !answer.body.includes('secret'), url);
    }
    const disabled = await call('POST', `/api/v1/webhooks/${id}/disable`, admin);
    assert.equal(disabled.json().enabled, false);
    assert.ok(!disabled.body.includes(secret));
    assert.equal((await call('POST', `/api/v1/webhooks/${id}/enable`, admin)).json().enabled, true);

    // The database holds it sealed under the key secret, not as it was shown.
    const row = await h.stores.webhooks?.endpoint(id);
    assert.match(row?.secret ?? '', /^v1:/);
    assert.ok(!row?.secret.includes(secret.slice('whsec_'.length)));
    const removed = await call('DELETE', `/api/v1/webhooks/${id}`, admin);
    assert.equal(removed.statusCode, 200);
    assert.equal((await call('GET', `/api/v1/webhooks/${id}`, admin)).statusCode, 404);
  });

  test('URLs that may not be targets are refused, naming why', async () => {
    for (const [url, why] of [
      ['http://hooks.example.com/p', /must use https/],
      ['https://127.0.0.1/p', /loopback, private/],
      ['https://[::1]/p', /loopback, private/],
      ['https://169.254.169.254/latest/meta-data', /loopback, private/],
      ['https://user:pw@hooks.example.com/', /user name or password/],
    ] as const) {
      const answer = await call('POST', '/api/v1/webhooks', admin, { url, events: ['day.published'] });
      assert.equal(answer.statusCode, 400, url);
      assert.match(answer.json().detail, why, url);
      assert.equal(answer.json().parameter, 'url');
    }
    const unknownType = await call('POST', '/api/v1/webhooks', admin, {
      url: 'https://a.example/',
      events: ['day.deleted'],
    });
    assert.equal(unknownType.statusCode, 400);
  });

  test('a webhook store that fails (a lock held too long, a database away) answers 503, not 500', async () => {
    const store = h.stores.webhooks;
    assert.ok(store);
    const endpoints = store.endpoints;
    store.endpoints = async () => {
      throw Object.assign(new Error('the database stayed locked by another writer'), { code: 'SQLITE_BUSY' });
    };
    try {
      const answer = await call('GET', '/api/v1/webhooks', admin);
      assert.equal(answer.statusCode, 503, answer.body);
      assert.equal(answer.json().code, 'service_unavailable');
      assert.ok(!answer.body.includes('locked by another writer'), 'the cause is logged, not sent');
    } finally {
      store.endpoints = endpoints;
    }
    assert.equal((await call('GET', '/api/v1/webhooks', admin)).statusCode, 200);
  });

  test('only admin keys manage webhooks', async () => {
    const answer = await call('POST', '/api/v1/webhooks', writer, {
      url: 'https://a.example/',
      events: ['day.published'],
    });
    assert.equal(answer.statusCode, 403);
    assert.equal((await call('GET', '/api/v1/webhooks', writer)).statusCode, 403);
  });
});
