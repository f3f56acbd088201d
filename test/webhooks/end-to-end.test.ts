/**
 * Webhooks from the command line to a receiver (docs/webhooks.md): `webhooks add` prints the secret
 * once, an import through the running server's API makes a day complete, and the receiver gets the
 * `day.published` event, verified with the Standard Webhooks reference library; the delivery log,
 * `webhooks test` and `webhooks remove`. Runs the compiled CLI: `npm run build` first.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import {
  cleanUp,
  httpsClient,
  onlyJson,
  operatorKey,
  runCli,
  startServer,
  tempDir,
  waitUntil,
} from '../helpers/process.js';
import { startReceiver } from './receiver.js';

after(cleanUp);

const flat = (headers: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)]));

test('a day imported through the server reaches a webhook registered with the CLI, signed', async () => {
  const dir = await tempDir('pricepoint-webhooks-');
  const settings = {
    PRICEPOINT_DATA_DIR: dir,
    PRICEPOINT_KEY_SECRET: 'webhook-test-key-secret-0123456789',
    PRICEPOINT_WEBHOOK_ALLOW_PRIVATE: 'true',
    PRICEPOINT_WEBHOOK_ALLOW_HTTP: 'true',
  };
  const receiver = await startReceiver();
  try {
    const admin = await operatorKey(settings);

    const added = await runCli(
      ['webhooks', 'add', receiver.url(), '--events', 'day.published', '--symbols', 'IMP', '--json'],
      settings,
    );
    assert.equal(added.code, 0, added.stderr);
    const { id, secret } = onlyJson(added) as { id: string; secret: string };
    assert.match(secret, /^whsec_/);
    const listed = await runCli(['webhooks', 'list'], settings);
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(listed.stdout.includes(id));
    assert.ok(!listed.stdout.includes(secret), 'list never prints the secret');

    const server = await startServer(['serve'], settings);
    const client = httpsClient(join(dir, 'tls', 'localhost-cert.pem'));
    const send = (method: 'PUT', path: string, type?: string, body?: string) =>
      client.send(
        method,
        `${server.url}${path}`,
        { 'x-api-key': admin, ...(type && { 'content-type': type }) },
        body,
      );
    const series = {
      name: 'Imported',
      kind: 'electricity',
      currency: 'EUR',
      unit: 'MWh',
      timezone: 'UTC',
      resolution: 'PT15M',
    };
    assert.equal(
      (await send('PUT', '/api/v1/series/IMP', 'application/json', JSON.stringify(series))).status,
      201,
    );
    const rows = Array.from({ length: 96 }, (_, n) => {
      const time = `${String(Math.floor(n / 4)).padStart(2, '0')}:${String((n % 4) * 15).padStart(2, '0')}`;
      return `2024-03-01T${time}:00Z,${n}.5`;
    });
    const imported = await send(
      'PUT',
      '/api/v1/series/IMP/prices',
      'text/csv',
      `start,price\n${rows.join('\n')}\n`,
    );
    assert.equal(imported.status, 200, imported.text);

    const got = await waitUntil(() => receiver.received[0], 30_000, 'the day.published delivery');
    const event = new Webhook(secret).verify(got.body, flat(got.headers)) as {
      id: string;
      type: string;
      data: { symbol: string; date: string; intervals: number };
    };
    assert.equal(event.type, 'day.published');
    assert.equal(got.headers['webhook-id'], event.id);
    assert.deepEqual([event.data.symbol, event.data.date, event.data.intervals], ['IMP', '2024-03-01', 96]);

    // The log is written just after the receiver answered: read it until it says so.
    let log: { eventId: string; state: string; status: number }[] = [];
    for (let tries = 0; tries < 200 && log[0]?.state !== 'delivered'; tries += 1) {
      if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 50));
      log = JSON.parse(
        (await client.get(`${server.url}/api/v1/webhooks/${id}/deliveries`, { 'x-api-key': admin })).text,
      );
    }
    assert.deepEqual(
      log.map((d) => [d.eventId, d.state, d.status]),
      [[event.id, 'delivered', 200]],
    );

    const tested = await runCli(['webhooks', 'test', id], settings);
    assert.equal(tested.code, 0, tested.stderr);
    assert.match(tested.stdout, /^delivered: HTTP 200/);
    const testedJson = await runCli(['webhooks', 'test', id, '--json'], settings);
    assert.equal(testedJson.code, 0, testedJson.stderr);
    assert.deepEqual(
      (({ id, ok, status, error }) => ({ id, ok, status, error }))(JSON.parse(testedJson.stdout)),
      { id, ok: true, status: 200, error: null },
    );
    const ping = receiver.received.at(-1);
    assert.equal(
      (new Webhook(secret).verify(ping?.body ?? '', flat(ping?.headers ?? {})) as { type: string }).type,
      'webhook.test',
    );

    const removed = await runCli(['webhooks', 'remove', id, '--json'], settings);
    assert.equal(removed.code, 0, removed.stderr);
    assert.deepEqual(JSON.parse(removed.stdout), { id, removed: true });
    assert.equal(
      (await runCli(['webhooks', 'remove', id], settings)).code === 0,
      false,
      'removing twice fails',
    );
    await server.stop();
  } finally {
    await receiver.close();
  }
});
