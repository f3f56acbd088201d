/**
 * Zones whose rules changed in 2026, read through HTTP with the pinned tz release in tzdata/ (2026f).
 * One UTC series of quarter hours is read with `tz=` and `resolution=PT1H`, so each answer shows the
 * zone's own day: how many hours it has and the offset every timestamp carries. The expected values
 * come from tzdata/tzdata.zi, quoted beside each test.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { tzSource } from '../../src/domain/time/zone.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { REPO } from '../helpers/process.js';
import { usePinnedTzdata } from '../time/use-pinned-tzdata.js';

const TZDATA = join(REPO, 'tzdata');
const QUARTER_HOUR_MS = 15 * 60_000;
/** Local dates read below; the series holds every quarter hour from the day before to the day after. */
const DATES = [
  '2026-03-29',
  '2026-09-20',
  '2026-09-21',
  '2026-10-25',
  '2026-11-01',
  '2026-11-24',
  '2027-02-07',
  '2027-03-14',
];

interface Interval {
  start: string;
  end: string;
  price: number;
}

let harness: Harness;
let key: string;

async function hours(date: string, zone: string): Promise<Interval[]> {
  const response = await harness.app.inject({
    url: `/api/v1/prices/${date}?symbols=UTCQ&tz=${encodeURIComponent(zone)}&resolution=PT1H`,
    headers: { 'x-api-key': key },
  });
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json() as { series: { date: string; resolution: string; prices: Interval[] }[] };
  const [day] = body.series;
  assert.equal(day?.resolution, 'PT1H');
  return day?.prices ?? [];
}

const offsets = (list: Interval[]) => [...new Set(list.map((i) => i.start.slice(19)))];

describe('zones whose rules changed in 2026, through HTTP', () => {
  before(async () => {
    harness = await createHarness({
      now: '2026-11-24T10:15:00Z',
      devData: false,
      env: { PRICEPOINT_TZDIR: TZDATA },
    });
    // The setting as `serve` applies it, before the first request: nothing is read with other rules.
    usePinnedTzdata(harness.config.tzData.setting ?? '');
    assert.equal(tzSource().release, '2026f');
    await harness.stores.prices.upsertSeries({
      symbol: 'UTCQ',
      name: 'UTC quarter hours',
      kind: 'electricity',
      currency: 'EUR',
      unit: 'MWh',
      timezone: 'UTC',
      resolution: 'PT15M',
    });
    const points = new Map<number, { start: number; price: string }>();
    for (const date of DATES) {
      const from = Date.parse(`${date}T00:00:00Z`) - 86_400_000;
      for (let t = from; t < from + 3 * 86_400_000; t += QUARTER_HOUR_MS)
        points.set(t, { start: t, price: '1' });
    }
    await harness.stores.prices.upsertPrices('UTCQ', [...points.values()]);
    key = (await harness.createKey({ tier: 'enterprise' })).key;
  });
  after(() => harness.close());

  test('America/Vancouver keeps -07:00: today (2026-11-24) has 24 hours from 07:00Z, and 2026-11-01 did not fall back', async () => {
    // tzdata.zi: "-8 C PDT 2026 N 1 2" then "-7 - MST": summer time stays, as a standard -07:00.
    const today = await hours('today', 'America/Vancouver');
    assert.equal(today.length, 24);
    assert.equal(today[0]?.start, '2026-11-24T00:00:00-07:00');
    assert.equal(today[23]?.end, '2026-11-25T00:00:00-07:00');
    assert.deepEqual(offsets(today), ['-07:00']);
    const fallDay = await hours('2026-11-01', 'America/Vancouver');
    assert.equal(fallDay.length, 24);
    assert.deepEqual(offsets(fallDay), ['-07:00']);
    assert.deepEqual(offsets(await hours('2026-11-24', 'canada/pacific')), ['-07:00']);
  });

  test('America/Havana did not fall back in 2026: 2026-11-01 has 24 hours, all at -04:00', async () => {
    // tzdata.zi: rule Q falls back "2012 2025 N Su>=1" and again from 2027: none in 2026.
    const day = await hours('2026-11-01', 'America/Havana');
    assert.equal(day.length, 24);
    assert.equal(day[0]?.start, '2026-11-01T00:00:00-04:00');
    assert.deepEqual(offsets(day), ['-04:00']);
  });

  test('Africa/Casablanca moves to +00 for good at 2026-09-20 02:00 (a 25-hour day), with no Ramadan switch in 2027', async () => {
    // tzdata.zi: "1 M %z 2026 S 20 2" then "0 - %z": rule M's 2027 lines (F 7, Mar 14) no longer apply.
    const change = await hours('2026-09-20', 'Africa/Casablanca');
    assert.equal(change.length, 25);
    assert.deepEqual(
      change.slice(0, 4).map((i) => i.start),
      [
        '2026-09-20T00:00:00+01:00',
        '2026-09-20T01:00:00+01:00',
        '2026-09-20T01:00:00+00:00',
        '2026-09-20T02:00:00+00:00',
      ],
    );
    assert.equal(change[24]?.end, '2026-09-21T00:00:00+00:00');
    for (const date of ['2026-09-21', '2027-02-07', '2027-03-14']) {
      const day = await hours(date, 'Africa/Casablanca');
      assert.equal(day.length, 24, date);
      assert.deepEqual(offsets(day), ['+00:00'], date);
    }
  });

  test('Europe/Chisinau changes at 01:00 UTC like the EU (2026a): its changed hours carry the right labels', async () => {
    // tzdata.zi: "2 MD EE%sT 2022" then "2 E EE%sT": rule E switches at "lastSu 1u", 03:00/04:00 local.
    const spring = await hours('2026-03-29', 'Europe/Chisinau');
    assert.equal(spring.length, 23);
    assert.deepEqual(
      spring.slice(0, 4).map((i) => i.start),
      [
        '2026-03-29T00:00:00+02:00',
        '2026-03-29T01:00:00+02:00',
        '2026-03-29T02:00:00+02:00',
        '2026-03-29T04:00:00+03:00',
      ],
    );
    const autumn = await hours('2026-10-25', 'Europe/Chisinau');
    assert.equal(autumn.length, 25);
    assert.deepEqual(
      autumn.slice(2, 6).map((i) => i.start),
      [
        '2026-10-25T02:00:00+03:00',
        '2026-10-25T03:00:00+03:00',
        '2026-10-25T03:00:00+02:00',
        '2026-10-25T04:00:00+02:00',
      ],
    );
  });
});
