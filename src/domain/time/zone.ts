/**
 * UTC offsets and names of IANA time zones, from the tz database Pricepoint chose at start
 * (src/domain/time/tz-source.ts, docs/operating.md "Time zone data"): a folder of compiled TZif files
 * (tzif-zones.ts), or Node's own ICU data when that is the newest (icu-zones.ts).
 *
 * These are plain functions because every part of Pricepoint asks them (days, imports, the CLI), so
 * the database is chosen once per process: by `useTzSource` from the settings at start, else on first
 * use from the defaults (the system's /usr/share/zoneinfo, the shipped tzdata/ and ICU).
 *
 * Clients choose the zone (`tz`, in any letter case), so nothing here may grow with what they send:
 * every spelling resolves to one zone (`us/PaCiFiC` and `US/Pacific` to `America/Los_Angeles`), and
 * what is kept per zone is bounded by the zones the database has (docs/decisions.md).
 */
import { icuZones } from './icu-zones.js';
import { chooseTzSource, type TzSource, type TzSourceOptions } from './tz-source.js';
import { tzifZones } from './tzif-zones.js';
import type { ZoneBackend } from './zone-backend.js';

export { intlOffsetMinutes } from './icu-zones.js';

/** What a plausible zone name looks like before the database is asked: no spaces, offsets or paths. */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;
const DEFAULT_OPTIONS: TzSourceOptions = { systemDir: '/usr/share/zoneinfo' };

let chosen: { source: TzSource; backend: ZoneBackend; options: TzSourceOptions } | undefined;

function backend(): ZoneBackend {
  return (chosen ?? install(DEFAULT_OPTIONS)).backend;
}

function install(options: TzSourceOptions) {
  const source = chooseTzSource(options);
  const zones = source.path === undefined ? icuZones() : tzifZones(source.path);
  chosen = { source, backend: zones, options };
  return chosen;
}

/**
 * Chooses the tz database from the settings (`PRICEPOINT_TZDIR`, `TZDIR`) and answers which it is;
 * the same settings again keep the zones already read.
 * @example useTzSource({ systemDir: '/usr/share/zoneinfo' }) // { release: '2026f', source: 'shipped', path: '/app/tzdata' }
 */
export function useTzSource(options: TzSourceOptions): TzSource {
  const same =
    chosen !== undefined &&
    chosen.options.setting === options.setting &&
    chosen.options.systemDir === options.systemDir &&
    chosen.options.shippedDir === options.shippedDir &&
    chosen.options.icuRelease === options.icuRelease &&
    'icuRelease' in chosen.options === 'icuRelease' in options;
  return same && chosen !== undefined ? chosen.source : install(options).source;
}

/**
 * The tz release in use and where it came from.
 * @example tzSource() // { release: '2026f', source: 'shipped', path: '/app/tzdata' }
 */
export function tzSource(): TzSource {
  return (chosen ?? install(DEFAULT_OPTIONS)).source;
}

/** Every name of the database (zones and links, as it spells them). */
export function timeZoneNames(): ReadonlySet<string> {
  return backend().names();
}

/**
 * Whether `name` is an IANA zone or link name, spelt as the tz database spells it.
 * @example isTimeZone('Europe/Oslo') // true; isTimeZone('europe/oslo') // false; isTimeZone('+01:00') // false
 */
export function isTimeZone(name: string): boolean {
  return name.length <= 64 && ZONE_NAME.test(name) && backend().isName(name);
}

/**
 * The zone a client's spelling stands for, or `undefined` when it is none: every letter case and
 * every link of one zone give the same name (the zone the links point to), so it is the key of
 * anything cached per zone. Zone rules are the same under every name, so offsets and days do not change.
 * @example timeZoneId('us/PaCiFiC') // 'America/Los_Angeles'; timeZoneId('+01:00') // undefined
 */
export function timeZoneId(name: string): string | undefined {
  if (name.length > 64 || !ZONE_NAME.test(name)) return undefined;
  return backend().canonicalId(name);
}

/**
 * The UTC offset in minutes in force at `epochMs` in `timeZone` (east of UTC is positive); any
 * spelling `timeZoneId` knows. Throws `RangeError` for a name that is no zone.
 * @example offsetMinutes(Date.parse('2026-07-01T12:00:00Z'), 'Europe/Oslo') // 120
 */
export function offsetMinutes(epochMs: number, timeZone: string): number {
  return backend().offsetMinutes(epochMs, timeZone);
}

/**
 * A correctly spelt name as it is, else the zone a name in another letter case stands for (the
 * current one: `asia/katmandu` gives Asia/Kathmandu), or `undefined` when it is not a zone. Clients
 * may write `europe/oslo`; answers say `Europe/Oslo`.
 * @example canonicalTimeZone('america/new_york') // 'America/New_York'
 */
export function canonicalTimeZone(name: string): string | undefined {
  // A correctly spelt zone or link comes back as written (Asia/Kolkata, US/Eastern): series keep it.
  if (isTimeZone(name)) return name;
  if (!ZONE_NAME.test(name) || name.length > 64) return undefined;
  return backend().suggestion(name);
}

/**
 * What the zone caches hold now, for the tests that prove they stay bounded.
 * @example zoneCacheSizes() // { zones: 3, spellings: 0, offsetBlocks: 0 }
 */
export function zoneCacheSizes(): { zones: number; spellings: number; offsetBlocks: number } {
  return backend().cacheSizes();
}
