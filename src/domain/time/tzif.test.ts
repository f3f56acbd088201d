import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { tzifBytes } from '../../../test/helpers/tzif-writer.js';
import { SHIPPED_TZDIR } from './tz-source.js';
import { offsetSecondsAt, parseTzif, zoneChanges } from './tzif.js';

const s = (iso: string): number => Date.parse(iso) / 1000;
const shipped = (zone: string) => parseTzif(readFileSync(join(SHIPPED_TZDIR, zone)));

describe('TZif files', () => {
  test('reads a compiled zone of the shipped release: Europe/Oslo, from local mean time to its footer', () => {
    const oslo = shipped('Europe/Oslo');
    assert.equal(offsetSecondsAt(oslo, s('1880-01-01T00:00:00Z')), 43 * 60, 'local mean time +00:43');
    assert.equal(offsetSecondsAt(oslo, s('2026-01-15T00:00:00Z')), 3600);
    assert.equal(offsetSecondsAt(oslo, s('2026-03-29T00:59:59Z')), 3600);
    assert.equal(offsetSecondsAt(oslo, s('2026-03-29T01:00:00Z')), 7200);
    assert.equal(
      offsetSecondsAt(oslo, s('2150-07-01T00:00:00Z')),
      7200,
      'the footer, past the last transition',
    );
    assert.deepEqual(oslo.footer?.stdOffset, 3600);
  });

  test('the 2026 rules of the shipped release: Vancouver stays at -07:00, Havana does not fall back in 2026', () => {
    const vancouver = shipped('America/Vancouver');
    assert.equal(offsetSecondsAt(vancouver, s('2026-11-24T07:00:00Z')), -7 * 3600);
    assert.equal(offsetSecondsAt(vancouver, s('2040-01-15T00:00:00Z')), -7 * 3600);
    const havana = shipped('America/Havana');
    assert.equal(offsetSecondsAt(havana, s('2026-12-01T00:00:00Z')), -4 * 3600);
    assert.equal(offsetSecondsAt(havana, s('2027-12-01T00:00:00Z')), -5 * 3600);
  });

  test('version 1: the 32-bit block, no footer; type 0 before the first transition, the last after it', () => {
    const bytes = tzifBytes({
      version: 1,
      transitions: [s('2000-03-26T01:00:00Z'), s('2000-10-29T01:00:00Z')],
      typeOf: [1, 2],
      offsets: [3600, 7200, 3600],
    });
    const rules = parseTzif(bytes);
    assert.equal(rules.footer, undefined);
    assert.equal(offsetSecondsAt(rules, s('1999-01-01T00:00:00Z')), 3600);
    assert.equal(offsetSecondsAt(rules, s('2000-07-01T00:00:00Z')), 7200);
    assert.equal(offsetSecondsAt(rules, s('2030-07-01T00:00:00Z')), 3600);
  });

  for (const version of [2, 3, 4] as const) {
    test(`version ${version}: the 64-bit block (times past 2038 too), then the footer`, () => {
      const rules = parseTzif(
        tzifBytes({
          version,
          transitions: [s('1900-01-01T00:00:00Z'), s('2040-03-25T01:00:00Z')],
          typeOf: [1, 2],
          offsets: [1000, 3600, 7200],
          footer: 'CET-1CEST,M3.5.0,M10.5.0/3',
        }),
      );
      assert.equal(
        offsetSecondsAt(rules, s('1850-01-01T00:00:00Z')),
        1000,
        'before 1901: only the 64-bit block has it',
      );
      assert.equal(offsetSecondsAt(rules, s('2039-07-01T00:00:00Z')), 3600);
      assert.equal(offsetSecondsAt(rules, s('2040-07-01T00:00:00Z')), 7200);
      assert.equal(offsetSecondsAt(rules, s('2040-12-01T00:00:00Z')), 3600, 'the footer');
      assert.equal(offsetSecondsAt(rules, s('2041-07-01T00:00:00Z')), 7200, 'the footer');
    });
  }

  test('a file with only a footer (no transitions) follows the footer at every instant', () => {
    const rules = parseTzif(
      tzifBytes({ version: 2, offsets: [37800], footer: '<+1030>-10:30<+11>-11,M10.1.0,M4.1.0' }),
    );
    assert.equal(offsetSecondsAt(rules, s('1700-01-15T00:00:00Z')), 39600);
    assert.equal(offsetSecondsAt(rules, s('2026-07-01T00:00:00Z')), 37800);
    assert.equal(offsetSecondsAt(rules, s('2027-01-15T00:00:00Z')), 39600);
    const { from, initialOffset, changes } = zoneChanges(rules, 1800, 2030);
    assert.equal(from, s('1800-01-01T00:00:00Z'));
    assert.equal(initialOffset, 39600);
    assert.deepEqual(changes.slice(-2), [
      { at: s('2030-04-06T15:00:00Z'), offset: 37800 },
      { at: s('2030-10-05T15:30:00Z'), offset: 39600 },
    ]);
    const fixed = parseTzif(tzifBytes({ version: 2, offsets: [0], footer: '<-03>3' }));
    assert.equal(offsetSecondsAt(fixed, s('2026-07-01T00:00:00Z')), -10800);
    assert.deepEqual(zoneChanges(fixed, 1800, 2200), {
      from: Number.NEGATIVE_INFINITY,
      initialOffset: -10800,
      changes: [],
    });
  });

  test('the changes of a zone keep only changes of offset, and go on with the footer to the year asked', () => {
    // Europe/Dublin switches between IST and GMT with negative DST; Chisinau relabelled its hours.
    for (const zone of ['Europe/Dublin', 'Europe/Chisinau', 'America/Vancouver']) {
      const rules = shipped(zone);
      const { initialOffset, changes } = zoneChanges(rules, 1800, 2200);
      let previous = initialOffset;
      for (const change of changes) {
        assert.notEqual(change.offset, previous, `${zone} ${new Date(change.at * 1000).toISOString()}`);
        assert.equal(offsetSecondsAt(rules, change.at), change.offset);
        assert.equal(offsetSecondsAt(rules, change.at - 1), previous);
        previous = change.offset;
      }
      if (zone === 'Europe/Dublin') assert.ok((changes.at(-1)?.at ?? 0) > s('2200-10-01T00:00:00Z'));
    }
  });

  test('refuses what is not a TZif file, or one cut short', () => {
    assert.throws(() => parseTzif(Buffer.from('Europe/Oslo\n')), SyntaxError);
    const whole = tzifBytes({ version: 2, transitions: [0], typeOf: [0], offsets: [3600], footer: 'CET-1' });
    assert.throws(() => parseTzif(whole.subarray(0, whole.length - 20)), SyntaxError);
    const badType = tzifBytes({ version: 1, transitions: [0], typeOf: [5], offsets: [3600] });
    assert.throws(() => parseTzif(badType), SyntaxError);
  });
});
