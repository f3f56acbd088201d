/**
 * Coarser intervals are exact means of what lies inside them (docs/using-the-api.md "Reading prices",
 * `resolution`), in zones whose offsets are not whole hours apart: series of quarter hours, half
 * hours and hours in odd-offset zones, read with `tz=` in others at a coarser resolution, through
 * the price service over a real in-memory SQLite store, with the pinned tz release in tzdata/.
 * The expected answer comes from the independent TZif reader (test/helpers/tzif-reference.ts)
 * and BigInt alone: where a coarse interval would begin inside one of the series' intervals the read
 * is refused with 400 `invalid_parameter` naming `resolution`; everywhere else every coarse interval
 * is the exact mean of exactly the series' intervals lying inside it, and every point of the days
 * read is counted in one of them.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { ApiError } from '../../src/domain/errors/api-error.js';
import { DEFAULT_TIERS, type Tier } from '../../src/domain/limits/tiers.js';
import { createPriceService, type PriceService } from '../../src/services/price-service.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import type { Stores } from '../../src/stores/types.js';
import { REPO } from '../helpers/process.js';
import {
  addDays,
  type ReferenceDays,
  referenceDays,
  type SubDailyResolution,
} from '../time/reference-days.js';
import { usePinnedTzdata } from '../time/use-pinned-tzdata.js';
import {
  type CoarseResolution,
  crossing,
  expectedMeans,
  gridIntervals,
  randomPoints,
  seededRandom,
} from './coarse-means-reference.js';

const TZDATA = join(REPO, 'tzdata');
const NOW = Date.parse('2026-11-24T12:05:00Z');
const everything: Tier = { ...(DEFAULT_TIERS.enterprise as Tier), name: 'all', historyDays: null };

/** Offsets of a quarter or half hour, 30-minute DST, 00:01 changes, and whole hours to compare. */
const ZONES = [
  'Asia/Kathmandu', // +05:45
  'Asia/Kolkata', // +05:30
  'Australia/Eucla', // +08:45
  'Pacific/Chatham', // +12:45, +13:45 in summer
  'Australia/Lord_Howe', // +10:30, +11 in summer (a 30-minute change)
  'Antarctica/Casey', // +08 and +11, changed at 00:01 in 2020-2022 (21-hour days)
  'America/St_Johns', // -03:30, -02:30 in summer
  'Antarctica/Troll', // +00 and +02 (22- and 26-hour days)
  'Europe/Oslo',
  'UTC',
] as const;
const FINE: SubDailyResolution[] = ['PT15M', 'PT30M', 'PT1H'];
const COARSE: CoarseResolution[] = ['PT30M', 'PT1H', 'P1D'];
const MINUTES = { PT15M: 15, PT30M: 30, PT1H: 60, P1D: 1440 } as const;

const references = new Map<string, ReferenceDays>();
function reference(zone: string): ReferenceDays {
  let found = references.get(zone);
  if (found === undefined) {
    found = referenceDays(TZDATA, zone);
    references.set(zone, found);
  }
  return found;
}

/** Local dates 2020-2030 on which either zone changes its offset, the day before and after too. */
function changeDates(a: string, b: string): string[] {
  const dates = new Set([
    ...reference(a).changeDates('2020-01-03', '2030-12-28', 1),
    ...reference(b).changeDates('2020-01-03', '2030-12-28', 1),
  ]);
  return [...dates].sort();
}

interface Case {
  seriesZone: string;
  fine: SubDailyResolution;
  readZone: string;
  coarse: CoarseResolution;
  /** Picks a date: near a change of either zone when `nearChange`, else any day of 2020-2030. */
  pick: number;
  nearChange: boolean;
  days: number;
  density: number;
  seed: number;
}

const cases = fc
  .record({
    seriesZone: fc.constantFrom(...ZONES),
    fine: fc.constantFrom(...FINE),
    readZone: fc.constantFrom(...ZONES),
    coarse: fc.constantFrom(...COARSE),
    pick: fc.nat(),
    nearChange: fc.boolean(),
    days: fc.integer({ min: 1, max: 3 }),
    density: fc.constantFrom(1, 0.9, 0.5, 0.1),
    seed: fc.integer(),
  })
  .filter((c) => MINUTES[c.coarse] > MINUTES[c.fine]);

/** A named case: the same shape, with the date given directly. */
const named = (c: Omit<Case, 'pick' | 'nearChange' | 'density' | 'seed'> & { date: string }) => c;

describe('coarse means in odd-offset zones, against the independent TZif reader', () => {
  let stores: Stores;
  let service: PriceService;
  let symbols = 0;

  before(async () => {
    usePinnedTzdata(TZDATA);
    stores = await openEmbeddedStores(':memory:');
    service = createPriceService({ prices: stores.prices, clock: () => NOW });
  });
  after(() => stores.close());

  /** Stores a series with random points around the days and reads them; checks what comes back. */
  async function check(c: Case & { date: string }): Promise<'refused' | 'served'> {
    const symbol = `S${++symbols}`;
    const to = addDays(c.date, c.days - 1);
    const seriesRef = reference(c.seriesZone);
    const readRef = reference(c.readZone);
    // The series' intervals over two more days each side than read: every one that can meet them.
    const series = gridIntervals(seriesRef, c.fine, addDays(c.date, -2), addDays(to, 2));
    const random = seededRandom(c.seed);
    const points = randomPoints(series, c.density, random);
    await stores.prices.upsertSeries({
      symbol,
      name: symbol,
      kind: 'electricity',
      currency: 'EUR',
      unit: 'MWh',
      timezone: c.seriesZone,
      resolution: c.fine,
    });
    await stores.prices.upsertPrices(symbol, points);
    const label = `${symbol}: ${c.fine} in ${c.seriesZone} read at ${c.coarse} in ${c.readZone}, ${c.date}..${to}`;

    const coarseAll = gridIntervals(readRef, c.coarse, c.date, to);
    const cut = crossing(series, coarseAll);
    const query = { symbols: [symbol], tz: c.readZone, resolution: c.coarse };
    const answer = service.range(everything, query, { date: c.date }, { date: to });
    if (cut !== undefined) {
      await assert.rejects(answer, (error: unknown) => {
        assert.ok(error instanceof ApiError, label);
        assert.equal(error.code, 'invalid_parameter', label);
        assert.equal(error.options.extra?.parameter, 'resolution', label);
        assert.deepEqual(error.options.extra?.symbols, [symbol], label);
        return true;
      });
      return 'refused';
    }
    const { series: days } = await answer.catch((error: unknown) => {
      assert.fail(`${label}: refused, yet no series interval crosses a coarse boundary: ${String(error)}`);
    });
    assert.equal(days.length, c.days, label);
    let read = 0;
    let counted = 0;
    for (const [i, day] of days.entries()) {
      const date = addDays(c.date, i);
      assert.equal(day.date, date, label);
      assert.equal(day.resolution, c.coarse, label);
      const bounds = { start: readRef.dayStart(date), end: readRef.dayStart(addDays(date, 1)) };
      const coarse = coarseAll.filter((s) => bounds.start <= s.start && s.start < bounds.end);
      const expected = expectedMeans(series, points, coarse);
      counted += expected.counted;
      read += points.filter((p) => bounds.start <= p.start && p.start < bounds.end).length;
      assert.deepEqual(
        day.prices,
        expected.means.map((m) => ({
          start: readRef.format(m.start),
          end: readRef.format(m.end),
          price: m.price,
        })),
        `${label}, ${date}`,
      );
    }
    // No point of the days read is left out, and none is counted twice.
    assert.equal(counted, read, label);
    return 'served';
  }

  test('named cases: Kathmandu hours cut Kolkata half hours, hold its quarter hours; 21-, 23.5- and 26-hour days', async () => {
    const expectations: [Parameters<typeof named>[0], 'refused' | 'served'][] = [
      [
        {
          seriesZone: 'Asia/Kolkata',
          fine: 'PT30M',
          readZone: 'Asia/Kathmandu',
          coarse: 'PT1H',
          date: '2026-11-24',
          days: 1,
        },
        'refused',
      ],
      [
        {
          seriesZone: 'Asia/Kolkata',
          fine: 'PT15M',
          readZone: 'Asia/Kathmandu',
          coarse: 'PT1H',
          date: '2026-11-24',
          days: 1,
        },
        'served',
      ],
      [
        {
          seriesZone: 'Asia/Kolkata',
          fine: 'PT30M',
          readZone: 'UTC',
          coarse: 'P1D',
          date: '2026-11-24',
          days: 1,
        },
        'served',
      ],
      [
        {
          seriesZone: 'Asia/Kolkata',
          fine: 'PT1H',
          readZone: 'UTC',
          coarse: 'P1D',
          date: '2026-11-24',
          days: 1,
        },
        'refused',
      ],
      // Casey's 21-hour day (00:01 change), read from quarter hours in UTC and in Kolkata.
      [
        {
          seriesZone: 'UTC',
          fine: 'PT15M',
          readZone: 'Antarctica/Casey',
          coarse: 'PT1H',
          date: '2020-10-04',
          days: 1,
        },
        'served',
      ],
      [
        {
          seriesZone: 'Asia/Kolkata',
          fine: 'PT30M',
          readZone: 'Antarctica/Casey',
          coarse: 'P1D',
          date: '2020-10-03',
          days: 3,
        },
        'served',
      ],
      // Lord Howe's 23.5-hour day and its 90-minute hour; its winter days begin at :30 UTC.
      [
        {
          seriesZone: 'Asia/Kolkata',
          fine: 'PT30M',
          readZone: 'Australia/Lord_Howe',
          coarse: 'PT1H',
          date: '2026-10-04',
          days: 1,
        },
        'served',
      ],
      [
        {
          seriesZone: 'Europe/Oslo',
          fine: 'PT1H',
          readZone: 'Australia/Lord_Howe',
          coarse: 'P1D',
          date: '2026-04-04',
          days: 3,
        },
        'refused',
      ],
      [
        {
          seriesZone: 'Europe/Oslo',
          fine: 'PT1H',
          readZone: 'Australia/Lord_Howe',
          coarse: 'P1D',
          date: '2026-10-05',
          days: 3,
        },
        'served',
      ],
      [
        {
          seriesZone: 'UTC',
          fine: 'PT15M',
          readZone: 'Antarctica/Troll',
          coarse: 'PT1H',
          date: '2026-03-29',
          days: 1,
        },
        'served',
      ],
      [
        {
          seriesZone: 'America/St_Johns',
          fine: 'PT30M',
          readZone: 'Pacific/Chatham',
          coarse: 'PT1H',
          date: '2026-11-01',
          days: 2,
        },
        'refused',
      ],
      [
        {
          seriesZone: 'Australia/Eucla',
          fine: 'PT15M',
          readZone: 'Pacific/Chatham',
          coarse: 'PT1H',
          date: '2026-04-05',
          days: 1,
        },
        'served',
      ],
    ];
    for (const [c, outcome] of expectations) {
      const result = await check({ ...c, pick: 0, nearChange: false, density: 0.9, seed: 14 });
      assert.equal(result, outcome, JSON.stringify(c));
    }
  });

  test('property: every coarse interval is the exact mean of the series intervals inside it, or the read is refused', async () => {
    const outcomes = { refused: 0, served: 0 };
    await fc.assert(
      fc.asyncProperty(cases, async (c) => {
        const near = changeDates(c.seriesZone, c.readZone);
        const any = addDays('2020-01-03', c.pick % 4_000);
        const date = c.nearChange && near.length > 0 ? (near[c.pick % near.length] as string) : any;
        outcomes[await check({ ...c, date })]++;
      }),
      { numRuns: 1_000 },
    );
    // Both outcomes were seen often: the property ran on both sides of the rule.
    assert.ok(outcomes.refused > 40 && outcomes.served > 40, JSON.stringify(outcomes));
  });
});
