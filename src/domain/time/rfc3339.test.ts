import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRfc3339 } from './rfc3339.js';

test('RFC 3339 timestamps with Z or an offset are read to the millisecond', () => {
  assert.equal(parseRfc3339('2026-10-25T02:00:00+01:00'), Date.UTC(2026, 9, 25, 1));
  assert.equal(parseRfc3339('2026-10-25T02:00:00+02:00'), Date.UTC(2026, 9, 25, 0));
  assert.equal(parseRfc3339('2026-10-25t00:00:00z'), Date.UTC(2026, 9, 25));
  assert.equal(parseRfc3339('2024-02-29T23:59:59.250-05:30'), Date.UTC(2024, 2, 1, 5, 29, 59, 250));
});

test('agrees with Date.parse on many valid timestamps', () => {
  for (let t = Date.UTC(2020, 0, 1); t < Date.UTC(2031, 0, 1); t += 7_777_777_777 / 97) {
    const iso = new Date(Math.floor(t / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    assert.equal(parseRfc3339(iso), Date.parse(iso), iso);
    const shifted = `${new Date(Math.floor(t / 1000) * 1000 + 3_600_000 * 5.75).toISOString().slice(0, 19)}+05:45`;
    assert.equal(parseRfc3339(shifted), Date.parse(shifted), shifted);
  }
});

test('anything else is refused: impossible dates, no offset, no seconds, trailing text', () => {
  for (const text of [
    '2026-02-30T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-10-25T24:00:00Z',
    '2026-10-25T02:00:00',
    '2026-10-25T02:00Z',
    '2026-10-25 02:00:00Z',
    '2026-10-25T02:00:00+0100',
    '2026-10-25T02:00:00Zx',
    '2026-10-25T02:00:00.Z',
    '2026-10-25',
    '0099-10-25T02:00:00Z',
    'garbage-garbage-garbage',
  ]) {
    assert.equal(parseRfc3339(text), undefined, text);
  }
});

test('days from 0100 to 9999 are read as Date.parse reads them, and no day past a month end is', () => {
  for (let year = 100; year <= 9999; year += year < 2200 ? 1 : 7) {
    for (let month = 1; month <= 12; month++) {
      const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
      const ym = `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}`;
      for (const day of [1, 15, last]) {
        const text = `${ym}-${String(day).padStart(2, '0')}T00:00:00Z`;
        assert.equal(parseRfc3339(text), Date.parse(text), text);
      }
      assert.equal(parseRfc3339(`${ym}-${last + 1}T00:00:00Z`), undefined, `${ym}-${last + 1}`);
    }
  }
});
