/** Moving the decimal point of a price text: exact, whatever the digits. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { shiftDecimal } from '../../src/sources/decimal-shift.js';

test('pence to pounds and cents per kWh to euros per MWh, digit for digit', () => {
  assert.equal(shiftDecimal('24.15', -2), '0.2415');
  assert.equal(shiftDecimal('0.5', -2), '0.005');
  assert.equal(shiftDecimal('-2.8571', -2), '-0.028571');
  assert.equal(shiftDecimal('2000', -2), '20');
  assert.equal(shiftDecimal('20', -2), '0.2');
  assert.equal(shiftDecimal('6.694', 1), '66.94');
  assert.equal(shiftDecimal('4.000', 1), '40');
  assert.equal(shiftDecimal('0.001', 1), '0.01');
  assert.equal(shiftDecimal('-0.00', -2), '0');
  assert.equal(shiftDecimal('41.270', 0), '41.270', 'no move keeps the text as it came');
  assert.equal(shiftDecimal('1e3', 1), undefined);
  assert.equal(shiftDecimal('1,5', 1), undefined);
});
