import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../config/config.js';
import {
  chooseTzSource,
  compareReleases,
  describeTzSource,
  folderRelease,
  SHIPPED_TZDIR,
} from './tz-source.js';
import { offsetMinutes, timeZoneId, timeZoneNames, tzSource, useTzSource } from './zone.js';

const root = mkdtempSync(join(tmpdir(), 'pricepoint-tz-'));
after(() => {
  useTzSource({ systemDir: '/usr/share/zoneinfo' });
  rmSync(root, { recursive: true, force: true });
});

let folders = 0;
/**
 * A zoneinfo folder with a few zones copied from tzdata/ (`files`: name in the folder → zone copied)
 * and, as asked, a `tzdata.zi` whose first line names `release`, or a `+VERSION` file.
 */
function tzFolder(options: {
  release?: string;
  by?: 'tzdata.zi' | '+VERSION';
  files?: Record<string, string>;
  links?: Record<string, string>;
}): string {
  const dir = join(root, `tz${folders++}`);
  const files = options.files ?? { 'Etc/UTC': 'Etc/UTC', 'Europe/Oslo': 'Europe/Oslo' };
  for (const [name, from] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    copyFileSync(join(SHIPPED_TZDIR, from), join(dir, name));
  }
  const links = options.links ?? {};
  if (options.release !== undefined && (options.by ?? 'tzdata.zi') === 'tzdata.zi') {
    const zones = Object.keys(files).map((name) => `Z ${name} 0 - UTC`);
    const linkLines = Object.entries(links).map(([link, target]) => `L ${target} ${link}`);
    writeFileSync(
      join(dir, 'tzdata.zi'),
      [`# version ${options.release}`, ...zones, ...linkLines, ''].join('\n'),
    );
  }
  if (options.release !== undefined && options.by === '+VERSION') {
    writeFileSync(join(dir, '+VERSION'), `${options.release}\n`);
  }
  mkdirSync(dir, { recursive: true });
  return dir;
}

describe('tz releases', () => {
  test('are ordered by year, then letters', () => {
    assert.ok(compareReleases('2025c', '2026f') < 0);
    assert.ok(compareReleases('2026f', '2025c') > 0);
    assert.ok(compareReleases('2025b', '2025c') < 0);
    assert.ok(compareReleases('2026z', '2026za') < 0);
    assert.equal(compareReleases('2026f', '2026f'), 0);
  });

  test("a folder's release is tzdata.zi's first line, else +VERSION, else none", () => {
    assert.equal(folderRelease(SHIPPED_TZDIR), '2026f');
    assert.equal(folderRelease(tzFolder({ release: '2027a' })), '2027a');
    assert.equal(folderRelease(tzFolder({ release: '2024b', by: '+VERSION' })), '2024b');
    assert.equal(folderRelease(tzFolder({})), undefined);
    assert.equal(folderRelease(join(root, 'missing')), undefined);
  });
});

describe('choosing the tz database', () => {
  const shippedDir = SHIPPED_TZDIR;

  test('the newest of system, shipped and ICU wins', () => {
    const newer = tzFolder({ release: '2027a' });
    const older = tzFolder({ release: '2025b' });
    assert.deepEqual(chooseTzSource({ systemDir: newer, shippedDir, icuRelease: '2025c' }), {
      release: '2027a',
      source: 'system',
      path: newer,
    });
    assert.deepEqual(chooseTzSource({ systemDir: older, shippedDir, icuRelease: '2025c' }), {
      release: '2026f',
      source: 'shipped',
      path: shippedDir,
    });
    assert.deepEqual(chooseTzSource({ systemDir: older, shippedDir, icuRelease: '2099a' }), {
      release: '2099a',
      source: 'icu',
    });
    const byVersionFile = tzFolder({ release: '2027b', by: '+VERSION' });
    assert.equal(
      chooseTzSource({ systemDir: byVersionFile, shippedDir, icuRelease: '2025c' }).source,
      'system',
    );
  });

  test('on a tie the system wins over the shipped copy, and either over ICU', () => {
    const same = tzFolder({ release: '2026f' });
    assert.equal(chooseTzSource({ systemDir: same, shippedDir, icuRelease: '2026f' }).source, 'system');
    const missing = join(root, 'no-such-folder');
    assert.equal(chooseTzSource({ systemDir: missing, shippedDir, icuRelease: '2026f' }).source, 'shipped');
  });

  test('a folder whose release cannot be read is never preferred, nor one without zone files', () => {
    const unknown = tzFolder({});
    assert.equal(chooseTzSource({ systemDir: unknown, shippedDir, icuRelease: '2025c' }).source, 'shipped');
    const empty = join(root, 'empty');
    mkdirSync(empty);
    writeFileSync(join(empty, 'tzdata.zi'), '# version 2099z\n');
    assert.equal(chooseTzSource({ systemDir: empty, shippedDir, icuRelease: '2025c' }).source, 'shipped');
    const nothing = join(root, 'nothing');
    assert.deepEqual(chooseTzSource({ systemDir: nothing, shippedDir: nothing, icuRelease: '2025c' }), {
      release: '2025c',
      source: 'icu',
    });
  });

  test('PRICEPOINT_TZDIR is used whatever its release, and says "unknown" when it does not name one', () => {
    const old = tzFolder({ release: '2020a' });
    assert.deepEqual(chooseTzSource({ setting: old, systemDir: SHIPPED_TZDIR, icuRelease: '2025c' }), {
      release: '2020a',
      source: 'setting',
      path: old,
    });
    const unnamed = tzFolder({});
    assert.equal(chooseTzSource({ setting: unnamed, systemDir: SHIPPED_TZDIR }).release, 'unknown');
    assert.equal(
      describeTzSource({ release: '2026f', source: 'shipped', path: '/app/tzdata' }),
      'tz 2026f (shipped: /app/tzdata)',
    );
  });

  test('settings: TZDIR names the system folder, PRICEPOINT_TZDIR a folder that must hold zone files', () => {
    const newer = tzFolder({ release: '2099a' });
    const config = loadConfig({ TZDIR: newer });
    assert.deepEqual(config.tzData, { systemDir: newer });
    assert.deepEqual(useTzSource(config.tzData), { release: '2099a', source: 'system', path: newer });
    assert.deepEqual(loadConfig({}).tzData, { systemDir: '/usr/share/zoneinfo' });
    assert.equal(loadConfig({ PRICEPOINT_TZDIR: newer }).tzData.setting, newer);
    for (const bad of [join(root, 'no-such-folder'), join(SHIPPED_TZDIR, 'README.md'), root]) {
      assert.throws(
        () => loadConfig({ PRICEPOINT_TZDIR: bad }),
        (error: unknown) => error instanceof ConfigError && /^PRICEPOINT_TZDIR: .*TZif/.test(error.message),
        bad,
      );
    }
  });
});

describe('zones from the chosen folder', () => {
  test('offsets and names come from the folder in use, read when first asked', () => {
    // A folder whose Vancouver is Los Angeles' file: it still falls back in November 2026.
    const dir = tzFolder({
      release: '2030a',
      files: { 'Etc/UTC': 'Etc/UTC', 'America/Vancouver': 'America/Los_Angeles' },
      links: { 'Canada/Pacific': 'America/Vancouver', UTC: 'Etc/UTC' },
    });
    const today = Date.parse('2026-11-24T12:00:00Z');
    useTzSource({ setting: SHIPPED_TZDIR, systemDir: SHIPPED_TZDIR });
    assert.equal(offsetMinutes(today, 'America/Vancouver'), -420);
    assert.deepEqual(useTzSource({ setting: dir, systemDir: SHIPPED_TZDIR }), {
      release: '2030a',
      source: 'setting',
      path: dir,
    });
    assert.deepEqual(tzSource(), { release: '2030a', source: 'setting', path: dir });
    assert.equal(offsetMinutes(today, 'America/Vancouver'), -480);
    assert.equal(offsetMinutes(today, 'canada/PACIFIC'), -480);
    assert.deepEqual([...timeZoneNames()].sort(), ['America/Vancouver', 'Canada/Pacific', 'Etc/UTC', 'UTC']);
    assert.equal(timeZoneId('Europe/Oslo'), undefined, 'not in this folder');
    assert.equal(timeZoneId('utc'), 'Etc/UTC');
  });

  test('a folder without tzdata.zi: its files are the names, and a symbolic link names its target', () => {
    const dir = tzFolder({ release: '2030b', by: '+VERSION' });
    mkdirSync(join(dir, 'Arctic'));
    symlinkSync('../Europe/Oslo', join(dir, 'Arctic', 'Longyearbyen'));
    writeFileSync(join(dir, 'zone.tab'), 'NO\t+5955+01045\tEurope/Oslo\n');
    useTzSource({ setting: dir, systemDir: SHIPPED_TZDIR });
    assert.deepEqual([...timeZoneNames()].sort(), ['Arctic/Longyearbyen', 'Etc/UTC', 'Europe/Oslo']);
    assert.equal(timeZoneId('arctic/longyearbyen'), 'Europe/Oslo');
    assert.equal(offsetMinutes(Date.parse('2026-07-01T00:00:00Z'), 'Arctic/Longyearbyen'), 120);
  });
});
