import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkNumberPrice, checkPrice } from './decimal.js';

describe('checkPrice: a price text as it is stored and served', () => {
  test('plain decimals are kept exactly as written, trailing zeros included', () => {
    for (const text of [
      '41.27',
      '-3.5',
      '0',
      '0.000125',
      '41.270',
      '123456789012345',
      '-0.5',
      '999999999999999',
    ]) {
      assert.deepEqual(checkPrice(text), { ok: true, text });
    }
  });

  test('a minus on zero is dropped, so the stored text is the plain JSON number 0', () => {
    assert.deepEqual(checkPrice('-0'), { ok: true, text: '0' });
    assert.deepEqual(checkPrice('-0.00'), { ok: true, text: '0.00' });
  });

  test('leading zeros do not count as significant digits, trailing ones do', () => {
    assert.equal(checkPrice('0.000000000000000000123456789012345').ok, true);
    assert.equal(checkPrice('1.00000000000000').ok, true); // 15 digits
    const sixteen = checkPrice('1.000000000000000');
    assert.equal(sixteen.ok, false);
    assert.ok(!sixteen.ok && sixteen.reason.includes('16 significant digits'), 'names the digit count');
  });

  test('anything that is not a plain JSON-number decimal is refused with a reason', () => {
    for (const text of [
      '',
      '+1',
      '.5',
      '1.',
      '1e3',
      '1E-3',
      '007',
      '1,5',
      'NaN',
      'Infinity',
      ' 1',
      '0x10',
      '--1',
      '1.2.3',
    ]) {
      const result = checkPrice(text);
      assert.equal(result.ok, false, `"${text}" must be refused`);
      assert.ok(!result.ok && result.reason.length > 0, `"${text}" gets a reason`);
    }
  });
});

describe('checkNumberPrice: a price that arrived as a parsed JSON number', () => {
  test('is written as its shortest round-trip decimal', () => {
    assert.deepEqual(checkNumberPrice(41.27), { ok: true, text: '41.27' });
    assert.deepEqual(checkNumberPrice(-0.1), { ok: true, text: '-0.1' });
    assert.deepEqual(checkNumberPrice(-0), { ok: true, text: '0' });
  });

  test('numbers that need an exponent or more than 15 digits, and non-finite ones, are refused', () => {
    for (const value of [1e21, 1e-7, 0.1 + 0.2, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.equal(checkNumberPrice(value).ok, false, `${value} must be refused`);
    }
  });
});
