/**
 * Points in time as operators and clients write them: `YYYY-MM-DD` (00:00 UTC that day) or an RFC 3339
 * timestamp with its offset. Impossible dates are refused rather than rolled over.
 */
const PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:[Zz]|[+-](\d{2}):(\d{2})))?$/;

/**
 * Epoch milliseconds of `value`, or `undefined` when it is not a date or RFC 3339 timestamp.
 * @example parseTimestamp('2030-06-01T12:00:00+02:00') // Date.UTC(2030, 5, 1, 10)
 */
export function parseTimestamp(value: string): number | undefined {
  const match = PATTERN.exec(value);
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, offsetHours = 0, offsetMinutes = 0] =
    (match?.slice(1) ?? []).map((field) => Number(field ?? 0));
  // Date.parse rolls impossible dates over (2030-02-30 becomes 2030-03-02), so every field is checked.
  const valid =
    match !== null &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= new Date(Date.UTC(year, month, 0)).getUTCDate() &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    offsetHours <= 23 &&
    offsetMinutes <= 59;
  if (!valid) return undefined;
  const ms = match[4] === undefined ? Date.parse(`${value}T00:00:00Z`) : Date.parse(value.toUpperCase());
  return Number.isNaN(ms) ? undefined : ms;
}
