/**
 * Tier rules over HTTP (docs/keys-and-tiers.md): a tier from the operator's config file
 * with `kinds: ["electricity"]` reads only electricity series. `historyDays` cannot be reached
 * through `/prices/today`; src/services/price-service.test.ts proves it on the service.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEV_SERIES } from '../../src/dev-data/dev-data.js';
import { createHarness, type Harness } from '../helpers/harness.js';

let h: Harness;
let dir: string;
let partner: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pricepoint-tiers-'));
  const path = join(dir, 'pricepoint.json');
  writeFileSync(
    path,
    JSON.stringify({
      tiers: {
        partner: {
          limits: [{ name: 'minute', limit: 300, windowSeconds: 60 }],
          kinds: ['electricity'],
          historyDays: 365,
        },
      },
    }),
  );
  h = await createHarness({ env: { PRICEPOINT_CONFIG: path } });
  partner = (await h.createKey({ tier: 'partner' })).key;
});
after(async () => {
  await h.close();
  await rm(dir, { recursive: true, force: true });
});

function today(key: string, query = '') {
  return h.app.inject({ url: `/api/v1/prices/today${query}`, headers: { 'x-api-key': key } });
}

describe('tier kinds', () => {
  test('without symbols, an electricity-only tier gets exactly the electricity series', async () => {
    const response = await today(partner);
    assert.equal(response.statusCode, 200);
    const symbols = (response.json().series as { symbol: string; kind: string }[]).map((s) => s.symbol);
    const electricity = DEV_SERIES.filter((s) => s.kind === 'electricity').map((s) => s.symbol);
    assert.ok(electricity.length > 0 && electricity.length < DEV_SERIES.length, 'the data set mixes kinds');
    assert.deepEqual(symbols, [...electricity].sort());
  });

  test('asking for an fx symbol: 403 insufficient_scope naming it, and only it', async () => {
    const response = await today(partner, '?symbols=NO1,eurusd,BTC-USD');
    assert.equal(response.statusCode, 403);
    const problem = response.json();
    assert.equal(problem.code, 'insufficient_scope');
    assert.deepEqual(problem.symbols, ['EURUSD', 'BTC-USD']);
    assert.match(problem.detail, /Tier partner may not read: EURUSD, BTC-USD/);
    assert.ok(response.headers['x-ratelimit-remaining'] !== undefined, 'a refused read is still counted');
  });

  test('an electricity symbol asked by name is served', async () => {
    const response = await today(partner, '?symbols=de-lu');
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().series[0].symbol, 'DE-LU');
  });

  test('a tier with every kind (free) reads the fx series', async () => {
    const { key } = await h.createKey({ tier: 'free' });
    const response = await today(key, '?symbols=EURUSD');
    assert.equal(response.statusCode, 200);
  });

  test('usage shows the kinds and history of the configured tier', async () => {
    const response = await h.app.inject({ url: '/api/v1/usage', headers: { 'x-api-key': partner } });
    assert.equal(response.statusCode, 200);
    const body = response.json();
    assert.equal(body.tier, 'partner');
    assert.deepEqual(body.kinds, ['electricity']);
    assert.equal(body.historyDays, 365);
    assert.deepEqual(
      body.limits.map((l: { name: string; limit: number }) => [l.name, l.limit]),
      [['minute', 300]],
    );
  });
});
