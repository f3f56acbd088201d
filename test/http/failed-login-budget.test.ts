/**
 * The failed-login budget is exact on every engine (docs/decisions.md): of N unknown keys sent at
 * once from one address, exactly the budget (20 a minute) get 401 and reach the key store, the rest
 * get 429 `too_many_auth_failures` before any lookup; across instances that share Redis too. Valid
 * keys never use the budget up, and while it is used up no key is accepted from that address.
 *
 * The embedded instance's key store answers 2 ms late, as one across a network does: the budget
 * must hold because a unit is reserved before the lookup, not because the store answers at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { generateKey } from '../../src/domain/keys/key-format.js';
import { postgresSchemaUrl } from '../helpers/postgres.js';
import { redisSkipReason } from '../helpers/redis.js';
import { type BudgetInstances, openEmbeddedInstance, openScaleOutInstances } from './budget-instances.js';

const BUDGET = 20;
const NOW = Date.parse('2026-11-22T10:15:03.120Z');

const pg = await postgresSchemaUrl();
const redisSkip = await redisSkipReason();
const scaleOutSkip = 'skip' in pg ? pg.skip : redisSkip;

/** A keyed request from `ip` to instance `i % apps` (IPv4 test addresses: each test its own). */
function ask(apps: readonly FastifyInstance[], i: number, ip: string, key?: string) {
  return apps[i % apps.length]!.inject({
    method: 'GET',
    url: '/api/v1/usage',
    remoteAddress: ip,
    headers: key === undefined ? {} : { 'x-api-key': key },
  });
}

/** How many answers had each status and code, e.g. `{ '401 invalid_api_key': 20 }`. */
function tally(answers: readonly LightMyRequestResponse[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const answer of answers) {
    const code = answer.statusCode === 200 ? 'ok' : (answer.json() as { code: string }).code;
    const label = `${answer.statusCode} ${code}`;
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return counts;
}

function budgetBehaviour(open: () => Promise<BudgetInstances>, burst: number): void {
  let h: BudgetInstances;
  before(async () => {
    h = await open();
  });
  after(() => h?.close());

  test(`of ${burst} unknown keys at once from one address, exactly ${BUDGET} reach the key store and get 401; the rest get 429`, async () => {
    await h.clearOfMinuteEnd(20_000);
    const before = h.lookups();
    const answers = await Promise.all(
      Array.from({ length: burst }, (_, i) => ask(h.apps, i, '198.51.100.10', generateKey('live'))),
    );
    assert.deepEqual(tally(answers), {
      '401 invalid_api_key': BUDGET,
      '429 too_many_auth_failures': burst - BUDGET,
    });
    assert.equal(h.lookups() - before, BUDGET, 'key-store lookups');
    for (const refused of answers.filter((a) => a.statusCode === 429)) {
      assert.match(String(refused.headers['retry-after']), /^[1-9]\d*$/);
    }
    assert.equal(await h.budgetLeft('198.51.100.10'), 0);
  });

  test('a neighbour address keeps its own budget', async () => {
    await h.clearOfMinuteEnd(10_000);
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => ask(h.apps, i, '198.51.100.11', generateKey('live'))),
    );
    assert.equal(tally(answers)['401 invalid_api_key'], BUDGET);
  });

  test('valid keys never use the budget up: a burst of one fresh key costs one lookup and no unit', async () => {
    await h.clearOfMinuteEnd(20_000);
    const ip = '198.51.100.12';
    const keys = await Promise.all(Array.from({ length: 5 }, async () => (await h.createKey()).key));
    const before = h.lookups();
    // 5 fresh keys, 30 requests each, all at once: far more than the budget from one address.
    const answers = await Promise.all(
      Array.from({ length: 150 }, (_, i) => ask(h.apps, i, ip, keys[i % keys.length])),
    );
    assert.deepEqual(tally(answers), { '200 ok': 150 });
    assert.ok(h.lookups() - before <= keys.length * h.apps.length, 'one lookup per key and instance');
    assert.equal(await h.budgetLeft(ip), BUDGET, 'the units reserved for the lookups were given back');

    // The whole budget is still there for failures.
    const failures = await Promise.all(
      Array.from({ length: BUDGET + 5 }, (_, i) => ask(h.apps, i, ip, generateKey('live'))),
    );
    assert.equal(tally(failures)['401 invalid_api_key'], BUDGET);
  });

  test('past the budget no key is accepted from the address, a valid one included, and nothing is looked up', async () => {
    await h.clearOfMinuteEnd(20_000);
    const ip = '198.51.100.13';
    const { key: known } = await h.createKey();
    const { key: fresh } = await h.createKey();
    assert.equal((await ask(h.apps, 0, ip, known)).statusCode, 200);
    await Promise.all(Array.from({ length: BUDGET }, (_, i) => ask(h.apps, i, ip, generateKey('live'))));
    const before = h.lookups();
    const answers = await Promise.all([
      ask(h.apps, 0, ip, known),
      ask(h.apps, 1, ip, fresh),
      ask(h.apps, 0, ip, generateKey('live')),
      ask(h.apps, 1, ip, 'pp_live_not-even-well-formed'),
      ask(h.apps, 0, ip),
    ]);
    assert.deepEqual(tally(answers), { '429 too_many_auth_failures': 5 });
    assert.equal(h.lookups() - before, 0, 'refused before any lookup');
    assert.equal((await ask(h.apps, 0, '198.51.100.14', fresh)).statusCode, 200, 'elsewhere it works');
  });
}

describe('the failed-login budget on the embedded engine (key store answering 2 ms late)', () => {
  budgetBehaviour(() => openEmbeddedInstance(2, NOW), 250);
});

describe('the failed-login budget on PostgreSQL and Redis, over two instances', {
  skip: scaleOutSkip,
}, () => {
  budgetBehaviour(() => openScaleOutInstances(2), 2000);
});
