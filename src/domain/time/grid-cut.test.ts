import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firstGridCut } from './grid-cut.js';
import { SHIPPED_TZDIR } from './tz-source.js';
import { useTzSource } from './zone.js';

// The pinned tz release shipped in tzdata/, whatever the machine has.
useTzSource({ setting: SHIPPED_TZDIR, systemDir: SHIPPED_TZDIR });

const iso = (cut: { date: string; at: number } | undefined) =>
  cut && { date: cut.date, at: new Date(cut.at).toISOString() };

test('Kathmandu hours begin at :15 UTC, inside Kolkata half hours, but on Kolkata quarter hours', () => {
  const hours = { zone: 'Asia/Kathmandu', resolution: 'PT1H' } as const;
  assert.deepEqual(
    iso(firstGridCut(hours, { zone: 'Asia/Kolkata', resolution: 'PT30M' }, '2026-11-24', '2026-11-24')),
    {
      date: '2026-11-24',
      at: '2026-11-23T18:15:00.000Z', // 00:00+05:45, in the half hour from 23:30+05:30
    },
  );
  assert.equal(
    firstGridCut(hours, { zone: 'Asia/Kolkata', resolution: 'PT15M' }, '2026-01-01', '2026-12-31'),
    undefined,
  );
});

test("in the series' own zone a coarser grid never cuts, on any day (Lord Howe's 90-minute hours included)", () => {
  for (const zone of ['Australia/Lord_Howe', 'Antarctica/Casey', 'Asia/Kathmandu', 'Europe/Oslo']) {
    for (const [coarse, fine] of [
      ['PT30M', 'PT15M'],
      ['PT1H', 'PT30M'],
      ['P1D', 'PT1H'],
    ] as const) {
      const cut = firstGridCut(
        { zone, resolution: coarse },
        { zone, resolution: fine },
        '2020-01-01',
        '2022-12-31',
      );
      assert.equal(cut, undefined, `${zone} ${coarse} from ${fine}`);
    }
  }
});

test("Lord Howe's days begin on the hour UTC in summer, at :30 in winter: the first cut is where winter begins", () => {
  const days = { zone: 'Australia/Lord_Howe', resolution: 'P1D' } as const;
  const oslo = { zone: 'Europe/Oslo', resolution: 'PT1H' } as const;
  assert.equal(firstGridCut(days, oslo, '2026-10-05', '2027-04-03'), undefined);
  // 2026-04-05 begins at 13:00Z (+11) and ends at 13:30Z (+10:30): the end of the last day asked cuts.
  assert.deepEqual(iso(firstGridCut(days, oslo, '2026-04-01', '2026-04-05')), {
    date: '2026-04-06',
    at: '2026-04-05T13:30:00.000Z',
  });
});

test('UTC days hold Kolkata half hours but cut its hours', () => {
  const utcDays = { zone: 'UTC', resolution: 'P1D' } as const;
  assert.equal(
    firstGridCut(utcDays, { zone: 'Asia/Kolkata', resolution: 'PT30M' }, '2026-01-01', '2026-12-31'),
    undefined,
  );
  assert.deepEqual(
    iso(firstGridCut(utcDays, { zone: 'Asia/Kolkata', resolution: 'PT1H' }, '2026-03-01', '2026-03-02')),
    {
      date: '2026-03-01',
      at: '2026-03-01T00:00:00.000Z',
    },
  );
});
