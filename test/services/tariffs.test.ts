/**
 * Tariffs as pure arithmetic (src/domain/money/tariff.ts, docs/tariffs.md): the household example of
 * the docs, fees by local time on a 25-hour autumn day, versions by local date, and a property test
 * of the parts against decimal.js.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { applyTariff, type Tariff, tariffedPrice, vatDecimals } from '../../src/domain/money/tariff.js';
import { parseTariffs, TariffConfigError } from '../../src/domain/money/tariff-config.js';
import { addDecimals, compareDecimals } from '../../src/domain/money/tariff-decimal.js';
import { dayBounds, formatInstant } from '../../src/domain/time/days.js';

const OSLO = 'Europe/Oslo';
const Reference = Decimal.clone({
  precision: 80,
  rounding: Decimal.ROUND_HALF_UP,
  toExpNeg: -100,
  toExpPos: 100,
});

/** The docs' example: NO1 in NOK per kWh, 25% VAT, a fixed 0.0713 and a grid fee higher 06:00-22:00. */
const household = parseTariffs({
  household: {
    currency: 'NOK',
    unit: 'kWh',
    timezone: OSLO,
    vat: [{ from: '2026-01-01', percent: 25 }],
    fixed: [{ from: '2026-01-01', amount: 0.0713 }],
    fees: [
      {
        from: '2026-01-01',
        rules: [{ hours: '06:00-22:00', amount: '0.3640' }, { amount: '0.2640' }],
      },
    ],
  },
}).household as Tariff;

/** Every hour of a local day, as the read endpoints write interval starts. */
function hours(date: string, zone: string): string[] {
  const { start, end } = dayBounds(date, zone);
  const out: string[] = [];
  for (let t = start; t < end; t += 3_600_000) out.push(formatInstant(t, zone));
  return out;
}

describe('a tariff on one interval', () => {
  test('the household example: spot, fees, VAT and total in NOK per kWh', () => {
    const at = Date.parse('2026-11-24T07:00:00+01:00');
    assert.deepEqual(tariffedPrice(household, at, '0.478100569', OSLO), {
      spot: '0.478100569',
      fees: '0.4353', // 0.0713 fixed + 0.3640 day fee
      vat: '0.228350142', // 25% of 0.913400569 = 0.22835014225, rounded to 9 decimals per kWh
      total: '1.141750711',
    });
    const night = tariffedPrice(household, Date.parse('2026-11-24T23:00:00+01:00'), '0.478100569', OSLO);
    assert.equal(night?.fees, '0.3353');
    assert.equal(night?.total, '1.016750711'); // (0.478100569 + 0.3353) × 1.25 = 1.01675071125
  });

  test('a negative spot price is credited with its VAT', () => {
    const at = Date.parse('2026-11-24T13:00:00+01:00');
    const p = tariffedPrice(household, at, '-1.2', OSLO);
    assert.deepEqual(p, { spot: '-1.2', fees: '0.4353', vat: '-0.191175', total: '-0.955875' });
  });

  test('VAT is rounded half away from zero to 6 decimals per MWh, 9 per kWh, 12 per Wh', () => {
    assert.deepEqual([vatDecimals('MWh'), vatDecimals('kWh'), vatDecimals('Wh')], [6, 9, 12]);
    const flat: Tariff = { ...household, fixed: [], fees: [], vat: [{ from: '2000-01-01', percent: '25' }] };
    const at = Date.parse('2026-11-24T12:00:00Z');
    assert.equal(tariffedPrice(flat, at, '0.000000002', OSLO)?.vat, '0.000000001'); // 0.0000000005 up
    assert.equal(tariffedPrice(flat, at, '-0.000000002', OSLO)?.vat, '-0.000000001'); // away from zero
  });
});

describe('fees follow local time', () => {
  test('the 25-hour day of 2026-10-25 in Oslo charges both 02:00 hours the night fee', () => {
    const starts = hours('2026-10-25', OSLO);
    assert.equal(starts.length, 25);
    const priced = applyTariff(
      household,
      starts.map((start) => ({ start, price: '0.1' })),
      'UTC', // the tariff's own zone wins over the series'
    );
    const byStart = new Map(starts.map((s, i) => [s, priced[i]?.fees]));
    assert.equal(byStart.get('2026-10-25T02:00:00+02:00'), '0.3353');
    assert.equal(byStart.get('2026-10-25T02:00:00+01:00'), '0.3353');
    assert.equal(byStart.get('2026-10-25T05:00:00+01:00'), '0.3353');
    assert.equal(byStart.get('2026-10-25T06:00:00+01:00'), '0.4353');
    assert.equal(byStart.get('2026-10-25T21:00:00+01:00'), '0.4353');
    assert.equal(byStart.get('2026-10-25T22:00:00+01:00'), '0.3353');
    // 16 day hours (06-21) and 9 night hours, one of them the repeated 02:00.
    assert.equal(priced.filter((p) => p?.fees === '0.4353').length, 16);
    assert.equal(priced.filter((p) => p?.fees === '0.3353').length, 9);
  });

  test('the 23-hour spring day has 16 day hours and 7 night hours', () => {
    const starts = hours('2026-03-29', OSLO);
    const priced = applyTariff(
      household,
      starts.map((start) => ({ start, price: '0' })),
      OSLO,
    );
    assert.equal(priced.length, 23);
    assert.equal(priced.filter((p) => p?.fees === '0.4353').length, 16);
  });

  test('without a zone of its own the tariff follows the series zone', () => {
    const { timezone: _, ...zoneless } = household;
    const at = Date.parse('2026-11-24T05:30:00Z'); // 06:30 in Oslo, 05:30 in London
    assert.equal(tariffedPrice(zoneless, at, '0', OSLO)?.fees, '0.4353');
    assert.equal(tariffedPrice(zoneless, at, '0', 'Europe/London')?.fees, '0.3353');
  });

  test('rules by weekday, by month and over midnight; the first that holds applies, none is 0', () => {
    const tariff = parseTariffs({
      t: {
        currency: 'EUR',
        unit: 'MWh',
        timezone: OSLO,
        fees: [
          {
            from: '2026-01-01',
            rules: [
              { hours: '22:00-06:00', amount: 1 },
              { weekdays: ['sat', 'sun'], amount: 2 },
              { months: [1, 2, 12], hours: '08:00-20:00', amount: 3 },
            ],
          },
        ],
      },
    }).t as Tariff;
    const fee = (local: string) => tariffedPrice(tariff, Date.parse(local), '0', OSLO)?.fees;
    assert.equal(fee('2026-12-01T23:00:00+01:00'), '1'); // Tuesday night
    assert.equal(fee('2026-12-02T05:45:00+01:00'), '1');
    assert.equal(fee('2026-12-05T12:00:00+01:00'), '2'); // Saturday
    assert.equal(fee('2026-12-01T12:00:00+01:00'), '3'); // a December weekday
    assert.equal(fee('2026-11-03T12:00:00+01:00'), '0'); // a November weekday: no rule holds
    assert.equal(fee('2026-12-01T20:00:00+01:00'), '0');
  });
});

describe('versions by valid-from date', () => {
  const versioned = parseTariffs({
    v: {
      currency: 'NOK',
      unit: 'kWh',
      timezone: OSLO,
      vat: [
        { from: '2026-07-01', percent: 15 },
        { from: '2026-01-01', percent: 25 },
      ],
    },
  }).v as Tariff;

  test("the newest version valid on the interval's local date applies", () => {
    // 22:30 UTC on 30 June is 00:30 on 1 July in Oslo: July's version.
    assert.equal(tariffedPrice(versioned, Date.parse('2026-06-30T22:30:00Z'), '1', OSLO)?.vat, '0.15');
    assert.equal(tariffedPrice(versioned, Date.parse('2026-06-30T21:30:00Z'), '1', OSLO)?.vat, '0.25');
    assert.equal(tariffedPrice(versioned, Date.parse('2027-03-01T12:00:00Z'), '1', OSLO)?.vat, '0.15');
  });

  test('before the first version the tariff does not apply: no part is guessed as 0', () => {
    assert.equal(tariffedPrice(versioned, Date.parse('2025-12-31T12:00:00Z'), '1', OSLO), undefined);
    assert.equal(tariffedPrice(household, Date.parse('2025-12-31T12:00:00Z'), '1', OSLO), undefined);
  });
});

describe('the parts against decimal.js', () => {
  const decimalText = fc
    .tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 999_999_999_999_999n }), fc.integer({ min: 0, max: 12 }))
    .map(([negative, digits, scale]) => {
      const text = digits.toString().padStart(scale + 1, '0');
      const plain = scale === 0 ? text : `${text.slice(0, -scale)}.${text.slice(-scale)}`;
      return negative && digits !== 0n ? `-${plain}` : plain;
    });
  const percent = fc
    .tuple(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 99 }))
    .map(([whole, hundredths]) => (whole === 100 ? '100' : `${whole}.${hundredths}`));

  test('total is spot + fees + VAT exactly, VAT rounded half away from zero', () => {
    fc.assert(
      fc.property(
        decimalText,
        decimalText,
        decimalText,
        percent,
        fc.constantFrom('MWh', 'kWh', 'Wh'),
        fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2027, 0, 1) }),
        (spot, fixed, fee, vatPercent, unit, at) => {
          const tariff: Tariff = {
            name: 't',
            currency: 'NOK',
            unit: unit as Tariff['unit'],
            vat: [{ from: '2025-01-01', percent: vatPercent }],
            fixed: [{ from: '2025-01-01', amount: fixed }],
            fees: [{ from: '2025-01-01', rules: [{ amount: fee }] }],
          };
          const p = tariffedPrice(tariff, at, spot, OSLO);
          assert.ok(p !== undefined);
          const fees = new Reference(fixed).plus(fee);
          const vat = new Reference(spot)
            .plus(fees)
            .times(vatPercent)
            .dividedBy(100)
            .toDecimalPlaces(vatDecimals(tariff.unit), Decimal.ROUND_HALF_UP);
          const same = (a: string, b: Decimal) => assert.ok(new Reference(a).equals(b), `${a} vs ${b}`);
          same(p.fees, fees);
          same(p.vat, vat);
          same(p.total, new Reference(spot).plus(fees).plus(vat));
          assert.equal(p.spot, spot);
          assert.equal(addDecimals(addDecimals(p.spot, p.fees), p.vat), p.total);
        },
      ),
      { numRuns: 500 },
    );
  });

  test('compareDecimals orders as decimal.js does', () => {
    fc.assert(
      fc.property(decimalText, decimalText, (a, b) => {
        assert.equal(compareDecimals(a, b), new Reference(a).comparedTo(b));
      }),
    );
  });
});

describe('tariffs in the config file', () => {
  const refusal = (entry: unknown, field: string) =>
    assert.throws(
      () => parseTariffs({ t: entry } as never),
      (error: unknown) => error instanceof TariffConfigError && error.field === field,
    );
  const base = { currency: 'NOK', unit: 'kWh' };

  test('a bad value is refused naming its field', () => {
    refusal({ ...base, vat: [{ from: '2026-02-30', percent: 25 }] }, 'tariffs.t.vat.0.from');
    refusal({ ...base, vat: [{ from: '2026-01-01', percent: 125 }] }, 'tariffs.t.vat.0.percent');
    refusal({ ...base, fixed: [{ from: '2026-01-01', amount: 1e-7 }] }, 'tariffs.t.fixed.0.amount');
    refusal(
      {
        ...base,
        fees: [
          { from: '2026-01-01', rules: [{ amount: 1 }] },
          { from: '2026-01-01', rules: [{ amount: 2 }] },
        ],
      },
      'tariffs.t.fees.1.from',
    );
    refusal(
      { ...base, fees: [{ from: '2026-01-01', rules: [{ amount: 1, hours: '06:10-22:00' }] }] },
      'tariffs.t.fees.0.rules.0.hours',
    );
    refusal(
      { ...base, fees: [{ from: '2026-01-01', rules: [{ amount: 1, hours: '06:00-06:00' }] }] },
      'tariffs.t.fees.0.rules.0.hours',
    );
    refusal({ ...base, timezone: 'Mars/Olympus' }, 'tariffs.t.timezone');
  });

  test('numbers and strings are read as the decimals they spell; a zone in any case is the zone', () => {
    const t = parseTariffs({
      t: { ...base, timezone: 'europe/oslo', fixed: [{ from: '2026-01-01', amount: '0.10' }] },
    }).t as Tariff;
    assert.equal(t.timezone, OSLO);
    assert.equal(t.fixed[0]?.amount, '0.10');
    assert.deepEqual(t.vat, []);
  });
});
