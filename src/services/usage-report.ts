/**
 * Usage history as it is shown (docs/usage-history.md "Reading usage"): the same JSON and CSV for
 * `GET /api/v1/usage/history`, `GET /api/v1/keys/{id}/usage` and `pricepoint usage show`.
 */
import { formatInstant } from '../domain/time/days.js';
import type { UsageRange } from '../domain/usage/usage-range.js';
import { NO_USAGE, type UsageCounts } from '../stores/usage.js';
import type { UsageBucket } from './usage-history.js';

export const USAGE_COUNT_FIELDS = [
  'requests',
  'served',
  'notModified',
  'rateLimited',
  'clientErrors',
  'units',
] as const satisfies readonly (keyof UsageCounts)[];

export interface UsageInterval extends UsageCounts {
  /** RFC 3339 with the offset of the report's zone. */
  readonly start: string;
  readonly end: string;
}

export interface UsageReport {
  /** The key, or `null` for every key summed (`pricepoint usage show` without `--key`). */
  readonly keyId: string | null;
  readonly granularity: UsageRange['granularity'];
  readonly timezone: string;
  readonly from: string;
  readonly to: string;
  readonly totals: UsageCounts;
  readonly intervals: readonly UsageInterval[];
}

/** @example usageReport('key_abc', range, await usage.read(range.buckets, 'key_abc')) */
export function usageReport(
  keyId: string | null,
  range: UsageRange,
  buckets: readonly UsageBucket[],
): UsageReport {
  const zone = range.timeZone;
  const totals = { ...NO_USAGE };
  const intervals = buckets.map((bucket) => {
    for (const field of USAGE_COUNT_FIELDS) totals[field] += bucket[field];
    const interval: Record<string, string | number> = {
      start: formatInstant(bucket.start, zone),
      end: formatInstant(bucket.end, zone),
    };
    for (const field of USAGE_COUNT_FIELDS) interval[field] = bucket[field];
    return interval as unknown as UsageInterval;
  });
  const first = range.buckets[0];
  const last = range.buckets.at(-1);
  return {
    keyId,
    granularity: range.granularity,
    timezone: zone,
    from: first === undefined ? '' : formatInstant(first.start, zone),
    to: last === undefined ? '' : formatInstant(last.end, zone),
    totals,
    intervals,
  };
}

export const USAGE_CSV_HEADER = ['start', 'end', ...USAGE_COUNT_FIELDS].join(',');

/** One row per interval under `USAGE_CSV_HEADER`, CRLF line ends as RFC 4180 has them. */
export function usageCsv(report: UsageReport): string {
  const rows = report.intervals.map((i) =>
    [i.start, i.end, ...USAGE_COUNT_FIELDS.map((f) => i[f])].join(','),
  );
  return `${[USAGE_CSV_HEADER, ...rows].join('\r\n')}\r\n`;
}
