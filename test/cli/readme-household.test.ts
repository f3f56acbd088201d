/**
 * The README's household example (section "Reading prices") run as written against a real server
 * started as `npm start` starts it, with nothing else: the development data set brings NO1, EURNOK
 * and the `fx:` and `tariffs:` of docs/settings.md (the test checks that they are the same). Only
 * the data folder and the port are swapped. Every expected number is computed here with decimal.js.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Decimal } from 'decimal.js';
import { parse as parseYaml } from 'yaml';
import { DEV_FX, DEV_TARIFFS } from '../../src/dev-data/dev-config.js';
import { DEMO_API_KEY } from '../../src/dev-data/dev-data.js';
import { parseTariffs } from '../../src/domain/money/tariff-config.js';
import { addDays } from '../../src/domain/time/days.js';
import {
  cleanUp,
  httpsClient,
  REPO,
  runCommand,
  type ServerProcess,
  startServer,
  tempDir,
} from '../helpers/process.js';

const D = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_UP, toExpNeg: -100, toExpPos: 100 });
const readme = readFileSync(join(REPO, 'README.md'), 'utf8');

/** The first `sh` block after the household example's lead. */
function householdBlock(): string {
  const section = readme.split('A household example, on `npm start` alone:')[1] ?? '';
  const found = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(found, 'the README has a household example in a sh block');
  return found;
}

/** The `fx:` and `tariffs:` blocks of docs/settings.md, read as a config file reads them. */
function settingsBlocks(): { fx: unknown; tariffs: Record<string, never> } {
  const section = readFileSync(join(REPO, 'docs', 'settings.md'), 'utf8');
  const blocks = [...section.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] as string);
  const fx = blocks.find((b) => b.startsWith('fx:'));
  const tariffs = blocks.find((b) => b.startsWith('tariffs:'));
  assert.ok(fx && tariffs, 'docs/settings.md shows fx: and tariffs:');
  return parseYaml(`${fx}${tariffs}`);
}

interface Point {
  start: string;
  price: number;
}
interface Interval extends Point {
  end: string;
  fx?: { symbol: string; date: string; rate: number };
}

/** The number texts of one member of every interval of a JSON line, as the server wrote them. */
const members = (line: string, name: string) =>
  [...line.matchAll(new RegExp(`"${name}":(-?[0-9.]+)`, 'g'))].map((m) => m[1] as string);

const text = (value: Decimal) => (value.toFixed() === '-0' ? '0' : value.toFixed());

describe('the README household example', () => {
  let server: ServerProcess;
  let dataDir: string;
  let key: string;
  let https: ReturnType<typeof httpsClient>;
  const get = async (path: string) => {
    const answer = await https.get(`${server.url}/api/v1${path}`, { 'x-api-key': key });
    assert.equal(answer.status, 200, answer.text);
    return answer.text;
  };

  before(async () => {
    dataDir = await tempDir('pricepoint-readme-household-');
    server = await startServer(['serve', '--dev-data'], { PRICEPOINT_DATA_DIR: dataDir });
    key = DEMO_API_KEY;
    https = httpsClient(join(dataDir, 'tls', 'localhost-cert.pem'));
  });
  after(cleanUp);

  test("the development data set's fx: and tariffs: are README's Settings blocks", () => {
    const { fx, tariffs } = settingsBlocks();
    assert.deepEqual(fx, DEV_FX);
    assert.deepEqual(parseTariffs(tariffs), DEV_TARIFFS);
  });

  test('runs as written: NO1 in NOK per kWh under the household tariff, ranked, and the cheapest three hours tonight', async () => {
    const script = householdBlock()
      .replaceAll('.pricepoint/', `${dataDir}/`)
      .replaceAll('localhost:8443', `localhost:${server.port}`);
    const run = await runCommand('bash', ['-e', '-o', 'pipefail', '-c', script], process.env, {
      cwd: dataDir,
      timeoutMs: 60_000,
    });
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const lines = run.stdout.split('\n').filter((line) => line.startsWith('{'));
    assert.equal(lines.length, 2, run.stdout);
    const [todayLine, cheapestLine] = lines as [string, string];

    // Today, hourly, under the tariff: the parts add up, fees by Oslo hour, VAT 25% rounded to 9 decimals.
    const today = JSON.parse(todayLine) as {
      series: {
        symbol: string;
        date: string;
        currency: string;
        unit: string;
        tariff: string;
        fx: { symbol: string; date: string; rate: number };
        prices: (Interval & { rank: number; level: string | null })[];
      }[];
    };
    const [day] = today.series;
    assert.ok(day);
    assert.deepEqual(
      [day.symbol, day.currency, day.unit, day.tariff, day.fx.symbol],
      ['NO1', 'NOK', 'kWh', 'no1-household', 'EURNOK'],
    );
    assert.ok(day.prices.length >= 23 && day.prices.length <= 25, `hours of today: ${day.prices.length}`);
    const eur = JSON.parse(await get(`/prices/${day.date}?symbols=NO1&resolution=PT1H`)) as {
      series: { prices: Point[] }[];
    };
    const spots = members(todayLine, 'spot');
    const fees = members(todayLine, 'fees');
    const vats = members(todayLine, 'vat');
    const totals = members(todayLine, 'total');
    day.prices.forEach((p, n) => {
      const rate = p.fx?.rate ?? day.fx.rate;
      const stored = eur.series[0]?.prices[n];
      assert.equal(stored?.start, p.start);
      const spot = new D(stored.price).times(rate).toDecimalPlaces(6).dividedBy(1000);
      const hour = Number(p.start.slice(11, 13));
      const fee = new D(hour >= 6 && hour < 22 ? '0.4353' : '0.3353');
      const vat = spot.plus(fee).times('0.25').toDecimalPlaces(9);
      assert.deepEqual(
        [spots[n], fees[n], vats[n], totals[n]],
        [text(spot), text(fee), text(vat), text(spot.plus(fee).plus(vat))],
        p.start,
      );
    });
    const dayTotals = totals.map((t) => new D(t));
    assert.deepEqual(
      day.prices.map((p) => p.rank),
      dayTotals.map((t) => 1 + dayTotals.filter((o) => o.lt(t)).length),
    );
    assert.ok(
      day.prices.every((p) => typeof p.level === 'string'),
      'levels against the 7 days before',
    );

    // Tonight: the window of 12 consecutive quarter hours with the lowest total sum, earliest first.
    const cheapest = JSON.parse(cheapestLine) as {
      series: {
        tariff: string;
        from: string;
        to: string;
        complete: boolean;
        missing: unknown[];
        cheapest: {
          start: string;
          end: string;
          mean: number;
          prices: (Interval & { total: number })[];
        } | null;
      }[];
    };
    const [night] = cheapest.series;
    assert.ok(night?.cheapest, cheapestLine);
    assert.equal(night.tariff, 'no1-household');
    assert.match(night.from, /^\d{4}-\d{2}-\d{2}T18:00:00\+0[12]:00$/);
    assert.match(night.to, /^\d{4}-\d{2}-\d{2}T07:00:00\+0[12]:00$/);
    assert.equal(night.to.slice(0, 10), addDays(night.from.slice(0, 10), 1));
    assert.equal(night.complete, true, 'tonight is published in the development data');
    assert.deepEqual(night.missing, []);
    const range = await get(
      `/prices?from=${night.from.slice(0, 10)}&to=${night.to.slice(0, 10)}&symbols=NO1&tariff=no1-household`,
    );
    const quarters = (JSON.parse(range) as { series: { prices: Interval[] }[] }).series.flatMap(
      (s) => s.prices,
    );
    const quarterTotals = members(range, 'total');
    assert.equal(quarterTotals.length, quarters.length);
    const inRange = quarters
      .map((q, n) => ({ start: q.start, total: new D(quarterTotals[n] as string) }))
      .filter(
        (q) => Date.parse(q.start) >= Date.parse(night.from) && Date.parse(q.start) < Date.parse(night.to),
      );
    // 13 hours of quarter hours (12 or 14 on a night the clocks change).
    assert.equal(inRange.length, (Date.parse(night.to) - Date.parse(night.from)) / 900_000);
    let best = 0;
    let bestSum: Decimal | undefined;
    for (let i = 0; i + 12 <= inRange.length; i++) {
      const sum = inRange.slice(i, i + 12).reduce((a, q) => a.plus(q.total), new D(0));
      if (bestSum === undefined || sum.lt(bestSum)) [best, bestSum] = [i, sum];
    }
    assert.equal(night.cheapest.start, inRange[best]?.start);
    assert.deepEqual(
      night.cheapest.prices.map((p) => p.start),
      inRange.slice(best, best + 12).map((q) => q.start),
    );
    assert.equal(Date.parse(night.cheapest.end) - Date.parse(night.cheapest.start), 3 * 3_600_000);
    const window = inRange.slice(best, best + 12);
    const decimals = Math.max(...window.map((q) => q.total.decimalPlaces()));
    assert.equal(night.cheapest.mean, Number((bestSum as Decimal).dividedBy(12).toDecimalPlaces(decimals)));
  });
});
