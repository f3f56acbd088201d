import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkSeriesFields, isIsoCurrency, normaliseSymbol } from './series-rules.js';

const VALID = {
  name: 'Oslo day-ahead',
  kind: 'electricity',
  currency: 'EUR',
  unit: 'MWh',
  timezone: 'Europe/Oslo',
  resolution: 'PT15M',
} as const;

function problemFields(input: Record<string, string | undefined>): string[] {
  const checked = checkSeriesFields(input);
  return checked.ok ? [] : checked.problems.map((p) => p.field);
}

describe('normaliseSymbol', () => {
  test('accepts any letter case and answers the stored upper-case spelling', () => {
    assert.equal(normaliseSymbol('no1'), 'NO1');
    assert.equal(normaliseSymbol('de-lu'), 'DE-LU');
    assert.equal(normaliseSymbol('brk.b_x'), 'BRK.B_X');
    assert.equal(normaliseSymbol('A'.repeat(32)), 'A'.repeat(32));
  });

  test('refuses what the symbol pattern of docs/data-model.md refuses', () => {
    for (const bad of ['', '-NO1', '.X', '_X', 'A'.repeat(33), 'NO 1', 'NO/1', 'NØ1', 'EUR:USD']) {
      assert.equal(normaliseSymbol(bad), undefined, `"${bad}" is no symbol`);
    }
  });
});

describe('checkSeriesFields', () => {
  test('accepts a complete, valid series and normalises the currency to upper case', () => {
    const checked = checkSeriesFields({ ...VALID, currency: 'eur' });
    assert.deepEqual(checked, { ok: true, value: { ...VALID, currency: 'EUR' } });
  });

  test('accepts every resolution of docs/data-model.md and nothing else', () => {
    for (const resolution of ['PT15M', 'PT30M', 'PT1H', 'P1D']) {
      assert.deepEqual(problemFields({ ...VALID, resolution }), [], resolution);
    }
    for (const resolution of ['PT5M', 'pt15m', 'P1W', 'PT60M', '']) {
      assert.deepEqual(problemFields({ ...VALID, resolution }), ['resolution'], resolution);
    }
  });

  test('currency: ISO 4217 codes and crypto codes of 2 to 10 letters and digits', () => {
    assert.ok(isIsoCurrency('NOK'), 'NOK is ISO 4217');
    assert.ok(isIsoCurrency('XAU'), 'XAU (gold) is ISO 4217');
    assert.ok(!isIsoCurrency('BTC'), 'BTC is not ISO 4217');
    for (const currency of ['EUR', 'JPY', 'XAU', 'BTC', 'USDT', 'ETH', 'OP', 'SHIB', 'WBTC2']) {
      assert.deepEqual(problemFields({ ...VALID, currency }), [], currency);
    }
    for (const currency of ['', 'E', '€', 'US$', '1INCH', 'EUR-USD', 'ABCDEFGHIJK', 'EU R']) {
      assert.deepEqual(problemFields({ ...VALID, currency }), ['currency'], currency);
    }
  });

  test('timezone: exactly an IANA zone; a wrong letter case is refused with the right spelling', () => {
    for (const timezone of ['Europe/Oslo', 'America/New_York', 'UTC', 'Asia/Kolkata']) {
      assert.deepEqual(problemFields({ ...VALID, timezone }), [], timezone);
    }
    const checked = checkSeriesFields({ ...VALID, timezone: 'europe/oslo' });
    assert.equal(checked.ok, false);
    assert.match(checked.ok ? '' : (checked.problems[0]?.detail ?? ''), /Europe\/Oslo/);
    for (const timezone of ['+01:00', 'CET ', 'Europe/Atlantis', '', 'Oslo']) {
      assert.deepEqual(problemFields({ ...VALID, timezone }), ['timezone'], timezone);
    }
  });

  test('name, kind and unit: lengths, letter case and blank values', () => {
    assert.deepEqual(problemFields({ ...VALID, name: 'x'.repeat(200) }), []);
    assert.deepEqual(problemFields({ ...VALID, name: 'x'.repeat(201) }), ['name']);
    assert.deepEqual(problemFields({ ...VALID, name: '   ' }), ['name']);
    assert.deepEqual(problemFields({ ...VALID, name: 'a\nb' }), ['name']);
    for (const char of ['\u0000', '\t', '\u001b', '\u007f', '\u009b', '\u2028', '\u202e', '\u2066']) {
      assert.deepEqual(problemFields({ ...VALID, name: `a${char}b`, unit: `M${char}Wh` }), ['name', 'unit']);
    }
    assert.deepEqual(problemFields({ ...VALID, name: 'Zürich 東京 📈' }), []);
    assert.deepEqual(problemFields({ ...VALID, kind: 'fx' }), []);
    assert.deepEqual(problemFields({ ...VALID, kind: 'Electricity' }), ['kind']);
    assert.deepEqual(problemFields({ ...VALID, kind: 'day ahead' }), ['kind']);
    assert.deepEqual(problemFields({ ...VALID, unit: 'troy_oz' }), []);
    assert.deepEqual(problemFields({ ...VALID, unit: '' }), ['unit']);
    assert.deepEqual(problemFields({ ...VALID, unit: 'u'.repeat(33) }), ['unit']);
  });

  test('reports every problem at once, each with its field name, and missing fields as required', () => {
    const checked = checkSeriesFields({ kind: 'Bad Kind', currency: '€', timezone: 'Mars/Olympus' });
    assert.equal(checked.ok, false);
    const problems = checked.ok ? [] : checked.problems;
    assert.deepEqual(
      problems.map((p) => p.field),
      ['name', 'kind', 'currency', 'unit', 'timezone', 'resolution'],
    );
    for (const p of problems) assert.match(p.detail, new RegExp(`"${p.field}"`), p.field);
    assert.match(problems[0]?.detail ?? '', /required/);
  });
});
