/**
 * An answer never tells which key exists, by its timing either (docs/decisions.md): revoked and
 * unknown keys take the same path (the store on their first request, a cache of refused keys for
 * the key cache time after it), so their answer times are drawn from one distribution.
 *
 * The test interleaves requests with 25 revoked and 25 unknown keys in a random order, 2,000 of
 * each, on SQLite and on PostgreSQL with Redis, moving the clock past the key cache time every fifth round so that first lookups are
 * sampled too. It compares the samples by rank, not by mean: on a loaded machine a pause lands on
 * either kind alike and moves a rank by one. The bound is on the effect size, |P(revoked slower)
 * - 0.5| <= 0.1: sampling noise is under 0.01 here, while a revoked key answered from memory and
 * an unknown one from the store differ by far more (about 0.3 before refused keys were cached).
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { generateKey, keyHash } from '../../src/domain/keys/key-format.js';
import type { KeyRecord } from '../../src/stores/types.js';
import { createHarness } from '../helpers/harness.js';
import { postgresSchemaUrl } from '../helpers/postgres.js';
import { redisSkipReason } from '../helpers/redis.js';
import { type BudgetInstances, openEmbeddedInstance, openScaleOutInstances } from './budget-instances.js';
import { compare } from './timing-stats.js';

const KEYS_PER_KIND = 25;
const KEY_CACHE_MS = 2000;
/** A failed-login budget no sample reaches: the refusal is what is timed, not the 429. */
const ENV = { PRICEPOINT_AUTH_FAILURES_PER_MINUTE: '1000000', PRICEPOINT_KEY_CACHE_MS: String(KEY_CACHE_MS) };

const postgres = await postgresSchemaUrl();
const redisSkip = await redisSkipReason();
const scaleOutSkip = 'skip' in postgres ? postgres.skip : redisSkip;
const ROUNDS = 80;
const WARM_UP_ROUNDS = 10;

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Samples both kinds in a random order, then bounds the effect size (see the top of this file). */
async function sampleAndCompare(h: BudgetInstances, t: TestContext): Promise<void> {
  const revoked: string[] = [];
  for (let i = 0; i < KEYS_PER_KIND; i++) {
    const { key, id } = await h.createKey();
    await h.revoke(id);
    revoked.push(key);
  }
  const unknown = Array.from({ length: KEYS_PER_KIND }, () => generateKey('live'));
  const requests = [
    ...revoked.map((key) => ({ kind: 'revoked' as const, key })),
    ...unknown.map((key) => ({ kind: 'unknown' as const, key })),
  ];
  const app = h.apps[0]!;
  const samples = { revoked: [] as number[], unknown: [] as number[] };
  for (let round = 0; round < WARM_UP_ROUNDS + ROUNDS; round++) {
    if (round % 5 === 0) h.advance(KEY_CACHE_MS + 1);
    for (const { kind, key } of shuffled(requests)) {
      const started = performance.now();
      const response = await app.inject({ url: '/api/v1/usage', headers: { 'x-api-key': key } });
      const elapsed = performance.now() - started;
      assert.equal(response.statusCode, 401, response.body);
      if (round >= WARM_UP_ROUNDS) samples[kind].push(elapsed);
    }
  }
  assert.equal(samples.revoked.length, 2000);
  const result = compare(samples.revoked, samples.unknown);
  const us = (ms: number) => `${Math.round(ms * 1000)} us`;
  const summary =
    `P(revoked slower than unknown) = ${result.superiority.toFixed(3)} (z = ${result.z.toFixed(1)}); ` +
    `medians: revoked ${us(result.medians[0])}, unknown ${us(result.medians[1])}`;
  t.diagnostic(summary);
  assert.ok(Math.abs(result.superiority - 0.5) <= 0.1, summary);
}

test('revoked and unknown keys are answered in indistinguishable time on SQLite (2,000 interleaved samples each)', async (t) => {
  const h = await openEmbeddedInstance(0, Date.parse('2026-11-22T10:15:03.120Z'), ENV);
  try {
    await sampleAndCompare(h, t);
  } finally {
    await h.close();
  }
});

test('revoked and unknown keys are answered in indistinguishable time on PostgreSQL and Redis', {
  skip: scaleOutSkip,
}, async (t) => {
  const h = await openScaleOutInstances(1, ENV);
  try {
    await sampleAndCompare(h, t);
  } finally {
    await h.close();
  }
});

test('a refused key is remembered for the key cache time only, and a key notice forgets it at once', async () => {
  const h = await createHarness({ devData: false });
  try {
    const ask = (key: string) => h.app.inject({ url: '/api/v1/usage', headers: { 'x-api-key': key } });
    const record = (key: string, id: string): KeyRecord => ({
      id,
      hash: keyHash(key, h.config.keySecret),
      last4: key.slice(-4),
      name: 'created elsewhere',
      tier: 'free',
      scopes: ['read'],
      createdAt: h.clock.now,
      expiresAt: null,
      revokedAt: null,
      lastUsedAt: null,
    });

    // A key refused once and then created (by another process, say): refused until the cache time
    // is over, then accepted.
    const late = generateKey('live');
    assert.equal((await ask(late)).statusCode, 401);
    await h.stores.keys.insert(record(late, 'late-key'));
    assert.equal((await ask(late)).statusCode, 401, 'still the remembered refusal');
    h.clock.advance(h.config.keyCacheMs);
    assert.equal((await ask(late)).statusCode, 200, 'found once the cache time is over');

    // A key change announced on the notice bus forgets every remembered refusal at once.
    const announced = generateKey('live');
    assert.equal((await ask(announced)).statusCode, 401);
    await h.stores.keys.insert(record(announced, 'announced-key'));
    await h.stores.notices.publish({ kind: 'keys', keyIds: ['announced-key'] });
    assert.equal((await ask(announced)).statusCode, 200);
  } finally {
    await h.close();
  }
});
