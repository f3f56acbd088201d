/**
 * The scan behind `pricepoint check` and the server's start-up warning: it reads each series in
 * windows (never all its points at once), finds every point off the grid in whichever window it
 * lies, groups them by the local date of the series' zone, and stops when told to.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { findOffGridPoints, warnAboutOffGridPoints } from '../../src/services/grid-check.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import type { PriceStore, Stores } from '../../src/stores/types.js';
import { REPO } from '../helpers/process.js';
import { usePinnedTzdata } from '../time/use-pinned-tzdata.js';

const HOUR_MS = 3_600_000;
const WINDOW_INTERVALS = 8192;
/** Whole UTC hours are half past in Kolkata (+05:30): off its hourly grid. */
const OFF_GRID = [
  '2024-02-10T05:00:00Z',
  '2025-06-01T05:00:00Z',
  '2025-06-01T06:00:00Z',
  '2026-12-31T20:00:00Z',
];

let stores: Stores;
const reads: number[] = [];

/** The store, counting how many points each read returns. */
function countingReads(prices: PriceStore): PriceStore {
  return Object.assign(Object.create(prices) as PriceStore, {
    pricesBetween: async (symbol: string, from: number, to: number) => {
      const found = await prices.pricesBetween(symbol, from, to);
      reads.push(found.length);
      return found;
    },
  });
}

describe('the scan of stored points against their grid', () => {
  before(async () => {
    usePinnedTzdata(join(REPO, 'tzdata'));
    stores = await openEmbeddedStores(':memory:');
    const series = { kind: 'electricity', currency: 'INR', unit: 'MWh', timezone: 'Asia/Kolkata' } as const;
    await stores.prices.upsertSeries({
      ...series,
      symbol: 'KOL',
      name: 'Kolkata hourly',
      resolution: 'PT1H',
    });
    await stores.prices.upsertSeries({
      ...series,
      symbol: 'EMPTY',
      name: 'No prices yet',
      resolution: 'PT1H',
    });
    // Three years of hours on the grid (xx:30Z), 26,304 points: four windows of 8,192 hours.
    const points = [];
    for (let t = Date.parse('2023-12-31T18:30:00Z'); t < Date.parse('2026-12-31T18:30:00Z'); t += HOUR_MS) {
      points.push({ start: t, price: '7.5' });
    }
    points.push(...OFF_GRID.map((iso) => ({ start: Date.parse(iso), price: '9' })));
    // Written straight into the store, as rules that have changed since would have let them in.
    await stores.prices.upsertPrices('KOL', points);
  });
  after(() => stores.close());

  test('finds every point off the grid, in every window, grouped by local date, reading a window at a time', async () => {
    reads.length = 0;
    const report = await findOffGridPoints(countingReads(stores.prices));
    assert.equal(report.complete, true);
    assert.equal(report.checkedSeries, 2);
    assert.equal(report.checkedPoints, 26_304 + OFF_GRID.length);
    assert.equal(report.offGridPoints, 4);
    assert.deepEqual(report.series, [
      {
        symbol: 'KOL',
        timezone: 'Asia/Kolkata',
        resolution: 'PT1H',
        points: 4,
        dates: [
          {
            date: '2024-02-10',
            points: 1,
            first: '2024-02-10T10:30:00+05:30',
            dayStart: '2024-02-10T00:00:00+05:30',
          },
          {
            date: '2025-06-01',
            points: 2,
            first: '2025-06-01T10:30:00+05:30',
            dayStart: '2025-06-01T00:00:00+05:30',
          },
          {
            date: '2027-01-01',
            points: 1,
            first: '2027-01-01T01:30:00+05:30',
            dayStart: '2027-01-01T00:00:00+05:30',
          },
        ],
      },
    ]);
    // One window of hours holds at most 8,192 points on the grid, and each off-grid one beside them.
    assert.ok(reads.length >= 4, `${reads.length} reads`);
    assert.ok(Math.max(...reads) <= WINDOW_INTERVALS + OFF_GRID.length, `largest read ${Math.max(...reads)}`);
  });

  test('stops when its signal is aborted, and says it did not finish', async () => {
    const report = await findOffGridPoints(stores.prices, AbortSignal.abort());
    assert.equal(report.complete, false);
    assert.equal(report.checkedPoints, 0);
  });

  test("the server's start-up scan logs one warning with the count and the series", async () => {
    const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
    const log = {
      warn: (fields: object, message: string) =>
        lines.push({ level: 'warn', fields: { ...fields }, message }),
      info: (fields: object, message: string) =>
        lines.push({ level: 'info', fields: { ...fields }, message }),
      debug: (fields: object, message: string) =>
        lines.push({ level: 'debug', fields: { ...fields }, message }),
    };
    await warnAboutOffGridPoints(stores.prices, log, new AbortController().signal);
    assert.equal(lines.length, 1);
    assert.equal(lines[0]?.level, 'warn');
    assert.deepEqual(lines[0]?.fields, { offGridPoints: 4, series: ['KOL'], seriesCount: 1 });
    assert.match(lines[0]?.message ?? '', /run `pricepoint check`/);
  });
});
