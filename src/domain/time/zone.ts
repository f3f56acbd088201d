/**
 * UTC offsets of IANA time zones, read from the platform's tz database through `Intl`.
 *
 * Offsets are multiples of 15 minutes and nearly every transition falls on a whole quarter hour in
 * UTC (rules switch at whole local hours such as 02:00), but not all: Antarctica/Casey switched at
 * 00:01 local time (16:01 UTC) in 2020, 2021 and 2022. So the cache holds the offset at the start of
 * each UTC quarter hour, and an instant inside a quarter hour takes the cached value only when the
 * quarter hour ends with the same offset it starts with; otherwise it asks `Intl`. The property test in
 * `days.test.ts` checks the cache against `Intl` at every transition of every zone from 2020 to 2030.
 */

const QUARTER_HOUR_MS = 15 * 60_000;
const CACHE_LIMIT = 200_000;

interface ZoneEntry {
  readonly format: Intl.DateTimeFormat;
  offsets: Map<number, number>;
}

const zones = new Map<string, ZoneEntry>();
let knownZones: Set<string> | undefined;

/** Names of every IANA zone the platform knows, plus `UTC`. */
export function timeZoneNames(): ReadonlySet<string> {
  knownZones ??= new Set([...Intl.supportedValuesOf('timeZone'), 'UTC', 'Etc/UTC']);
  return knownZones;
}

/**
 * Whether `name` is an IANA zone name, spelled as the tz database spells it.
 * @example isTimeZone('Europe/Oslo') // true; isTimeZone('europe/oslo') // false; isTimeZone('+01:00') // false
 */
export function isTimeZone(name: string): boolean {
  if (timeZoneNames().has(name)) return true;
  // Links such as `US/Eastern` are valid zones that `supportedValuesOf` does not list.
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) return false;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return false;
  }
  if (resolved === name) return true;
  // `Intl` matches names case-insensitively ('europe/oslo' resolves to 'Europe/Oslo'), and Node 20
  // resolves a link to its target ('US/Eastern' to 'America/New_York'), so the spelling of a link
  // cannot be compared with anything: it must at least be capitalised the way the database does it.
  if (resolved.toLowerCase() === name.toLowerCase()) return false;
  return name.split('/').every(capitalisedAsTzdb);
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

function zoneEntry(timeZone: string): ZoneEntry {
  let entry = zones.get(timeZone);
  if (entry === undefined) {
    entry = {
      format: new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      }),
      offsets: new Map(),
    };
    zones.set(timeZone, entry);
  }
  return entry;
}

/** The offset straight from `Intl`, uncached: the reference the cache is tested against. */
export function intlOffsetMinutes(epochMs: number, timeZone: string): number {
  const parts = zoneEntry(timeZone).format.formatToParts(epochMs);
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
 * The UTC offset in minutes in force at `epochMs` in `timeZone` (east of UTC is positive).
 * @example offsetMinutes(Date.parse('2026-07-01T12:00:00Z'), 'Europe/Oslo') // 120
 */
export function offsetMinutes(epochMs: number, timeZone: string): number {
  const entry = zoneEntry(timeZone);
  const bucket = Math.floor(epochMs / QUARTER_HOUR_MS);
  const atStart = quarterHourStartOffset(entry, bucket, timeZone);
  if (epochMs === bucket * QUARTER_HOUR_MS) return atStart;
  // Inside the quarter hour, the offset at its start holds unless the next quarter hour starts with
  // another: then a transition lies inside (or exactly at its end), and `Intl` answers uncached.
  if (quarterHourStartOffset(entry, bucket + 1, timeZone) === atStart) return atStart;
  return intlOffsetMinutes(epochMs, timeZone);
}

/** The offset at the first instant of the UTC quarter hour `bucket`, cached. */
function quarterHourStartOffset(entry: ZoneEntry, bucket: number, timeZone: string): number {
  const cached = entry.offsets.get(bucket);
  if (cached !== undefined) return cached;
  const offset = intlOffsetMinutes(bucket * QUARTER_HOUR_MS, timeZone);
  if (entry.offsets.size >= CACHE_LIMIT) entry.offsets = new Map();
  entry.offsets.set(bucket, offset);
  return offset;
}

/**
 * The tz database's own spelling of a zone name given in any letter case, or `undefined` when it is
 * not a zone. Clients may write `europe/oslo`; answers always say `Europe/Oslo`.
 * @example canonicalTimeZone('america/new_york') // 'America/New_York'
 */
export function canonicalTimeZone(name: string): string | undefined {
  // A correctly spelt zone or link comes back as written: Node 20's ICU would turn Asia/Kolkata into
  // Asia/Calcutta and US/Eastern into America/New_York.
  if (isTimeZone(name)) return name;
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name) || name.length > 64) return undefined;
  const lower = name.toLowerCase();
  for (const zone of timeZoneNames()) if (zone.toLowerCase() === lower) return zone;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone; // links: US/Eastern
  } catch {
    return undefined;
  }
}
