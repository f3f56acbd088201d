import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import {
  CONVERTED_DECIMALS,
  exactDecimal,
  multiplyRounded,
  multiplyRoundedShifted,
  perUnit,
  shiftDecimal,
} from './exact.js';

// An independent reference: decimal.js with enough precision for any product of two 15-digit
// decimals, rounding half away from zero (ROUND_HALF_UP is away from zero in decimal.js).
const Reference = Decimal.clone({
  precision: 60,
  rounding: Decimal.ROUND_HALF_UP,
  toExpNeg: -100,
  toExpPos: 100,
});

/** A plain decimal text as prices are stored: up to 15 significant digits, no exponent. */
const decimalText = (maxDecimals: number) =>
  fc
    .tuple(
      fc.boolean(),
      fc.bigInt({ min: 0n, max: 999_999_999_999_999n }),
      fc.integer({ min: 0, max: maxDecimals }),
    )
    .map(([negative, digits, scale]) => {
      const text = digits.toString().padStart(scale + 1, '0');
      const plain = scale === 0 ? text : `${text.slice(0, -scale)}.${text.slice(-scale)}`;
      return negative && digits !== 0n ? `-${plain}` : plain;
    });

/** The reference's text: fixed notation, trailing zeros dropped, no minus on zero. */
function referenceText(value: Decimal): string {
  const fixed = value.toFixed();
  return fixed === '-0' ? '0' : fixed;
}

describe('exact conversions', () => {
  test('41.27 EUR/MWh at 11.5847 NOK/EUR is one text, per MWh and per kWh', () => {
    assert.equal(multiplyRounded('41.27', '11.5847'), '478.100569');
    assert.equal(perUnit(multiplyRounded('41.27', '11.5847'), 'MWh', 'kWh'), '0.478100569');
    assert.equal(perUnit('41.27', 'MWh', 'kWh'), '0.04127');
    assert.equal(perUnit('41.27', 'MWh', 'Wh'), '0.00004127');
    assert.equal(perUnit('0.04127', 'kWh', 'MWh'), '41.27');
    assert.equal(perUnit('-3.5', 'MWh', 'MWh'), '-3.5');
  });

  test('half away from zero at the stated decimals, both signs', () => {
    assert.equal(multiplyRounded('0.0000005', '1'), '0.000001');
    assert.equal(multiplyRounded('-0.0000005', '1'), '-0.000001');
    assert.equal(multiplyRounded('0.00000049', '1'), '0');
    assert.equal(multiplyRounded('-0.00000049', '1'), '0');
    assert.equal(multiplyRounded('40', '11.5'), '460');
  });

  test('shifting only moves the decimal point', () => {
    assert.equal(shiftDecimal('123', 3), '123000');
    assert.equal(shiftDecimal('0', -3), '0');
    assert.equal(shiftDecimal('1.500', -1), '0.15');
  });

  test('price × rate agrees with decimal.js over random prices and rates', () => {
    fc.assert(
      fc.property(decimalText(8), decimalText(6), (price, rate) => {
        const expected = referenceText(
          new Reference(price).times(rate).toDecimalPlaces(CONVERTED_DECIMALS, Decimal.ROUND_HALF_UP),
        );
        assert.equal(multiplyRounded(price, rate), expected);
      }),
      { numRuns: 2_000 },
    );
  });

  test('a unit conversion agrees with decimal.js exactly, without rounding', () => {
    const units = ['Wh', 'kWh', 'MWh'] as const;
    fc.assert(
      fc.property(
        decimalText(10),
        fc.constantFrom(...units),
        fc.constantFrom(...units),
        (price, from, to) => {
          const factor = new Reference(1000).pow(units.indexOf(to) - units.indexOf(from));
          assert.equal(perUnit(price, from, to), referenceText(new Reference(price).times(factor)));
        },
      ),
      { numRuns: 1_000 },
    );
  });

  test('a conversion in one step writes what multiplyRounded then shiftDecimal write', () => {
    fc.assert(
      fc.property(
        decimalText(10),
        decimalText(8),
        fc.integer({ min: 0, max: 8 }),
        fc.constantFrom(-6, -3, 0, 3, 6),
        (price, rate, decimals, places) => {
          assert.equal(
            multiplyRoundedShifted(price, exactDecimal(rate), decimals, places),
            shiftDecimal(multiplyRounded(price, rate, decimals), places),
          );
        },
      ),
      { numRuns: 2_000 },
    );
  });

  test('on doubles, where they are exact, the same texts as on BigInt', () => {
    // Few digits, as prices and rates have them: the conversion runs on doubles (small-decimal.ts).
    const small = fc
      .tuple(fc.boolean(), fc.integer({ min: 0, max: 9_999_999 }), fc.integer({ min: 0, max: 9 }))
      .map(([negative, n, scale]) => {
        const text = String(n).padStart(scale + 1, '0');
        const plain = scale === 0 ? text : `${text.slice(0, -scale)}.${text.slice(-scale)}`;
        return negative && n !== 0 ? `-${plain}` : plain;
      });
    fc.assert(
      fc.property(
        small,
        small,
        fc.integer({ min: 0, max: 8 }),
        fc.constantFrom(-6, -3, 0, 3, 6),
        (price, rate, decimals, places) => {
          assert.equal(
            multiplyRoundedShifted(price, exactDecimal(rate), decimals, places),
            shiftDecimal(multiplyRounded(price, rate, decimals), places),
          );
        },
      ),
      { numRuns: 5_000 },
    );
  });

  test('a text that is no plain decimal is refused on doubles as on BigInt', () => {
    const rate = exactDecimal('11.5');
    for (const text of ['', '-', '1.', '.5', '01', '-01.5', '1e5', '+1', ' 1', '1,5', '--1', '0x10']) {
      assert.throws(() => multiplyRoundedShifted(text, rate, 6, 0), RangeError, JSON.stringify(text));
    }
  });
});
