/**
 * `verifyWebhook()` of `@pricepoint/client` (docs/webhooks.md): it accepts what a real server
 * delivers (the test harness with its delivery worker, a webhook registered through the admin API
 * and a day uploaded through the client) and what the Standard Webhooks reference library
 * (`standardwebhooks`) signs, and refuses a changed body, a wrong secret and an old or future
 * timestamp. Needs the client built (`npm run build`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  PricepointClient,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
} from '@pricepoint/client';
import { Webhook } from 'standardwebhooks';
import { fetch as undiciFetch } from 'undici';
import { startDeliveries } from '../../src/webhooks/start.js';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';
import { waitUntil } from '../helpers/process.js';
import { type Received, startReceiver } from '../webhooks/receiver.js';

/** A fresh secret as the server makes them: `whsec_` + base64 of 32 random bytes. */
const newSecret = () => `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`;

async function refusal(promise: Promise<unknown>): Promise<WebhookVerificationError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof WebhookVerificationError, `expected a WebhookVerificationError, got ${error}`);
    return error;
  }
  assert.fail('expected the delivery to be refused');
}

describe('verifyWebhook', () => {
  let h: Harness;
  let server: Awaited<ReturnType<typeof listenHttps>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let deliveries: { stop(): Promise<void> } | undefined;
  let secret: string;
  let delivered: Received;

  before(async () => {
    h = await createHarness({
      https: true,
      env: {
        PRICEPOINT_WEBHOOK_ALLOW_PRIVATE: 'true',
        PRICEPOINT_WEBHOOK_ALLOW_HTTP: 'true',
        PRICEPOINT_KEY_SECRET: 'verify-webhook-test-key-secret-0123456789',
      },
    });
    server = await listenHttps(h);
    receiver = await startReceiver();
    deliveries = startDeliveries(h.config, h.stores, { error: () => {} });
    assert.ok(deliveries, 'the embedded stores keep events and webhooks');

    const admin = (await h.createKey({ tier: 'pro', scopes: ['admin'] })).key;
    const registered = await server.request('POST', '/api/v1/webhooks', {
      headers: { 'x-api-key': admin, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url(), events: ['day.published'], symbols: ['NO1'] }),
    });
    assert.equal(registered.status, 201, registered.text);
    secret = (JSON.parse(registered.text) as { secret: string }).secret;

    // A day of NO1 prices uploaded through the client completes the day: the server delivers it.
    const writer = new PricepointClient({
      baseUrl: server.base,
      apiKey: admin,
      fetch: (url, init) => undiciFetch(url, { ...init, dispatcher: server.agent }),
    });
    const points = Array.from({ length: 96 }, (_, n) => ({
      start: new Date(Date.parse('2026-12-05T00:00:00+01:00') + n * 15 * 60_000).toISOString(),
      price: 30 + n / 4,
    }));
    assert.equal((await writer.uploadPrices('NO1', points)).written, 96);
    delivered = await waitUntil(() => receiver.received[0], 60_000, 'the day.published delivery');
  });
  after(async () => {
    await deliveries?.stop();
    await receiver.close();
    await server.close();
    await h.close();
  });

  test("accepts the server's delivery: body as text or bytes, headers as Node's or a fetch Headers", async () => {
    const event = await verifyWebhook(delivered.body, delivered.headers, secret);
    assert.equal(event.type, 'day.published');
    assert.equal(event.id, delivered.headers['webhook-id']);
    assert.deepEqual(
      { ...event.data, etag: undefined },
      { symbol: 'NO1', date: '2026-12-05', timezone: 'Europe/Oslo', intervals: 96, etag: undefined },
    );
    // The reference library agrees about the same delivery.
    const flat = Object.fromEntries(Object.entries(delivered.headers).map(([k, v]) => [k, String(v)]));
    assert.deepEqual(new Webhook(secret).verify(delivered.body, flat), event);

    const headers = new Headers(flat);
    const fromBytes: WebhookEvent = await verifyWebhook(Buffer.from(delivered.body), headers, secret);
    assert.deepEqual(fromBytes, event);
    // The secret without its prefix is the same key, as the reference libraries accept it.
    assert.deepEqual(await verifyWebhook(delivered.body, headers, secret.slice('whsec_'.length)), event);
  });

  test('refuses a changed body, a wrong secret, a missing header', async () => {
    const changed = delivered.body.replace('"2026-12-05"', '"2026-12-06"');
    assert.notEqual(changed, delivered.body);
    assert.equal(
      (await refusal(verifyWebhook(changed, delivered.headers, secret))).reason,
      'invalid_signature',
    );
    assert.equal(
      (await refusal(verifyWebhook(`${delivered.body} `, delivered.headers, secret))).reason,
      'invalid_signature',
      'even a space added',
    );
    assert.equal(
      (await refusal(verifyWebhook(delivered.body, delivered.headers, newSecret()))).reason,
      'invalid_signature',
    );
    const otherId = { ...delivered.headers, 'webhook-id': 'evt_999999999999' };
    assert.equal((await refusal(verifyWebhook(delivered.body, otherId, secret))).reason, 'invalid_signature');
    const { 'webhook-signature': _dropped, ...unsigned } = delivered.headers;
    assert.equal((await refusal(verifyWebhook(delivered.body, unsigned, secret))).reason, 'missing_header');
    await assert.rejects(verifyWebhook(delivered.body, delivered.headers, 'not a secret!'), TypeError);
  });

  test('refuses a timestamp more than 5 minutes from now, either way', async () => {
    const sentAt = Number(delivered.headers['webhook-timestamp']) * 1000;
    const at = (ms: number) => ({ now: () => sentAt + ms });
    assert.equal(
      (await verifyWebhook(delivered.body, delivered.headers, secret, at(299_000))).type,
      'day.published',
    );
    for (const ms of [301_000, -301_000]) {
      const error = await refusal(verifyWebhook(delivered.body, delivered.headers, secret, at(ms)));
      assert.equal(error.reason, 'timestamp_out_of_tolerance');
    }
    const bad = { ...delivered.headers, 'webhook-timestamp': 'yesterday' };
    assert.equal((await refusal(verifyWebhook(delivered.body, bad, secret))).reason, 'invalid_timestamp');
  });

  test('accepts what standardwebhooks signs, with several signatures, and refuses it when old', async () => {
    const key = newSecret();
    const signer = new Webhook(key);
    const body = JSON.stringify({
      id: 'evt_000000000007',
      type: 'day.revised',
      time: '2026-11-24T13:05:00.000Z',
      data: { symbol: 'SE3', date: '2026-11-25', timezone: 'Europe/Stockholm', intervals: 96, etag: '"abc"' },
    });
    const now = Date.parse('2026-11-24T13:05:01Z');
    const headersAt = (ms: number, signature = signer.sign('evt_000000000007', new Date(ms), body)) => ({
      'webhook-id': 'evt_000000000007',
      'webhook-timestamp': String(Math.floor(ms / 1000)),
      'webhook-signature': signature,
    });
    const options = { now: () => now };

    const event = await verifyWebhook(body, headersAt(now), key, options);
    assert.equal(event.type, 'day.revised');
    assert.equal(event.data.symbol, 'SE3');

    // During a secret rotation a sender signs with both: any one v1 signature that matches will do.
    const right = signer.sign('evt_000000000007', new Date(now), body);
    const wrong = new Webhook(newSecret()).sign('evt_000000000007', new Date(now), body);
    const both = headersAt(now, `${wrong} v1a,${right.slice(3)} ${right}`);
    assert.deepEqual(await verifyWebhook(body, both, key, options), event);
    const onlyWrong = headersAt(now, `${wrong} v1a,${right.slice(3)}`);
    assert.equal((await refusal(verifyWebhook(body, onlyWrong, key, options))).reason, 'invalid_signature');

    // Signed ten minutes before now: a replay.
    const old = headersAt(now - 10 * 60_000);
    assert.equal(
      (await refusal(verifyWebhook(body, old, key, options))).reason,
      'timestamp_out_of_tolerance',
    );
  });
});
