import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDuration } from './duration.js';
import { parseTimestamp } from './timestamp.js';

test('parseDuration reads a whole number and one of s, m, h, d', () => {
  assert.equal(parseDuration('30s'), 30_000);
  assert.equal(parseDuration('15m'), 900_000);
  assert.equal(parseDuration('24h'), 86_400_000);
  assert.equal(parseDuration('7d'), 604_800_000);
  assert.equal(parseDuration('0s'), 0);
  for (const bad of ['', '24', 'h', '1.5h', '-1h', '1w', '1 h', '1H', '1h30m']) {
    assert.equal(parseDuration(bad), undefined, `"${bad}" is not a duration`);
  }
});

test('parseTimestamp reads dates as 00:00 UTC and RFC 3339 timestamps with their offset', () => {
  assert.equal(parseTimestamp('2030-01-01'), Date.UTC(2030, 0, 1));
  assert.equal(parseTimestamp('2030-06-01T12:00:00+02:00'), Date.UTC(2030, 5, 1, 10));
  assert.equal(parseTimestamp('2030-06-01T12:00:00.250Z'), Date.UTC(2030, 5, 1, 12, 0, 0, 250));
  assert.equal(parseTimestamp('2030-06-01t12:00:00z'), Date.UTC(2030, 5, 1, 12));
  for (const bad of ['tomorrow', '2030-02-30', '2030-13-01', '2030-06-01T24:00:00Z', '2030-06-01T12:00:00']) {
    assert.equal(parseTimestamp(bad), undefined, `"${bad}" is refused`);
  }
});
