/**
 * The tariff arithmetic done once per day and fee (src/domain/money/tariff-pricer.ts) writes the
 * very texts of the rules in docs/tariffs.md applied one interval at a time, the plain way: local
 * time from a `Date`, the newest version in force, the first rule that holds, and each part through
 * the decimal helpers (addDecimals, multiplyRounded), over random tariffs, zones, instants and spot
 * prices, clock changes included.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { multiplyRounded, shiftDecimal } from '../../src/domain/money/exact.js';
import {
  applyTariff,
  type FeeRule,
  type Tariff,
  vatDecimals,
  WEEKDAYS,
} from '../../src/domain/money/tariff.js';
import { addDecimals } from '../../src/domain/money/tariff-decimal.js';
import { formatInstant } from '../../src/domain/time/days.js';
import { offsetMinutes } from '../../src/domain/time/zone.js';

/** The parts of one interval, as docs/tariffs.md states them, one step at a time. */
function plainParts(tariff: Tariff, epochMs: number, spot: string, zone: string) {
  const wall = new Date(epochMs + offsetMinutes(epochMs, tariff.timezone ?? zone) * 60_000);
  const date = wall.toISOString().slice(0, 10);
  const minute = wall.getUTCHours() * 60 + wall.getUTCMinutes();
  const weekday = WEEKDAYS[wall.getUTCDay()] as (typeof WEEKDAYS)[number];
  const month = wall.getUTCMonth() + 1;
  const newest = <T extends { from: string }>(versions: readonly T[]) =>
    versions.filter((v) => v.from <= date).sort((a, b) => (a.from < b.from ? 1 : -1))[0];
  const holds = (r: FeeRule) =>
    (r.weekdays === undefined || r.weekdays.includes(weekday)) &&
    (r.months === undefined || r.months.includes(month)) &&
    (r.minutes === undefined ||
      (r.minutes[0] <= r.minutes[1]
        ? r.minutes[0] <= minute && minute < r.minutes[1]
        : minute >= r.minutes[0] || minute < r.minutes[1]));
  let fees = '0';
  if (tariff.fixed.length > 0) {
    const fixed = newest(tariff.fixed);
    if (fixed === undefined) return undefined;
    fees = fixed.amount;
  }
  if (tariff.fees.length > 0) {
    const version = newest(tariff.fees);
    if (version === undefined) return undefined;
    const rule = version.rules.find(holds);
    if (rule !== undefined) fees = addDecimals(fees, rule.amount);
  }
  let vat = '0';
  if (tariff.vat.length > 0) {
    const version = newest(tariff.vat);
    if (version === undefined) return undefined;
    vat = multiplyRounded(
      addDecimals(spot, fees),
      shiftDecimal(version.percent, -2),
      vatDecimals(tariff.unit),
    );
  }
  return { spot, fees, vat, total: addDecimals(addDecimals(spot, fees), vat) };
}

const decimal = fc
  .tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 99_999_999_999n }), fc.integer({ min: 0, max: 9 }))
  .map(([negative, digits, scale]) => {
    const text = digits.toString().padStart(scale + 1, '0');
    const plain = scale === 0 ? text : `${text.slice(0, -scale)}.${text.slice(-scale)}`;
    return negative && digits !== 0n ? `-${plain}` : plain;
  });
/** Amounts as a config file may write them, trailing zeros included. */
const amount = fc.oneof(decimal, fc.constantFrom('0.3640', '0.0713', '0', '10.50'));
const from = fc.constantFrom('2025-06-01', '2026-01-01', '2026-03-29', '2026-10-25', '2026-11-24');
const quarter = fc.integer({ min: 0, max: 96 }).map((q) => q * 15);
const rule: fc.Arbitrary<FeeRule> = fc.record(
  {
    amount,
    minutes: fc.tuple(quarter, quarter).filter(([a, b]) => a !== b),
    weekdays: fc.subarray([...WEEKDAYS], { minLength: 1 }),
    months: fc.subarray([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], { minLength: 1 }),
  },
  { requiredKeys: ['amount'] },
);
const byDate = { selector: (v: { from: string }) => v.from, maxLength: 2 };
const tariff: fc.Arbitrary<Tariff> = fc.record({
  name: fc.constant('t'),
  currency: fc.constant('NOK'),
  unit: fc.constantFrom('MWh', 'kWh', 'Wh'),
  timezone: fc.option(fc.constantFrom('Europe/Oslo', 'America/New_York', 'Asia/Kolkata'), {
    nil: undefined,
  }),
  // One version per date, as the config file requires.
  vat: fc.uniqueArray(fc.record({ from, percent: fc.constantFrom('25', '15', '0', '12.5', '100') }), byDate),
  fixed: fc.uniqueArray(fc.record({ from, amount }), byDate),
  fees: fc.uniqueArray(fc.record({ from, rules: fc.array(rule, { maxLength: 4 }) }), byDate),
}) as fc.Arbitrary<Tariff>;

describe('the tariff arithmetic, per day and fee', () => {
  test('writes the texts of the rules applied one interval at a time', () => {
    fc.assert(
      fc.property(
        tariff,
        fc.constantFrom('Europe/Oslo', 'America/Sao_Paulo', 'Australia/Lord_Howe', 'UTC'),
        // Quarter hours from before the first version to after the autumn clock change.
        fc.array(fc.tuple(fc.integer({ min: 0, max: 60_000 }), decimal), { minLength: 1, maxLength: 40 }),
        (t, zone, points) => {
          const intervals = points.map(([q, price]) => ({
            start: formatInstant(Date.UTC(2025, 4, 20) + q * 900_000, zone),
            price,
          }));
          const expected = intervals.map((p) => plainParts(t, Date.parse(p.start), p.price, zone));
          assert.deepEqual(applyTariff(t, intervals, zone), expected);
        },
      ),
      { numRuns: 400 },
    );
  });
});
