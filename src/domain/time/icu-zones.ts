/**
 * Zones read from Node's own ICU data through `Intl`: used only when ICU's tz release is newer than
 * every folder of compiled zone files Pricepoint can find (docs/operating.md "Time zone data").
 *
 * Offsets are multiples of 15 minutes and nearly every transition falls on a whole quarter hour in
 * UTC (rules switch at whole local hours such as 02:00), but not all: Antarctica/Casey switched at
 * 00:01 local time (16:01 UTC) in 2020, 2021 and 2022. So the cache holds the offset at the start of
 * each UTC quarter hour, and an instant inside a quarter hour takes the cached value only when the
 * quarter hour ends with the same offset it starts with; otherwise it asks `Intl`.
 *
 * Clients choose the zone (`tz`, in any letter case), so nothing here may grow with what they send:
 * every spelling resolves once to the zone `Intl` stands it for (`us/PaCiFiC` and `US/Pacific` to
 * `America/Los_Angeles`), one entry per zone the platform knows holds its formatter, and the
 * offsets of all zones share one bounded cache of blocks (docs/decisions.md).
 */
import { boundedCache } from '../../cache/bounded-cache.js';
import type { ZoneBackend } from './zone-backend.js';

const QUARTER_HOUR_MS = 15 * 60_000;
/** Quarter hours per block of cached offsets: 2,048 are 21 1/3 days, 4 KiB as 16-bit minutes. */
const BLOCK_QUARTERS = 2048;
/** Blocks kept across all zones: 8 MiB, a year of quarter hours in each of 117 zones. */
const MAX_BLOCKS = 2048;
/** Spellings remembered; a forgotten one costs one `Intl.DateTimeFormat` when it comes back. */
const MAX_SPELLINGS = 1024;
/** More than the platform has zones (about 600 with its links), so a block key is unique. */
const ZONE_SLOTS = 4096;
/** A block's mark for a quarter hour not looked up yet; no offset comes near it. */
const UNKNOWN = -32_768;
/** What a plausible zone name looks like before `Intl` is asked: no spaces, offsets or paths. */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

/** One zone as `Intl` names it, whatever spelling found it. */
interface Zone {
  readonly id: string;
  /** Small and unique: the zone's part of a block key. */
  readonly slot: number;
  readonly format: Intl.DateTimeFormat;
  /** The block used last, kept at hand: a day or a year is read block after block. */
  lastBlock: number;
  lastOffsets: Int16Array | undefined;
}

/** A formatter of `name`'s wall clock; throws `RangeError` when `Intl` knows no such zone. */
function wallClockFormat(name: string): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat('en-US', {
    timeZone: name,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
}

/** The offset straight from `Intl`, uncached: the reference the cache is tested against. */
export function intlOffsetMinutes(epochMs: number, timeZone: string): number {
  return formattedOffset(wallClockFormat(timeZone), epochMs);
}

function formattedOffset(format: Intl.DateTimeFormat, epochMs: number): number {
  const parts = format.formatToParts(epochMs);
  let year = 0;
  let month = 0;
  let day = 0;
  let hour = 0;
  let minute = 0;
  let second = 0;
  for (const part of parts) {
    switch (part.type) {
      case 'year':
        year = Number(part.value);
        break;
      case 'month':
        month = Number(part.value);
        break;
      case 'day':
        day = Number(part.value);
        break;
      case 'hour':
        hour = Number(part.value);
        break;
      case 'minute':
        minute = Number(part.value);
        break;
      case 'second':
        second = Number(part.value);
        break;
    }
  }
  const asUtc = Date.UTC(year, month - 1, day, hour, minute, second);
  const wholeSecond = Math.floor(epochMs / 1000) * 1000;
  return Math.round((asUtc - wholeSecond) / 60_000);
}

/**
 * Whether one part of a zone name is capitalised like the tz database's names: words start with a
 * capital (`Eastern`, `Port-au-Prince`, `Knox_IN`, `GB-Eire`), abbreviations are short runs of capitals
 * (`US`, `NZ-CHAT`, `EST5EDT`, `GMT+0`).
 */
function capitalisedAsTzdb(part: string): boolean {
  if (!/^[A-Z]/.test(part)) return false;
  if (/[a-z]/.test(part)) return true;
  return part.split(/[^A-Z]+/).every((run) => run.length <= 4);
}

/**
 * Node's ICU as a tz database: names, spellings and offsets as `Intl` has them. Each call makes a
 * database with caches of its own; zone.ts makes one when ICU is the database chosen.
 * @example icuZones().offsetMinutes(Date.parse('2026-07-01T12:00:00Z'), 'Europe/Oslo') // 120
 */
export function icuZones(): ZoneBackend {
  /**
   * One entry per zone `Intl` resolves names to (445 with Node 20's ICU data, for the 598 names of the
   * tz database): bounded by the platform, not by requests, and never past `ZONE_SLOTS`.
   */
  const zonesById = new Map<string, Zone>();
  const zonesBySpelling = boundedCache<string, Zone>({ maxEntries: MAX_SPELLINGS });
  const offsetBlocks = boundedCache<number, Int16Array>({ maxEntries: MAX_BLOCKS });
  /** Names of every IANA zone the platform knows, plus `UTC`. */
  const names: ReadonlySet<string> = new Set([...Intl.supportedValuesOf('timeZone'), 'UTC', 'Etc/UTC']);
  const byLowerCase = new Map([...names].map((zone) => [zone.toLowerCase(), zone]));
  let lastSpelling: string | undefined;
  let lastZone: Zone | undefined;

  /** Whether `name` is an IANA zone name, spelled as the tz database spells it. */
  function isTimeZone(name: string): boolean {
    if (names.has(name)) return true;
    // Links such as `US/Eastern` are valid zones that `supportedValuesOf` does not list.
    if (!ZONE_NAME.test(name)) return false;
    const resolved = timeZoneId(name);
    if (resolved === undefined) return false;
    if (resolved === name) return true;
    // `Intl` matches names case-insensitively ('europe/oslo' resolves to 'Europe/Oslo'), and Node 20
    // resolves a link to its target ('US/Eastern' to 'America/New_York'), so the spelling of a link
    // cannot be compared with anything: it must at least be capitalised the way the database does it.
    if (resolved.toLowerCase() === name.toLowerCase()) return false;
    return name.split('/').every(capitalisedAsTzdb);
  }

  /** The zone `name` stands for; throws `RangeError` when `Intl` knows no such zone. */
  function zoneOf(name: string): Zone {
    if (name === lastSpelling && lastZone !== undefined) return lastZone;
    // Names from timeZoneId and most series' zones are the platform's own: one plain map lookup.
    let zone = zonesById.get(name) ?? zonesBySpelling.get(name);
    if (zone === undefined) {
      const format = wallClockFormat(name);
      const id = format.resolvedOptions().timeZone;
      zone = zonesById.get(id);
      if (zone === undefined) {
        if (zonesById.size >= ZONE_SLOTS) throw new RangeError(`${name} is not a zone this platform knows`);
        zone = { id, slot: zonesById.size, format, lastBlock: Number.NaN, lastOffsets: undefined };
        zonesById.set(id, zone);
      }
      zonesBySpelling.set(name, zone);
    }
    lastSpelling = name;
    lastZone = zone;
    return zone;
  }

  /**
   * The zone a client's spelling stands for, as `Intl` names it, or `undefined` when it is none: every
   * letter case and every link of one zone give the same name, so it is the key of anything cached per
   * zone. Zone rules are the same under every name, so offsets and days do not change.
   */
  function timeZoneId(name: string): string | undefined {
    if (name.length > 64 || !ZONE_NAME.test(name)) return undefined;
    try {
      return zoneOf(name).id;
    } catch {
      return undefined;
    }
  }

  /** The UTC offset in minutes in force at `epochMs` in `timeZone` (east of UTC is positive). */
  function offsetMinutes(epochMs: number, timeZone: string): number {
    const zone = zoneOf(timeZone);
    const bucket = Math.floor(epochMs / QUARTER_HOUR_MS);
    const atStart = quarterHourStartOffset(zone, bucket);
    if (epochMs === bucket * QUARTER_HOUR_MS) return atStart;
    // Inside the quarter hour, the offset at its start holds unless the next quarter hour starts with
    // another: then a transition lies inside (or exactly at its end), and `Intl` answers uncached.
    if (quarterHourStartOffset(zone, bucket + 1) === atStart) return atStart;
    return formattedOffset(zone.format, epochMs);
  }

  /** The offset at the first instant of the UTC quarter hour `bucket`, cached. */
  function quarterHourStartOffset(zone: Zone, bucket: number): number {
    const block = Math.floor(bucket / BLOCK_QUARTERS);
    let offsets = zone.lastBlock === block ? zone.lastOffsets : undefined;
    if (offsets === undefined) {
      const key = block * ZONE_SLOTS + zone.slot;
      offsets = offsetBlocks.get(key);
      if (offsets === undefined) {
        offsets = new Int16Array(BLOCK_QUARTERS).fill(UNKNOWN);
        offsetBlocks.set(key, offsets);
      }
      zone.lastBlock = block;
      zone.lastOffsets = offsets;
    }
    const slot = bucket - block * BLOCK_QUARTERS;
    const cached = offsets[slot];
    if (cached !== undefined && cached !== UNKNOWN) return cached;
    const offset = formattedOffset(zone.format, bucket * QUARTER_HOUR_MS);
    offsets[slot] = offset;
    return offset;
  }

  /**
   * The tz database's own spelling of a zone name given in any letter case, or `undefined` when it is
   * not a zone. Clients may write `europe/oslo`; answers always say `Europe/Oslo`.
   */
  function canonicalTimeZone(name: string): string | undefined {
    // A correctly spelt zone or link comes back as written: Node 20's ICU would turn Asia/Kolkata into
    // Asia/Calcutta and US/Eastern into America/New_York.
    if (isTimeZone(name)) return name;
    if (!ZONE_NAME.test(name) || name.length > 64) return undefined;
    return byLowerCase.get(name.toLowerCase()) ?? timeZoneId(name); // links: us/eastern
  }

  return {
    names: () => names,
    isName: isTimeZone,
    canonicalId: timeZoneId,
    suggestion: canonicalTimeZone,
    offsetMinutes,
    cacheSizes: () => ({
      zones: zonesById.size,
      spellings: zonesBySpelling.size,
      offsetBlocks: offsetBlocks.size,
    }),
  };
}
