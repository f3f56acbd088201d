/**
 * Zones read from a folder of compiled TZif files (docs/operating.md "Time zone data"). The names come from
 * the folder's `tzdata.zi` (`Z` zones and `L target link` links) or, without one, from the files
 * themselves (a symbolic link names its target). Every spelling of a name, in any letter case and
 * through any link, resolves to the zone the link points to, so `asia/katmandu` is `Asia/Kathmandu`.
 *
 * A zone's file is read on first use and turned into its changes of offset up to the end of 2200, so
 * a lookup is one comparison with the segment used last, else a binary search. Nothing here grows with
 * what clients send: a spelling that is no name loads and keeps nothing, and at most one entry per zone
 * of the folder (446 in 2026f as Debian builds it) is ever kept.
 */
import { lstatSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { readTzdataZi } from './tz-source.js';
import { offsetSecondsAt, parseTzif, type ZoneRules, zoneChanges } from './tzif.js';
import type { ZoneBackend } from './zone-backend.js';

/** Past this (2201-01-01) offsets are worked out from the footer at each lookup. */
const UNTIL_YEAR = 2200;
/** Names in a zoneinfo folder that are not zones, or not ones to offer. */
const NOT_ZONES = new Set(['Factory', 'posixrules', 'localtime', 'right', 'posix', 'SECURITY']);

interface LoadedZone {
  readonly rules: ZoneRules;
  /** Segment j runs from starts[j] to starts[j + 1] (ms); the first from -Infinity, the last to +Infinity. */
  readonly starts: Float64Array;
  readonly minutes: Int32Array;
  /** Outside [from, to) the rules are asked directly. */
  readonly from: number;
  readonly to: number;
  last: number;
}

export function tzifZones(dir: string): ZoneBackend {
  const canonicalOf = namesOf(dir);
  const byLowerCase = new Map([...canonicalOf.keys()].map((name) => [name.toLowerCase(), name]));
  const names: ReadonlySet<string> = new Set(canonicalOf.keys());
  const loaded = new Map<string, LoadedZone>();

  const zoneOf = (name: string): LoadedZone => {
    const id = canonicalOf.get(name) ?? canonicalOf.get(byLowerCase.get(name.toLowerCase()) ?? '');
    if (id === undefined) throw new RangeError(`${name} is not a zone of the tz data in ${dir}`);
    let zone = loaded.get(id);
    if (zone === undefined) {
      zone = load(dir, id);
      loaded.set(id, zone);
    }
    return zone;
  };
  let lastName: string | undefined;
  let lastZone: LoadedZone | undefined;

  return {
    names: () => names,
    isName: (name) => canonicalOf.has(name),
    canonicalId: (name) =>
      canonicalOf.get(name) ?? canonicalOf.get(byLowerCase.get(name.toLowerCase()) ?? ''),
    suggestion: (name) => canonicalOf.get(byLowerCase.get(name.toLowerCase()) ?? ''),
    offsetMinutes(epochMs, name) {
      let zone = name === lastName ? lastZone : undefined;
      if (zone === undefined) {
        zone = zoneOf(name);
        lastName = name;
        lastZone = zone;
      }
      return offsetIn(zone, epochMs);
    },
    cacheSizes: () => ({ zones: loaded.size, spellings: 0, offsetBlocks: 0 }),
  };
}

function offsetIn(zone: LoadedZone, epochMs: number): number {
  const { starts, minutes } = zone;
  let j = zone.last;
  if (!(epochMs >= (starts[j] as number) && epochMs < (starts[j + 1] as number))) {
    if (!(epochMs >= zone.from && epochMs < zone.to)) {
      return toMinutes(offsetSecondsAt(zone.rules, Math.floor(epochMs / 1000)));
    }
    let lo = 0;
    let hi = minutes.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as number) <= epochMs) lo = mid;
      else hi = mid - 1;
    }
    j = lo;
    zone.last = j;
  }
  return minutes[j] as number;
}

/** Whole minutes, as offsets are written (local mean times of the 1800s had seconds); never -0. */
function toMinutes(seconds: number): number {
  return Math.round(seconds / 60) || 0;
}

function load(dir: string, id: string): LoadedZone {
  let rules: ZoneRules;
  try {
    rules = parseTzif(readFileSync(join(dir, id)));
  } catch (error) {
    throw new Error(`cannot read the zone file ${join(dir, id)}: ${(error as Error).message}`);
  }
  const { from, initialOffset, changes } = zoneChanges(rules, 1800, UNTIL_YEAR);
  const starts = new Float64Array(changes.length + 2);
  const minutes = new Int32Array(changes.length + 1);
  starts[0] = Number.NEGATIVE_INFINITY;
  minutes[0] = toMinutes(initialOffset);
  changes.forEach((change, i) => {
    starts[i + 1] = change.at * 1000;
    minutes[i + 1] = toMinutes(change.offset);
  });
  starts[changes.length + 1] = Number.POSITIVE_INFINITY;
  return { rules, starts, minutes, from: from * 1000, to: Date.UTC(UNTIL_YEAR + 1, 0, 1), last: 0 };
}

/** Every name of the folder, each with the zone it stands for. */
function namesOf(dir: string): Map<string, string> {
  const canonicalOf = new Map<string, string>();
  const zi = readTzdataZi(dir);
  if (zi !== undefined) {
    for (const zone of zi.zones) if (!NOT_ZONES.has(zone)) canonicalOf.set(zone, zone);
    const targets = new Map(zi.links);
    for (const [link] of zi.links) {
      // A link may point to another link; follow a few steps, never round a loop.
      let target = targets.get(link);
      for (let step = 0; step < 8 && target !== undefined && !canonicalOf.has(target); step++) {
        target = targets.get(target);
      }
      const zone = target === undefined ? undefined : canonicalOf.get(target);
      if (zone !== undefined && !NOT_ZONES.has(link)) canonicalOf.set(link, zone);
    }
    return canonicalOf;
  }
  const root = realpathSync(dir);
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder)) {
      if (NOT_ZONES.has(entry) || entry.includes('.') || entry.startsWith('+')) continue;
      const path = join(folder, entry);
      const name = relative(dir, path).split(sep).join('/');
      const stat = lstatSync(path);
      if (stat.isDirectory()) walk(path);
      else if (isTzif(path)) {
        const target = relative(root, realpathSync(path)).split(sep).join('/');
        canonicalOf.set(name, stat.isSymbolicLink() && !target.startsWith('..') ? target : name);
      }
    }
  };
  walk(dir);
  return canonicalOf;
}

function isTzif(path: string): boolean {
  try {
    return readFileSync(path).subarray(0, 4).toString('latin1') === 'TZif';
  } catch {
    return false;
  }
}
