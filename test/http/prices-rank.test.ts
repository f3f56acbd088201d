/**
 * `include=rank` (docs/tariffs.md, "Rank and level"): each interval's rank in its local day and its
 * level against the mean of the 7 days before, on the total when a tariff is asked. Hourly EUR/MWh
 * series in Oslo whose 7 days before 2026-11-23 have known means (50, -10, 0, and 100 then 50); the
 * expected ranks and levels are computed here the plain way, with decimal.js.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Decimal } from 'decimal.js';
import { DEFAULT_TIERS, type Tier } from '../../src/domain/limits/tiers.js';
import { parseTariffs } from '../../src/domain/money/tariff-config.js';
import { addDays, dayBounds, formatInstant } from '../../src/domain/time/days.js';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';

const ZONE = 'Europe/Oslo';
const DAY = '2026-11-23';
const D = Decimal.clone({ precision: 60 });

/** A tier that may read 3 days back: the levels' reference shrinks to those. */
const SHORT: Tier = { ...DEFAULT_TIERS.free, name: 'short', historyDays: 3 } as Tier;

const TARIFFS = parseTariffs({
  grid: {
    currency: 'EUR',
    unit: 'MWh',
    timezone: ZONE,
    fees: [{ from: '2026-01-01', rules: [{ hours: '06:00-22:00', amount: 20 }, { amount: 5 }] }],
  },
});

function hours(date: string): string[] {
  const { start, end } = dayBounds(date, ZONE);
  const out: string[] = [];
  for (let t = start; t < end; t += 3_600_000) out.push(formatInstant(t, ZONE));
  return out;
}

/** The asked day's prices: the level boundaries against a mean of 50, ties, and a plain rest. */
// biome-ignore format: one price per hour, two rows of twelve
const DAY_PRICES = [
  '10', '30', '31', '45', '46', '57.5', '57.49', '70', '69.99', '40', '40', '50',
  '50', '12.5', '-5', '50', '40', '90', '50', '50', '50', '50', '50', '50',
];

/** Per series: the price of each of the 7 days before `DAY` (oldest first), and its prices on `DAY`. */
const SERIES: Record<string, { before: string[]; day: string[] }> = {
  RK: { before: Array(7).fill('50'), day: DAY_PRICES },
  RN: { before: Array(7).fill('-10'), day: DAY_PRICES.map((p, i) => ['-20', '0', '-10', '-11'][i % 4] ?? p) },
  RZ: { before: Array(7).fill('0'), day: DAY_PRICES.map((_, i) => ['-1', '0', '1'][i % 3] as string) },
  RH: { before: ['100', '100', '100', '100', '50', '50', '50'], day: Array(24).fill('50') },
};

/** 1 + how many values of the day are strictly lower. */
const ranksOf = (values: string[]) => values.map((v) => 1 + values.filter((o) => new D(o).lt(v)).length);

/** The documented level of `value` against `mean`: by (value − mean) / |mean|, or the sign for a mean of 0. */
function levelOf(value: string, mean: Decimal): string {
  if (mean.isZero())
    return new D(value).isNeg() ? 'very_cheap' : new D(value).isZero() ? 'normal' : 'very_expensive';
  const d = new D(value).minus(mean).dividedBy(mean.abs());
  if (d.lte(-0.4)) return 'very_cheap';
  if (d.lte(-0.1)) return 'cheap';
  if (d.gte(0.4)) return 'very_expensive';
  if (d.gte(0.15)) return 'expensive';
  return 'normal';
}

const meanOf = (values: string[]) => values.reduce((s, v) => s.plus(v), new D(0)).dividedBy(values.length);

interface Point {
  price: number;
  total?: number;
  rank?: number;
  level?: string | null;
}

// Both storage engines: the reference days are read with the store's own queries.
for (const engine of ['sqlite', 'postgres'] as const)
  describe(`rank and level (${engine})`, () => {
    let h: Harness;
    let reader: string;
    let short: string;
    const get = (url: string, key = reader) => h.app.inject({ url, headers: { 'x-api-key': key } });
    const points = async (url: string, key = reader): Promise<Point[][]> => {
      const response = await get(url, key);
      assert.equal(response.statusCode, 200, response.body);
      return (response.json() as { series: { prices: Point[] }[] }).series.map((s) => s.prices);
    };

    before(async () => {
      h = await createHarness({
        engine,
        devData: false,
        https: engine === 'sqlite',
        now: '2026-11-23T12:00:00Z',
        config: { tariffs: TARIFFS, tiers: { ...DEFAULT_TIERS, short: SHORT } },
      });
      const admin = (await h.createKey({ tier: 'enterprise', scopes: ['admin'] })).key;
      reader = (await h.createKey({ tier: 'enterprise', scopes: ['read'] })).key;
      short = (await h.createKey({ tier: 'short', scopes: ['read'] })).key;
      const rows: { symbol: string; start: string; price: string }[] = [];
      for (const [symbol, { before: earlier, day }] of Object.entries(SERIES)) {
        const created = await h.app.inject({
          method: 'PUT',
          url: `/api/v1/series/${symbol}`,
          headers: { 'x-api-key': admin, 'content-type': 'application/json' },
          payload: {
            name: symbol,
            kind: 'electricity',
            currency: 'EUR',
            unit: 'MWh',
            timezone: ZONE,
            resolution: 'PT1H',
          },
        });
        assert.equal(created.statusCode, 201, created.body);
        earlier.forEach((price, i) => {
          for (const start of hours(addDays(DAY, i - 7))) rows.push({ symbol, start, price });
        });
        hours(DAY).forEach((start, i) => {
          rows.push({ symbol, start, price: day[i] as string });
        });
      }
      await h.importPoints(rows);
    });
    after(() => h.close());

    test('ranks in the day share ties (1, 2, 2, 4) and levels follow the 7-day mean', async () => {
      for (const symbol of ['RK', 'RN', 'RZ', 'RH']) {
        const { before: earlier, day } = SERIES[symbol] as { before: string[]; day: string[] };
        const [got] = await points(`/api/v1/prices/${DAY}?symbols=${symbol}&include=rank`);
        const mean = meanOf(earlier);
        assert.deepEqual(
          got?.map((p) => p.rank),
          ranksOf(day),
          `${symbol} ranks`,
        );
        assert.deepEqual(
          got?.map((p) => p.level),
          day.map((v) => levelOf(v, mean)),
          `${symbol} levels`,
        );
      }
      // The boundaries themselves, against a mean of 50: 60% and 90% are still the cheaper level,
      // 115% and 140% already the dearer one.
      const [rk] = await points(`/api/v1/prices/${DAY}?symbols=RK&include=rank`);
      assert.deepEqual(
        rk?.slice(0, 9).map((p) => p.level),
        [
          'very_cheap',
          'very_cheap',
          'cheap',
          'cheap',
          'normal',
          'expensive',
          'normal',
          'very_expensive',
          'expensive',
        ],
      );
      assert.deepEqual(
        rk?.slice(9, 11).map((p) => p.rank),
        [6, 6], // 10, 30, 31, 12.5 and -5 are lower; the three 40s share 6
      );
      assert.equal(rk?.[3]?.rank, 9, '45 comes after the three 40s: 7 and 8 are skipped');
    });

    test('with a tariff, rank and level are of the total', async () => {
      const [got] = await points(`/api/v1/prices/${DAY}?symbols=RH&include=rank&tariff=grid`);
      // A flat price of 50: the night hours (fee 5) share rank 1, the 16 day hours (fee 20) rank 9.
      const local = hours(DAY).map((s) => Number(s.slice(11, 13)));
      assert.deepEqual(
        got?.map((p) => p.rank),
        local.map((hour) => (hour >= 6 && hour < 22 ? 9 : 1)),
      );
      assert.deepEqual(
        got?.map((p) => p.total),
        local.map((hour) => (hour >= 6 && hour < 22 ? 70 : 55)),
      );
      // The reference is of totals too: the days before, at 100 and 50 plus the same fees.
      const totalsBefore = SERIES.RH?.before.flatMap((p) =>
        local.map((hour) => new D(p).plus(hour >= 6 && hour < 22 ? 20 : 5).toFixed()),
      ) as string[];
      const mean = meanOf(totalsBefore);
      assert.deepEqual(
        got?.map((p) => p.level),
        got?.map((p) => levelOf(String(p.total), mean)),
      );
    });

    test('the reference holds only days the tier may read', async () => {
      const [all] = await points(`/api/v1/prices/${DAY}?symbols=RH&include=rank`);
      const [clamped] = await points(`/api/v1/prices/${DAY}?symbols=RH&include=rank`, short);
      assert.equal(all?.[0]?.level, levelOf('50', meanOf(SERIES.RH?.before ?? []))); // mean 78.57: cheap
      assert.equal(all?.[0]?.level, 'cheap');
      assert.equal(clamped?.[0]?.level, 'normal'); // the 3 days it may read: mean 50
    });

    test('the reference days count towards the weight of a read', async () => {
      // 120 days of an hourly series are 2,880 intervals, one unit; with the 7 days before, 3,048: two.
      const range = `/api/v1/prices?symbols=RK&from=${addDays(DAY, -119)}&to=${DAY}`;
      const plain = await get(range);
      const ranked = await get(`${range}&include=rank`);
      assert.equal(plain.statusCode, 200);
      assert.equal(ranked.statusCode, 200);
      assert.doesNotMatch(String(plain.headers['ratelimit-policy']), /pricepoint-cost/);
      assert.match(String(ranked.headers['ratelimit-policy']), /pricepoint-cost=2/);
    });

    test('a day without earlier prices has ranks and a null level', async () => {
      const [got] = await points(`/api/v1/prices/${addDays(DAY, -7)}?symbols=RK&include=rank`);
      assert.equal(got?.length, 24);
      assert.ok(got?.every((p) => p.rank === 1 && p.level === null));
    });

    test('include takes several values in any case; CSV gets rank,level last, only when asked', async () => {
      const csv = await get(`/api/v1/prices/${DAY}?symbols=RK&format=csv&include=Rank,provenance`);
      assert.equal(csv.statusCode, 200, csv.body);
      const lines = csv.body.split('\r\n');
      assert.equal(lines[0], 'symbol,date,start,end,price,currency,unit,complete,source,rank,level');
      assert.equal(
        lines[1],
        `RK,${DAY},2026-11-23T00:00:00+01:00,2026-11-23T01:00:00+01:00,10,EUR,MWh,true,import,2,very_cheap`,
      );
      const provenance = await get(`/api/v1/prices/${DAY}?symbols=RK&format=csv&include=provenance`);
      assert.equal(
        provenance.body.split('\r\n')[0],
        'symbol,date,start,end,price,currency,unit,complete,source',
      );
      const plain = await get(`/api/v1/prices/${DAY}?symbols=RK`);
      assert.doesNotMatch(plain.body, /"rank"/);
    });

    test('an unknown include value, and rank on latest, are 400 naming include', async () => {
      for (const url of [
        `/api/v1/prices/${DAY}?symbols=RK&include=rank,bogus`,
        '/api/v1/prices/latest?symbols=RK&include=rank',
        `/api/v1/prices/${DAY}?symbols=RK&include=`,
      ]) {
        const response = await get(url);
        assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
        assert.equal((response.json() as { parameter: string }).parameter, 'include');
      }
    });

    // The fast path looks answers up the same way whatever the engine: one is enough.
    if (engine === 'sqlite')
      test('the fast path serves a ranked, tariffed answer only for its own URL', async () => {
        const client = await listenHttps(h, 1);
        const base = `/api/v1/prices/${DAY}?symbols=RH`;
        const urls = [
          base,
          `${base}&tariff=grid`,
          `${base}&include=rank`,
          `${base}&tariff=grid&include=rank`,
        ];
        const first = new Map<string, string>();
        for (const url of urls) first.set(url, (await client.get(url, { 'x-api-key': reader })).text);
        const metric = async () => {
          const body = (await h.app.inject({ url: '/metrics' })).body;
          const line = body.split('\n').find((l) => l.startsWith('pricepoint_fast_path_answers_total{'));
          return line === undefined ? 0 : Number(line.split(' ').pop());
        };
        const fastBefore = await metric();
        for (const url of urls) {
          const again = await client.get(url, { 'x-api-key': reader });
          assert.equal(again.status, 200);
          assert.equal(again.text, first.get(url), url);
        }
        assert.equal((await metric()) - fastBefore, urls.length, 'every repeat was served by the fast path');
        const [plain, tariffed, ranked, both] = urls.map((u) => first.get(u) ?? '') as [
          string,
          string,
          string,
          string,
        ];
        assert.ok(!plain.includes('"total"') && !plain.includes('"rank"'));
        assert.ok(tariffed.includes('"total":70') && !tariffed.includes('"rank"'));
        assert.ok(ranked.includes('"rank":1') && !ranked.includes('"total"'));
        assert.ok(both.includes('"total":70') && both.includes('"rank":9'));
      });
  });
