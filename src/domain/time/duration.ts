/**
 * Durations as operators type them: a whole number and one unit, `30s`, `15m`, `24h` or `7d`.
 * Months and years are left out on purpose: their length depends on the calendar.
 */
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * Milliseconds of `text`, or `undefined` when it is not a duration.
 * @example parseDuration('24h') // 86_400_000
 */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d{1,9})(s|m|h|d)$/.exec(text.trim());
  if (match === null) return undefined;
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}
