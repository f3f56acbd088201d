import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import {
  inspectClient,
  REDIS_TEST_PORT,
  REDIS_TEST_URL,
  redisSkipReason,
  testPrefix,
  whenReady,
} from '../../../test/helpers/redis.js';
import { describeOrSkip } from '../../../test/helpers/skip.js';
import { startTcpProxy } from '../../../test/helpers/tcp-proxy.js';
import type { Notice } from '../types.js';
import { redisCommandOptions, redisSubscriberOptions } from './index.js';
import { closeClient, parseEnvelope, RedisNoticeBus } from './notice-bus.js';

const skip = await redisSkipReason();

/** Every notice a bus hears, and a way to wait for the n-th. */
function collect(bus: RedisNoticeBus) {
  const notices: Notice[] = [];
  let wake = () => {};
  bus.subscribe((notice) => {
    notices.push(notice);
    wake();
  });
  return {
    notices,
    async waitFor(count: number): Promise<Notice[]> {
      while (notices.length < count) await new Promise<void>((resolve) => (wake = resolve));
      return notices;
    },
  };
}

/** One "server": a publishing and a subscribing connection, at `url`, and the bus over them. */
async function server(t: TestContext, prefix: string, url = REDIS_TEST_URL) {
  const publisher = new Redis(url, redisCommandOptions(250));
  const subscriber = new Redis(url, redisSubscriberOptions());
  const errors: Error[] = [];
  for (const client of [publisher, subscriber]) client.on('error', () => {});
  const bus = new RedisNoticeBus(publisher, subscriber, prefix, { onError: (e) => errors.push(e) });
  t.after(async () => {
    await bus.close();
    await closeClient(publisher);
  });
  await Promise.all([whenReady(publisher), bus.ready()]);
  return { bus, publisher, subscriber, errors, heard: collect(bus) };
}

describeOrSkip('RedisNoticeBus', { skip }, () => {
  test('two servers on one Redis hear each other, and each hears its own notice once', async (t) => {
    const prefix = testPrefix();
    const a = await server(t, prefix);
    const b = await server(t, prefix);
    await a.bus.publish({ kind: 'keys', keyIds: ['k1', 'k2'] });
    // b hears its own notice at once, so let a's arrive first for a fixed order.
    await b.heard.waitFor(1);
    await b.bus.publish({ kind: 'prices', symbols: ['NO1'] });
    const expected = [
      { kind: 'keys', keyIds: ['k1', 'k2'] },
      { kind: 'prices', symbols: ['NO1'] },
    ];
    assert.deepEqual(await a.heard.waitFor(2), expected);
    assert.deepEqual(await b.heard.waitFor(2), expected);
    // A last notice through Redis: had an echo been delivered, it would show up before this one.
    await a.bus.publish({ kind: 'prices', symbols: ['END'] });
    await b.heard.waitFor(3);
    assert.equal(a.heard.notices.length, 3);
    assert.equal(b.heard.notices.length, 3);
  });

  test('a server on another prefix hears nothing', async (t) => {
    const a = await server(t, testPrefix());
    const other = await server(t, testPrefix());
    await a.bus.publish({ kind: 'keys', keyIds: ['k1'] });
    await other.bus.publish({ kind: 'keys', keyIds: ['mine'] });
    assert.deepEqual(await other.heard.waitFor(1), [{ kind: 'keys', keyIds: ['mine'] }]);
    assert.deepEqual(a.heard.notices, [{ kind: 'keys', keyIds: ['k1'] }]);
  });

  test('malformed messages are dropped and reported; the next good one arrives', async (t) => {
    const prefix = testPrefix();
    const b = await server(t, prefix);
    const raw = inspectClient();
    t.after(() => raw.quit());
    const channel = `${prefix}notices`;
    const bad = [
      'not json',
      'null',
      JSON.stringify({ kind: 'keys', keyIds: ['no envelope'] }),
      JSON.stringify({ origin: 'x', notice: { kind: 'keys', keyIds: [1, 2] } }),
      JSON.stringify({ origin: 'x', notice: { kind: 'prices', symbols: 'NO1' } }),
      JSON.stringify({ origin: 'x', notice: { kind: 'flush-everything' } }),
    ];
    for (const message of bad) await raw.publish(channel, message);
    // Same connection, so Redis delivers in order: when this one arrives, the bad ones were handled.
    await raw.publish(
      channel,
      JSON.stringify({ origin: 'x', notice: { kind: 'keys', keyIds: ['ok'], extra: 1 } }),
    );
    assert.deepEqual(await b.heard.waitFor(1), [{ kind: 'keys', keyIds: ['ok'] }]);
    assert.equal(b.errors.length, bad.length);
  });

  test('after Redis is cut and restored, notices flow again by themselves', async (t) => {
    const prefix = testPrefix();
    const redis = await startTcpProxy(REDIS_TEST_PORT);
    t.after(() => redis.close());
    const a = await server(t, prefix);
    const b = await server(t, prefix, `redis://127.0.0.1:${redis.port}`);
    await a.bus.publish({ kind: 'keys', keyIds: ['before'] });
    assert.deepEqual(await b.heard.waitFor(1), [{ kind: 'keys', keyIds: ['before'] }]);

    await redis.cut();
    // Publishing while Redis is away fails at once instead of waiting; this server still hears it.
    await assert.rejects(b.bus.publish({ kind: 'prices', symbols: ['LOST'] }));
    assert.deepEqual(b.heard.notices.at(-1), { kind: 'prices', symbols: ['LOST'] });

    await redis.restore();
    // No resubscribe call: ioredis subscribes again on reconnect. Publish until b hears a.
    const heardBefore = b.heard.notices.length;
    for (let attempt = 0; b.heard.notices.length === heardBefore; attempt++) {
      assert.ok(attempt < 200, 'b never heard a again');
      await a.bus.publish({ kind: 'keys', keyIds: ['probe'] });
      await sleep(50);
    }
    assert.deepEqual(b.heard.notices.at(-1), { kind: 'keys', keyIds: ['probe'] });
    // And b's own notices reach a again.
    const aHeard = a.heard.notices.length;
    for (let attempt = 0; ; attempt++) {
      assert.ok(attempt < 200, 'b could never publish again');
      if (
        await b.bus.publish({ kind: 'prices', symbols: ['BACK'] }).then(
          () => true,
          () => false,
        )
      )
        break;
      await sleep(50);
    }
    const heard = await a.heard.waitFor(aHeard + 1);
    assert.deepEqual(heard.at(-1), { kind: 'prices', symbols: ['BACK'] });
  });
});

describe('parseEnvelope', () => {
  test('keeps only the fields of a known notice', () => {
    assert.deepEqual(parseEnvelope({ origin: 'o', notice: { kind: 'prices', symbols: ['A'], x: 1 }, y: 2 }), {
      origin: 'o',
      notice: { kind: 'prices', symbols: ['A'] },
    });
    assert.equal(parseEnvelope({ origin: 'o', notice: { kind: 'keys' } }), undefined);
    assert.equal(parseEnvelope('text'), undefined);
  });
});
