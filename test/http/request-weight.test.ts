/**
 * Heavy requests are paid for (docs/using-the-api.md "Rate limits"): a request for days takes one unit per started
 * 3,000 intervals it spans on its series' own grids, so a year of a 15-minute series takes 12 units
 * of every limit, not one, and a tier's limits bound the work a key can ask for. The harness clock
 * stands still at 2026-11-22T10:15:03.120Z, so every request of a test falls in the same windows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_TIERS, type Tier } from '../../src/domain/limits/tiers.js';
import { parseTariffs } from '../../src/domain/money/tariff-config.js';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';

/** 365 days (2025-11-23 to 2026-11-22) of NO1 at PT15M: 35,040 intervals, 12 units. */
const NO1_YEAR = '/api/v1/prices?from=2025-11-23&to=2026-11-22&symbols=NO1';
/** A tier with one limit of 30 a minute, unlimited history. */
const weighty: Tier = {
  name: 'weighty',
  limits: [{ name: 'minute', limit: 30, windowSeconds: 60 }],
  countPer: 'key',
  kinds: null,
  historyDays: null,
  streams: 3,
};
/** Room for the heaviest request: 1,000 a minute. */
const roomy: Tier = {
  ...weighty,
  name: 'roomy',
  limits: [{ name: 'minute', limit: 1000, windowSeconds: 60 }],
};
const tiers = { ...DEFAULT_TIERS, weighty, roomy };

describe('requests for days are counted by weight', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness({ config: { tiers } });
  });
  after(() => h.close());

  const get = async (key: string, url: string) =>
    h.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
  /** Units a request took from a fresh `roomy` key: 1,000 minus what its answer says is left. */
  const weightOf = async (url: string) => {
    const { key } = await h.createKey({ tier: 'roomy' });
    const response = await get(key, url);
    assert.equal(response.statusCode, 200, response.body);
    return 1000 - Number(response.headers['x-ratelimit-remaining']);
  };

  test('a year of one 15-minute series takes 12 units of each pro limit, and RateLimit-Policy says so', async () => {
    const { key } = await h.createKey({ tier: 'pro' });
    const response = await get(key, NO1_YEAR);
    assert.equal(response.statusCode, 200, response.body);
    const days = (JSON.parse(response.body) as { series: unknown[] }).series;
    assert.equal(days.length, 365);
    assert.equal(
      response.headers['ratelimit-policy'],
      '"second";q=20;w=1;pricepoint-cost=12, "minute";q=1200;w=60;pricepoint-cost=12',
    );
    assert.equal(response.headers['x-ratelimit-limit'], '20');
    assert.equal(response.headers['x-ratelimit-remaining'], '8');
    assert.equal(response.headers.ratelimit, '"second";r=8;t=1');
    const usage = await get(key, '/api/v1/usage');
    const limits = (JSON.parse(usage.body) as { limits: { name: string; remaining: number }[] }).limits;
    assert.deepEqual(
      limits.map((l) => [l.name, l.remaining]),
      [
        ['second', 8],
        ['minute', 1188],
      ],
    );
  });

  test('the weight counts intervals on each series own grid, whatever resolution or format is served', async () => {
    assert.equal(await weightOf(NO1_YEAR), 12);
    assert.equal(await weightOf(`${NO1_YEAR}&resolution=P1D`), 12, 'the quarter hours are read all the same');
    assert.equal(await weightOf(`${NO1_YEAR}&format=csv`), 12);
    // 365 days of an hourly series: 8,760 intervals.
    assert.equal(await weightOf('/api/v1/prices?from=2025-11-23&to=2026-11-22&symbols=NYISO-J'), 3);
    // 31 days of quarter hours are 2,976 intervals, 32 days 3,072.
    assert.equal(await weightOf('/api/v1/prices?from=2026-10-23&to=2026-11-22&symbols=NO1'), 1);
    assert.equal(await weightOf('/api/v1/prices?from=2026-10-22&to=2026-11-22&symbols=NO1'), 2);
    // Every series of the development data, 363 intervals a day: 132,495 in the year.
    assert.equal(await weightOf('/api/v1/prices?from=2025-11-23&to=2026-11-22'), 45);
  });

  test('a day, yesterday to tomorrow and the latest price of every series are one unit, without a cost in the policy', async () => {
    for (const url of [
      '/api/v1/prices/today',
      '/api/v1/prices/2026-11-01?resolution=PT1H',
      '/api/v1/prices?from=yesterday&to=tomorrow',
      '/api/v1/prices/latest',
    ]) {
      const { key } = await h.createKey({ tier: 'weighty' });
      const response = await get(key, url);
      assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
      assert.equal(response.headers['x-ratelimit-remaining'], '29', url);
      assert.equal(response.headers['ratelimit-policy'], '"minute";q=30;w=60', url);
    }
  });

  test('a request that is refused for its parameters takes one unit, as any error does', async () => {
    const { key } = await h.createKey({ tier: 'weighty' });
    const backwards = await get(key, '/api/v1/prices?from=2026-11-22&to=2025-11-23&symbols=NO1');
    assert.equal(backwards.statusCode, 400);
    const unknown = await get(key, '/api/v1/prices?from=2025-11-23&to=2026-11-22&symbols=NOPE');
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.headers['x-ratelimit-remaining'], '28');
  });

  test('a key with fewer units left than a year weighs gets 429 for it, takes nothing, and lighter requests still pass', async () => {
    const { key } = await h.createKey({ tier: 'weighty' });
    for (const left of ['18', '6']) {
      const response = await get(key, NO1_YEAR);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.headers['x-ratelimit-remaining'], left);
    }
    const refused = await get(key, NO1_YEAR);
    assert.equal(refused.statusCode, 429, refused.body);
    const problem = JSON.parse(refused.body) as {
      code: string;
      detail: string;
      'violated-policies': string[];
    };
    assert.equal(problem.code, 'rate_limited');
    assert.deepEqual(problem['violated-policies'], ['minute']);
    assert.match(problem.detail, /weighs \(12\)/);
    assert.equal(refused.headers['ratelimit-policy'], '"minute";q=30;w=60;pricepoint-cost=12');
    assert.equal(refused.headers['retry-after'], '57');
    const light = await get(key, '/api/v1/prices/today?symbols=NO1');
    assert.equal(light.statusCode, 200);
    assert.equal(light.headers['x-ratelimit-remaining'], '5', 'the refused request took nothing');
  });
});

describe('a request heavier than a limit', () => {
  test('takes all of that limit in a fresh window instead of never passing', async () => {
    const h = await createHarness({ config: { tiers } });
    try {
      const { key } = await h.createKey({ tier: 'weighty' });
      const all = '/api/v1/prices?from=2025-11-23&to=2026-11-22'; // 44 units
      const first = await h.app.inject({ url: all, headers: { 'x-api-key': key } });
      assert.equal(first.statusCode, 200);
      assert.equal(first.headers['x-ratelimit-remaining'], '0');
      assert.equal(first.headers['ratelimit-policy'], '"minute";q=30;w=60;pricepoint-cost=30');
      const again = await h.app.inject({ url: all, headers: { 'x-api-key': key } });
      assert.equal(again.statusCode, 429);
      h.clock.advance(57_000); // the next minute
      const next = await h.app.inject({ url: all, headers: { 'x-api-key': key } });
      assert.equal(next.statusCode, 200);
    } finally {
      await h.close();
    }
  });
});

describe('computing what a read answers is paid for too', () => {
  /** NO1 and DE-LU are EUR/MWh: this tariff converts them into NOK per kWh. */
  const config = {
    tiers,
    fx: { EUR: { NOK: 'EURNOK' } },
    tariffs: parseTariffs({
      household: {
        currency: 'NOK',
        unit: 'kWh',
        vat: [{ from: '2020-01-01', percent: 25 }],
        fees: [
          { from: '2020-01-01', rules: [{ hours: '06:00-22:00', amount: '0.3640' }, { amount: '0.2640' }] },
        ],
      },
    }),
  };
  let h: Harness;
  before(async () => {
    h = await createHarness({ config });
  });
  after(() => h.close());

  /** The units a request took from a fresh `roomy` key, and what its RateLimit-Policy says it cost. */
  const costOf = async (url: string) => {
    const { key } = await h.createKey({ tier: 'roomy' });
    const response = await h.app.inject({ url, headers: { 'x-api-key': key } });
    assert.equal(response.statusCode, 200, response.body);
    const stated = /pricepoint-cost=(\d+)/.exec(String(response.headers['ratelimit-policy']))?.[1] ?? '1';
    return [1000 - Number(response.headers['x-ratelimit-remaining']), Number(stated)];
  };
  // 31 days of one quarter-hour series: 2,976 intervals, one unit when only read.
  const MONTH = '/api/v1/prices?from=2026-10-23&to=2026-11-22&symbols=NO1';

  test('a conversion, a tariff and ranks add 1, 2 and 1 intervals read per interval answered', async () => {
    assert.deepEqual(await costOf(MONTH), [1, 1]);
    assert.deepEqual(await costOf(`${MONTH}&currency=NOK`), [2, 2], '2,976 × 2');
    assert.deepEqual(await costOf(`${MONTH}&unit=kWh`), [2, 2], 'a unit is a conversion too');
    // 2,976 × 2, and the 7 days before read for the levels: 672.
    assert.deepEqual(await costOf(`${MONTH}&include=rank`), [3, 3]);
    // Converted into NOK per kWh and under the tariff: 2,976 × 4.
    assert.deepEqual(await costOf(`${MONTH}&tariff=household`), [4, 4]);
    assert.deepEqual(
      await costOf(`${MONTH}&tariff=household&include=rank`),
      [6, 6],
      '2,976 × 5 + 672 = 15,552',
    );
  });

  test('a household month of two series weighs 11 units; a household day still one', async () => {
    assert.deepEqual(
      await costOf(
        '/api/v1/prices?from=2026-10-23&to=2026-11-22&symbols=NO1,DE-LU&tariff=household&include=rank',
      ),
      [11, 11],
      '5,952 × 5 + 1,344',
    );
    assert.deepEqual(
      await costOf('/api/v1/prices/today?symbols=NO1,DE-LU&tariff=household&include=rank'),
      [1, 1],
    );
    // Two days of the two: 2 × (192 × 5 + 672) = 3,264.
    assert.deepEqual(
      await costOf('/api/v1/prices?from=yesterday&to=today&symbols=NO1,DE-LU&tariff=household&include=rank'),
      [2, 2],
    );
  });
});

describe('a repeated heavy request over HTTPS', () => {
  let h: Harness;
  let client: Awaited<ReturnType<typeof listenHttps>>;
  before(async () => {
    h = await createHarness({ https: true, config: { tiers } });
    client = await listenHttps(h, 4);
  });
  after(async () => {
    await client.close();
    await h.close();
  });

  test('is charged its weight every time: it is never served as a one-unit cached answer', async () => {
    const { key } = await h.createKey({ tier: 'weighty' });
    const left: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await client.get(NO1_YEAR, { 'x-api-key': key, 'accept-encoding': 'br' });
      left.push(String(response.headers['x-ratelimit-remaining']));
      assert.equal(response.status, i < 2 ? 200 : 429);
    }
    assert.deepEqual(left, ['18', '6', '6']);
    const day = await client.get('/api/v1/prices/today?symbols=NO1', { 'x-api-key': key });
    assert.equal(day.headers['x-ratelimit-remaining'], '5');
  });
});
