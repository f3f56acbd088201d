import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { canonicalTimeZone, intlOffsetMinutes, isTimeZone, offsetMinutes, timeZoneNames } from './zone.js';

const at = (iso: string): number => Date.parse(iso);

describe('isTimeZone', () => {
  test('accepts zone names as the tz database spells them, including UTC', () => {
    const names = ['Europe/Oslo', 'America/New_York', 'America/Argentina/Buenos_Aires', 'Asia/Kathmandu'];
    for (const name of [...names, 'UTC', 'Etc/UTC', 'Etc/GMT+1', 'Etc/GMT-14']) {
      assert.equal(isTimeZone(name), true, name);
    }
  });

  test('accepts links that Intl does not list, such as US/Eastern and Asia/Kolkata', () => {
    const links = ['US/Eastern', 'Asia/Kolkata', 'Europe/Kyiv', 'GMT', 'NZ-CHAT', 'EST5EDT'];
    for (const name of [...links, 'America/Knox_IN']) assert.equal(isTimeZone(name), true, name);
  });

  test('refuses a known name in the wrong letter case', () => {
    const wrongCase = ['europe/oslo', 'EUROPE/OSLO', 'Europe/oslo', 'utc', 'etc/utc'];
    for (const name of [...wrongCase, 'us/eastern', 'US/EASTERN']) {
      assert.equal(isTimeZone(name), false, name);
    }
  });

  test('refuses UTC offsets, abbreviations and garbage', () => {
    const offsets = ['+01:00', '-05:00', '+0100', 'Z', 'UTC+1', 'GMT+1', 'CEST'];
    const garbage = ['', ' Europe/Oslo', 'Europe/Oslo ', 'Europe/Olso', 'Europe//Oslo', 'Europe/Oslo/'];
    for (const name of [...offsets, ...garbage, '../etc/passwd', 'America/New York', 'Mars/Olympus_Mons']) {
      assert.equal(isTimeZone(name), false, JSON.stringify(name));
    }
  });

  test('timeZoneNames lists every zone Intl supports plus UTC', () => {
    const names = timeZoneNames();
    assert.ok(names.has('UTC'));
    assert.ok(names.has('Europe/Oslo'));
    assert.ok(Intl.supportedValuesOf('timeZone').every((zone) => names.has(zone) && isTimeZone(zone)));
  });
});

describe('canonicalTimeZone', () => {
  test('gives the database spelling of a name written in any letter case', () => {
    assert.equal(canonicalTimeZone('Europe/Oslo'), 'Europe/Oslo');
    assert.equal(canonicalTimeZone('europe/oslo'), 'Europe/Oslo');
    assert.equal(canonicalTimeZone('AMERICA/NEW_YORK'), 'America/New_York');
    assert.equal(
      canonicalTimeZone('Asia/Kolkata'),
      'Asia/Kolkata',
      'a current name is not turned into an old one',
    );
    assert.equal(canonicalTimeZone('US/Eastern'), 'US/Eastern', 'a link spelt right comes back as written');
  });

  test('gives undefined for offsets and garbage', () => {
    for (const name of ['+01:00', 'Z', 'Mars/Olympus_Mons', '', 'Europe/Oslo; DROP TABLE']) {
      assert.equal(canonicalTimeZone(name), undefined, name);
    }
  });
});

describe('offsetMinutes', () => {
  test('is positive east of UTC and includes daylight saving time', () => {
    assert.equal(offsetMinutes(at('2026-01-15T12:00:00Z'), 'Europe/Oslo'), 60);
    assert.equal(offsetMinutes(at('2026-07-01T12:00:00Z'), 'Europe/Oslo'), 120);
    assert.equal(offsetMinutes(at('2026-01-15T12:00:00Z'), 'America/New_York'), -300);
    assert.equal(offsetMinutes(at('2026-07-01T12:00:00Z'), 'America/New_York'), -240);
    assert.equal(offsetMinutes(at('2026-07-01T12:00:00Z'), 'UTC'), 0);
  });

  test('handles offsets that are not whole hours', () => {
    assert.equal(offsetMinutes(at('2026-01-15T12:00:00Z'), 'Asia/Kolkata'), 330);
    assert.equal(offsetMinutes(at('2026-01-15T12:00:00Z'), 'Asia/Kathmandu'), 345);
    assert.equal(offsetMinutes(at('2026-01-15T12:00:00Z'), 'America/St_Johns'), -210);
    assert.equal(offsetMinutes(at('2026-01-15T12:00:00Z'), 'Pacific/Chatham'), 825);
    assert.equal(offsetMinutes(at('2026-01-15T12:00:00Z'), 'Australia/Lord_Howe'), 660);
    assert.equal(offsetMinutes(at('2026-07-01T12:00:00Z'), 'Australia/Lord_Howe'), 630);
  });

  test('switches exactly at the transition instant (Oslo, 2026-03-29 01:00 UTC)', () => {
    const transition = at('2026-03-29T01:00:00Z');
    assert.equal(offsetMinutes(transition - 1, 'Europe/Oslo'), 60);
    assert.equal(offsetMinutes(transition, 'Europe/Oslo'), 120);
    assert.equal(offsetMinutes(transition + 14 * 60_000, 'Europe/Oslo'), 120);
  });

  test('is right inside a quarter hour that holds a transition (Antarctica/Casey switched at 16:01 UTC)', () => {
    // Casey moved from +08:00 to +11:00 at 00:01 local time on 2020-10-04, 2021-10-03 and 2022-10-02.
    const zone = 'Antarctica/Casey';
    for (const transition of ['2020-10-03T16:01:00Z', '2021-10-02T16:01:00Z', '2022-10-01T16:01:00Z']) {
      const t = at(transition);
      const quarterStart = t - 60_000;
      // Ask for the start of the quarter hour first, so that a per-quarter-hour cache would be filled with +08:00.
      assert.equal(offsetMinutes(quarterStart, zone), 480, transition);
      assert.equal(offsetMinutes(t - 1000, zone), 480, transition);
      assert.equal(offsetMinutes(t, zone), 660, transition);
      assert.equal(offsetMinutes(t + 5 * 60_000, zone), 660, transition);
      assert.equal(offsetMinutes(quarterStart + 15 * 60_000 - 1, zone), 660, transition);
    }
  });

  test('agrees with Intl for random instants and zones 2020-2030, whatever order the cache is filled in', () => {
    const zones = Intl.supportedValuesOf('timeZone');
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2031, 0, 1) - 1 }),
        fc.integer({ min: -3 * 3_600_000, max: 3 * 3_600_000 }),
        (zone, epochMs, delta) => {
          // Two nearby instants in either order: the second is often answered from the cache.
          assert.equal(offsetMinutes(epochMs + delta, zone), intlOffsetMinutes(epochMs + delta, zone));
          assert.equal(offsetMinutes(epochMs, zone), intlOffsetMinutes(epochMs, zone));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('intlOffsetMinutes', () => {
  test('reads the offset from Intl for whole and fractional instants', () => {
    assert.equal(intlOffsetMinutes(at('2026-10-25T00:59:59.999Z'), 'Europe/Oslo'), 120);
    assert.equal(intlOffsetMinutes(at('2026-10-25T01:00:00Z'), 'Europe/Oslo'), 60);
    assert.equal(intlOffsetMinutes(at('1969-12-31T23:59:59.500Z'), 'UTC'), 0);
    assert.equal(intlOffsetMinutes(at('2026-01-15T12:00:00Z'), 'Asia/Kathmandu'), 345);
  });
});
