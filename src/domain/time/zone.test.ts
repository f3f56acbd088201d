import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { SHIPPED_TZDIR } from './tz-source.js';
import { offsetSecondsAt, parseTzif } from './tzif.js';
import {
  canonicalTimeZone,
  intlOffsetMinutes,
  isTimeZone,
  offsetMinutes,
  timeZoneId,
  timeZoneNames,
  useTzSource,
  zoneCacheSizes,
} from './zone.js';

// The pinned release shipped in tzdata/ (2026f), whatever the machine has installed.
useTzSource({ setting: SHIPPED_TZDIR, systemDir: SHIPPED_TZDIR });

const at = (iso: string): number => Date.parse(iso);

describe('isTimeZone', () => {
  test('accepts zone names as the tz database spells them, including UTC', () => {
    const names = ['Europe/Oslo', 'America/New_York', 'America/Argentina/Buenos_Aires', 'Asia/Kathmandu'];
    for (const name of [...names, 'UTC', 'Etc/UTC', 'Etc/GMT+1', 'Etc/GMT-14']) {
      assert.equal(isTimeZone(name), true, name);
    }
  });

  test('accepts links as the tz database spells them, such as US/Eastern and Asia/Katmandu', () => {
    const links = ['US/Eastern', 'Asia/Kolkata', 'Europe/Kiev', 'Asia/Katmandu', 'GMT', 'NZ-CHAT', 'EST5EDT'];
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

  test('timeZoneNames lists every zone and link of the release, so every name Intl knows stays valid', () => {
    const names = timeZoneNames();
    assert.ok(names.size > 590, `${names.size} names`);
    for (const name of ['UTC', 'Etc/UTC', 'Europe/Oslo', 'Europe/Kyiv', 'Europe/Kiev', 'US/Pacific']) {
      assert.ok(names.has(name), name);
    }
    assert.ok(!names.has('Factory'), 'Factory is no place');
    // Series stored with a name Node's ICU gave (Asia/Calcutta, Europe/Kiev) keep working.
    assert.deepEqual(
      Intl.supportedValuesOf('timeZone').filter((zone) => !(names.has(zone) && isTimeZone(zone))),
      [],
    );
  });

  test('every name of the release loads its zone file', () => {
    const july = Date.parse('2026-07-01T00:00:00Z');
    for (const name of timeZoneNames()) assert.equal(typeof offsetMinutes(july, name), 'number', name);
    // One entry per zone (446 in 2026f as Debian builds it), however many names lead to it.
    const zones = new Set([...timeZoneNames()].map((name) => timeZoneId(name))).size;
    assert.equal(zoneCacheSizes().zones, zones);
    assert.ok(zones < timeZoneNames().size);
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
    assert.equal(canonicalTimeZone('Asia/Katmandu'), 'Asia/Katmandu', 'so does an old name spelt right');
  });

  test('names the current zone for a name in another letter case, not an old alias', () => {
    assert.equal(canonicalTimeZone('asia/kathmandu'), 'Asia/Kathmandu');
    assert.equal(canonicalTimeZone('asia/katmandu'), 'Asia/Kathmandu');
    assert.equal(canonicalTimeZone('europe/kyiv'), 'Europe/Kyiv');
    assert.equal(canonicalTimeZone('EUROPE/KIEV'), 'Europe/Kyiv');
    assert.equal(canonicalTimeZone('asia/calcutta'), 'Asia/Kolkata');
    assert.equal(canonicalTimeZone('us/eastern'), 'America/New_York');
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

  test('agrees with the zone file read as written for random names and instants 1900-2199, in any order', () => {
    // The file's own reading (transitions, then the footer at each instant) against the table of
    // offsets to 2200 that lookups use; test/time/ checks the reading itself with a reader of its own.
    const names = [...timeZoneNames()];
    const asWritten = (epochMs: number, name: string): number => {
      const rules = parseTzif(readFileSync(join(SHIPPED_TZDIR, name)));
      return Math.round(offsetSecondsAt(rules, Math.floor(epochMs / 1000)) / 60) || 0;
    };
    fc.assert(
      fc.property(
        fc.constantFrom(...names),
        fc.integer({ min: Date.UTC(1900, 0, 1), max: Date.UTC(2250, 0, 1) - 1 }),
        fc.integer({ min: -3 * 3_600_000, max: 3 * 3_600_000 }),
        (name, epochMs, delta) => {
          // Two nearby instants in either order: the second starts from the segment the first found.
          assert.equal(offsetMinutes(epochMs + delta, name), asWritten(epochMs + delta, name), name);
          assert.equal(offsetMinutes(epochMs, name), asWritten(epochMs, name), name);
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

describe('timeZoneId', () => {
  test('gives every letter case and every link of a zone the one zone the links point to', () => {
    for (const spelling of [
      'US/Pacific',
      'us/pacific',
      'US/PaCiFiC',
      'America/Los_Angeles',
      'AMERICA/los_angeles',
    ]) {
      assert.equal(timeZoneId(spelling), 'America/Los_Angeles', spelling);
    }
    assert.equal(timeZoneId('America/ArGentina/ComodRivadavia'), timeZoneId('America/Argentina/Catamarca'));
    assert.equal(timeZoneId('Asia/Kolkata'), timeZoneId('asia/calcutta'));
    assert.equal(timeZoneId('asia/katmandu'), 'Asia/Kathmandu');
    assert.equal(timeZoneId('Europe/Kiev'), 'Europe/Kyiv');
    assert.equal(timeZoneId('utc'), 'Etc/UTC');
  });

  test('gives undefined for offsets, paths, garbage and overlong names', () => {
    const bad = [
      '+01:00',
      'Z',
      'UTC+1',
      '../etc/passwd',
      'Mars/Olympus_Mons',
      '',
      'Europe/Oslo ',
      `A/${'b'.repeat(70)}`,
    ];
    for (const name of bad) assert.equal(timeZoneId(name), undefined, name);
  });

  test('offsets are the same under every spelling of a zone', () => {
    const july = at('2026-07-01T12:00:00Z');
    for (const spelling of ['US/PaCiFiC', 'us/pacific', 'America/Los_Angeles']) {
      assert.equal(offsetMinutes(july, spelling), -420, spelling);
      assert.equal(intlOffsetMinutes(july, spelling), -420, spelling);
    }
  });

  test('20,000 spellings of links add no zone, and the spellings and offsets kept stay bounded', () => {
    const links = [
      'US/Pacific',
      'America/Argentina/ComodRivadavia',
      'America/Indiana/Indianapolis',
      'Brazil/DeNoronha',
    ];
    for (const link of links) offsetMinutes(0, link);
    const zonesBefore = zoneCacheSizes().zones;
    const random = fc.sample(fc.tuple(fc.constantFrom(...links), fc.infiniteStream(fc.boolean())), {
      numRuns: 20_000,
      seed: 42,
    });
    let instant = Date.UTC(1900, 0, 1);
    for (const [link, upper] of random) {
      const spelling = [...link]
        .map((c) => (upper.next().value ? c.toUpperCase() : c.toLowerCase()))
        .join('');
      assert.notEqual(timeZoneId(spelling), undefined, spelling);
      // Every spelling asks 25 days later than the last: 20,000 blocks of offsets, ten times those kept.
      offsetMinutes(instant, spelling);
      instant += 25 * 86_400_000;
    }
    // A spelling that is no zone loads and keeps nothing.
    for (let i = 0; i < 1000; i++) {
      assert.equal(timeZoneId(`Mars/Crater_${i}`), undefined);
      assert.throws(() => offsetMinutes(0, `Mars/Crater_${i}`), RangeError);
    }
    const sizes = zoneCacheSizes();
    assert.equal(sizes.zones, zonesBefore, 'no zone entry for a spelling');
    assert.ok(sizes.spellings <= 1024, `spellings ${sizes.spellings}`);
    assert.ok(sizes.offsetBlocks <= 2048, `offset blocks ${sizes.offsetBlocks}`);
  });

  test('every zone and link of the platform resolves to one of a few hundred zones', () => {
    const names = [...timeZoneNames()];
    const ids = new Set(names.map((name) => timeZoneId(name.toLowerCase())));
    assert.ok(!ids.has(undefined));
    assert.ok(ids.size <= names.length, `${ids.size} zones for ${names.length} names`);
    assert.ok(zoneCacheSizes().zones < 1_000);
  });
});
