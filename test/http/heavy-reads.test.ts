/**
 * Heavy reads in flight (docs/using-the-api.md "Rate limits", src/http/pipeline/heavy-reads.ts): one key builds only so many
 * converted, tariffed, ranked or multi-unit reads at once; a few more wait their turn and the rest
 * get 429, while other keys, other addresses of the demo key, and the key's own light reads are
 * answered. The store's reads of NO1 are held at a gate the test opens, so which requests are being
 * built, waiting or refused does not depend on timing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_TIERS, type Tier } from '../../src/domain/limits/tiers.js';
import { createHeavyReads } from '../../src/http/pipeline/heavy-reads.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const roomy: Tier = {
  name: 'roomy',
  limits: [{ name: 'minute', limit: 1000, windowSeconds: 60 }],
  countPer: 'key',
  kinds: null,
  historyDays: null,
  streams: 3,
};

/** A distinct URL of a ranked day of NO1 (the answer cache holds none of them): `n` picks the day. */
const rankedNo1 = (n: number) =>
  `/api/v1/prices/2026-11-${String(10 + n).padStart(2, '0')}?symbols=NO1&include=rank`;

/** Rejects when `promise` has not settled within `ms`: an answer that never comes fails the test. */
async function within<T>(promise: Promise<T>, what: string, ms = 15_000): Promise<T> {
  const deadline = sleep(ms).then(() => {
    throw new Error(`${what}: no answer within ${ms} ms`);
  });
  return Promise.race([promise, deadline]);
}

/** The first `count` of `promises` to settle, in the order they settled. */
function firstSettled<T>(promises: readonly Promise<T>[], count: number): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const done: T[] = [];
    for (const p of promises) {
      p.then((value) => {
        done.push(value);
        if (done.length === count) resolve(done);
      }, reject);
    }
  });
}

describe('heavy reads in flight, per key', () => {
  let h: Harness;
  let open: () => void = () => {};
  let gate: Promise<void> = Promise.resolve();

  before(async () => {
    h = await createHarness({
      config: { tiers: { ...DEFAULT_TIERS, roomy }, heavyReadsPerClient: 1 },
    });
    const prices = h.stores.prices;
    const read = prices.pricesBetween.bind(prices);
    prices.pricesBetween = async (symbol, from, to) => {
      if (symbol === 'NO1') await gate;
      return read(symbol, from, to);
    };
  });
  after(() => h.close());

  const get = (url: string, key: string, remoteAddress = '127.0.0.1') =>
    h.app.inject({ url, headers: { 'x-api-key': key }, remoteAddress });
  const shut = () => {
    gate = new Promise((resolve) => {
      open = resolve;
    });
  };

  test('one built and four waiting; a sixth is refused with 429 and Retry-After, and others are served', async () => {
    const { key } = await h.createKey({ tier: 'roomy' });
    const { key: other } = await h.createKey({ tier: 'roomy' });
    shut();
    const sent = Array.from({ length: 7 }, (_, n) => get(rankedNo1(n), key));
    const refused = await within(firstSettled(sent, 2), 'the two reads beyond the four waiting');
    for (const answer of refused) {
      assert.equal(answer.statusCode, 429, answer.body);
      assert.equal(answer.headers['retry-after'], '1');
      assert.match(String(answer.headers['content-type']), /application\/problem\+json/);
      const problem = answer.json() as { code: string; 'violated-policies': string[]; detail: string };
      assert.equal(problem.code, 'rate_limited');
      assert.deepEqual(problem['violated-policies'], ['heavy-reads']);
      assert.match(problem.detail, /this key has 1 being built and 4 waiting/);
    }
    // While the key's five are held: its own light read, and another key's heavy one, are answered.
    const light = await within(
      get('/api/v1/prices/today?symbols=DE-LU', key),
      'a light read of the same key',
    );
    assert.equal(light.statusCode, 200);
    const elsewhere = await within(
      get('/api/v1/prices/today?symbols=DE-LU&include=rank', other),
      'a heavy read of another key',
    );
    assert.equal(elsewhere.statusCode, 200);
    open();
    const answered = await within(Promise.all(sent), 'the five once the store answers');
    assert.deepEqual(answered.map((a) => a.statusCode).sort(), [200, 200, 200, 200, 200, 429, 429]);
  });

  test('the demo key is bounded per client address: another address is not refused', async () => {
    shut();
    const sent = Array.from({ length: 6 }, (_, n) => get(rankedNo1(n + 7), h.demoKey, '10.0.0.1'));
    const [refused] = await within(firstSettled(sent, 1), 'the read beyond the four waiting');
    assert.equal(refused?.statusCode, 429);
    assert.match(refused?.body ?? '', /this key from this address has 1 being built/);
    // Another address of the demo key is another client: its read is built, not refused.
    const fromElsewhere = get(rankedNo1(13), h.demoKey, '10.0.0.2');
    const queuedBehindNothing = await Promise.race([fromElsewhere, sleep(300).then(() => 'still building')]);
    assert.equal(queuedBehindNothing, 'still building', 'held at the gate like any NO1 read, not refused');
    open();
    const answered = await within(Promise.all([...sent, fromElsewhere]), 'every admitted read');
    assert.deepEqual(answered.map((a) => a.statusCode).sort(), [200, 200, 200, 200, 200, 200, 429]);
  });
});

describe('the turns of heavy reads', () => {
  /** Reads that start when given a turn and end when the test says so. */
  function reads(heavy: ReturnType<typeof createHeavyReads>) {
    const started: string[] = [];
    const finish = new Map<string, () => void>();
    const run = (client: string, name: string, fail = false) =>
      heavy.run(client, async () => {
        started.push(name);
        await new Promise<void>((resolve) => finish.set(name, resolve));
        if (fail) throw new Error(name);
        return name;
      });
    const end = async (name: string) => {
      finish.get(name)?.();
      await sleep(0);
    };
    return { started, run, end };
  }

  test("one client's wait in the order they came, and a failed read frees its turn", async () => {
    const heavy = createHeavyReads({ total: 4, perClient: 1, waiting: 3 });
    const { started, run, end } = reads(heavy);
    const first = run('k', 'a', true).catch((error: Error) => error.message);
    const rest = ['b', 'c', 'd'].map((n) => run('k', n));
    await assert.rejects(run('k', 'e'), /this client has 1 being built and 3 waiting/);
    await sleep(0);
    assert.deepEqual(started, ['a']);
    await end('a');
    assert.equal(await first, 'a');
    for (const [i, name] of ['b', 'c', 'd'].entries()) {
      assert.deepEqual(started, ['a', ...['b', 'c', 'd'].slice(0, i + 1)]);
      await end(name);
      assert.equal(await rest[i], name);
    }
    assert.equal(heavy.clients, 0, 'nothing is kept once every read is answered');
  });

  test('the instance builds at most `total` at once, and free turns go to the waiting clients in rotation', async () => {
    const heavy = createHeavyReads({ total: 1, perClient: 2, waiting: 8 });
    const { started, run, end } = reads(heavy);
    const all = [run('a', 'a1'), run('a', 'a2'), run('a', 'a3'), run('b', 'b1'), run('c', 'c1')];
    await sleep(0);
    assert.deepEqual(started, ['a1']);
    for (const name of ['a1', 'a2', 'b1', 'c1', 'a3']) await end(name);
    await Promise.all(all);
    assert.deepEqual(started, ['a1', 'a2', 'b1', 'c1', 'a3']);
  });
});
