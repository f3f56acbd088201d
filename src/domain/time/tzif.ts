/**
 * Compiled zone files of the IANA tz database (TZif, RFC 8536, versions 1 to 4), read into the
 * changes of UTC offset a zone makes. Version 2 and later files carry the transitions twice; the
 * 64-bit block (after the 32-bit one) is the one read, and its footer's POSIX TZ string gives every
 * instant after the last transition (src/domain/time/posix-tz.ts). No npm package reads TZif and is
 * kept up (docs/decisions.md), hence this small reader.
 *
 * Leap-second files (`right/`) are not meant: their leap records are skipped, not applied.
 */
import { type PosixTz, parsePosixTz, posixOffsetAt, posixTransitions } from './posix-tz.js';

export interface ZoneRules {
  /** Instants (epoch seconds, ascending) at which the offset changes. */
  readonly transitions: readonly number[];
  /** The offset (seconds east of UTC) from each transition on. */
  readonly offsets: readonly number[];
  /** The offset before the first transition (local time type 0). */
  readonly initialOffset: number;
  /** The rule after the last transition, when the file has one. */
  readonly footer: PosixTz | undefined;
}

const HEADER_BYTES = 44;

/**
 * Reads a TZif file; throws `SyntaxError` when it is not one.
 * @example parseTzif(readFileSync('/usr/share/zoneinfo/Europe/Oslo')).footer // { stdOffset: 3600, dst: ... }
 */
export function parseTzif(bytes: Uint8Array): ZoneRules {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const header = (at: number) => {
    if (
      bytes.byteLength < at + HEADER_BYTES ||
      String.fromCharCode(...bytes.subarray(at, at + 4)) !== 'TZif'
    ) {
      throw new SyntaxError('not a TZif file (no "TZif" header)');
    }
    const count = (n: number) => view.getUint32(at + 20 + n * 4);
    return {
      version: bytes[at + 4] ?? 0,
      isutcnt: count(0),
      isstdcnt: count(1),
      leapcnt: count(2),
      timecnt: count(3),
      typecnt: count(4),
      charcnt: count(5),
    };
  };
  const first = header(0);
  if (first.version === 0) return readBlock(view, 0, first, 4, undefined);
  const skip =
    first.timecnt * 5 +
    first.typecnt * 6 +
    first.charcnt +
    first.leapcnt * 8 +
    first.isstdcnt +
    first.isutcnt;
  const at = HEADER_BYTES + skip;
  const second = header(at);
  const size =
    second.timecnt * 9 +
    second.typecnt * 6 +
    second.charcnt +
    second.leapcnt * 12 +
    second.isstdcnt +
    second.isutcnt;
  const footerAt = at + HEADER_BYTES + size;
  if (bytes.byteLength < footerAt) throw new SyntaxError('TZif file cut short');
  const rest = new TextDecoder().decode(bytes.subarray(footerAt));
  const footerText = /^\n([^\n]*)\n/.exec(rest)?.[1];
  const footer = footerText ? parsePosixTz(footerText) : undefined;
  return readBlock(view, at, second, 8, footer);
}

function readBlock(
  view: DataView,
  headerAt: number,
  counts: { timecnt: number; typecnt: number; charcnt: number },
  timeBytes: 4 | 8,
  footer: PosixTz | undefined,
): ZoneRules {
  const { timecnt, typecnt } = counts;
  if (typecnt === 0) throw new SyntaxError('TZif file without a local time type');
  let at = headerAt + HEADER_BYTES;
  if (view.byteLength < at + timecnt * (timeBytes + 1) + typecnt * 6)
    throw new SyntaxError('TZif file cut short');
  const times: number[] = [];
  for (let i = 0; i < timecnt; i++, at += timeBytes) {
    times.push(timeBytes === 8 ? Number(view.getBigInt64(at)) : view.getInt32(at));
  }
  const typeIndexes: number[] = [];
  for (let i = 0; i < timecnt; i++, at += 1) typeIndexes.push(view.getUint8(at));
  const typeOffsets: number[] = [];
  for (let i = 0; i < typecnt; i++, at += 6) typeOffsets.push(view.getInt32(at));
  const offsets = typeIndexes.map((index) => {
    const offset = typeOffsets[index];
    if (offset === undefined)
      throw new SyntaxError(`TZif transition names local time type ${index} of ${typecnt}`);
    return offset;
  });
  return { transitions: times, offsets, initialOffset: typeOffsets[0] as number, footer };
}

/**
 * The offset (seconds east of UTC) the rules give at `epochSeconds`.
 * @example offsetSecondsAt(rules, Date.UTC(2026, 6, 1) / 1000) // 7200 in Europe/Oslo
 */
export function offsetSecondsAt(rules: ZoneRules, epochSeconds: number): number {
  const { transitions, offsets } = rules;
  const last = transitions.length - 1;
  if (rules.footer !== undefined && (last < 0 || epochSeconds >= (transitions[last] as number))) {
    return posixOffsetAt(rules.footer, epochSeconds);
  }
  if (last < 0 || epochSeconds < (transitions[0] as number)) return rules.initialOffset;
  let lo = 0;
  let hi = last;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((transitions[mid] as number) <= epochSeconds) lo = mid;
    else hi = mid - 1;
  }
  return offsets[lo] as number;
}

/**
 * Every change of offset from the beginning of the file to the end of `untilYear`: the file's own
 * transitions, then the footer's, each kept only where the offset really changes (a change of name or
 * of the DST flag alone, such as Europe/Chisinau's, is none). `from` is the first instant they are
 * complete for: a file with only a footer has changes from the year `sinceYear` on.
 * @example zoneChanges(rules, 1800, 2200) // { from: -Infinity, initialOffset: 2580, changes: [{ at: -2840141580, offset: 3600 }, ...] }
 */
export function zoneChanges(
  rules: ZoneRules,
  sinceYear: number,
  untilYear: number,
): { from: number; initialOffset: number; changes: { at: number; offset: number }[] } {
  const { footer, transitions } = rules;
  const footerOnly = transitions.length === 0 && footer !== undefined;
  const from =
    footerOnly && footer.dst !== undefined ? Date.UTC(sinceYear, 0, 1) / 1000 : Number.NEGATIVE_INFINITY;
  const initialOffset = footerOnly
    ? posixOffsetAt(footer, Number.isFinite(from) ? from : 0)
    : rules.initialOffset;
  const changes: { at: number; offset: number }[] = [];
  let current = initialOffset;
  const add = (at: number, offset: number) => {
    if (offset === current) return;
    changes.push({ at, offset });
    current = offset;
  };
  for (const [i, at] of transitions.entries()) add(at, rules.offsets[i] as number);
  if (footer === undefined) return { from, initialOffset, changes };
  const lastAt = transitions.at(-1) ?? from;
  const fromYear = Number.isFinite(lastAt) ? new Date(lastAt * 1000).getUTCFullYear() : untilYear;
  for (let year = fromYear; year <= untilYear; year++) {
    for (const change of posixTransitions(footer, year).sort((a, b) => a.at - b.at)) {
      // The offset from a change on is what the footer says at its instant: that settles two changes
      // at one instant (DST all year) the way posixOffsetAt does.
      if (change.at > lastAt) add(change.at, posixOffsetAt(footer, change.at));
    }
  }
  return { from, initialOffset, changes };
}
