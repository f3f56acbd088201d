/**
 * Usage history as it is shown (docs/usage-history.md "Reading usage"): the same JSON and CSV for
 * `GET /api/v1/usage/history`, `GET /api/v1/keys/{id}/usage` and `pricepoint usage show`.
 */
import { formatInstant } from '../domain/time/days.js';
import type { UsageRange } from '../domain/usage/usage-range.js';
import { NO_USAGE, type TierBucket, type UsageCounts } from '../stores/usage.js';
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

/** One tier's totals in an interval of the overview: the usage counts and how many keys made any request. */
export interface TierCounts extends UsageCounts {
  readonly keys: number;
}

/** Every key's usage summed per tier (`GET /api/v1/usage/overview`, docs/usage-history.md). */
export interface UsageOverview {
  readonly granularity: UsageRange['granularity'];
  readonly timezone: string;
  readonly from: string;
  readonly to: string;
  /** Every tier the intervals name: the configured ones, then any a stored key still names. */
  readonly tiers: readonly string[];
  /** Per tier over the whole range; `keys` counts each key once. */
  readonly totals: Readonly<Record<string, TierCounts>>;
  readonly intervals: readonly {
    readonly start: string;
    readonly end: string;
    readonly tiers: Readonly<Record<string, TierCounts>>;
  }[];
}

const NO_TIER_USAGE: TierCounts = { ...NO_USAGE, keys: 0 };

/**
 * The overview of `range` from the store's rows: `rows` of bucket `range.buckets.length` are the
 * totals of the whole range (read beside the buckets, so that a key is counted once in them).
 * @example usageOverview(range, ['free', 'pro'], await usage.tierBuckets([...range.buckets, whole]))
 */
export function usageOverview(
  range: UsageRange,
  configured: readonly string[],
  rows: readonly TierBucket[],
): UsageOverview {
  const zone = range.timeZone;
  const stored = [...new Set(rows.map((r) => r.tier))].filter((t) => !configured.includes(t)).sort();
  const tiers = [...configured, ...stored];
  const zeros = () => Object.fromEntries(tiers.map((t) => [t, NO_TIER_USAGE])) as Record<string, TierCounts>;
  const perBucket = range.buckets.map(zeros);
  const totals = zeros();
  for (const row of rows) {
    const target = row.bucket === range.buckets.length ? totals : perBucket[row.bucket];
    if (target === undefined) continue;
    const counts: Record<string, number> = { keys: row.keys };
    for (const field of USAGE_COUNT_FIELDS) counts[field] = row[field];
    target[row.tier] = counts as unknown as TierCounts;
  }
  const first = range.buckets[0];
  const last = range.buckets.at(-1);
  return {
    granularity: range.granularity,
    timezone: zone,
    from: first === undefined ? '' : formatInstant(first.start, zone),
    to: last === undefined ? '' : formatInstant(last.end, zone),
    tiers,
    totals,
    intervals: range.buckets.map((bucket, n) => ({
      start: formatInstant(bucket.start, zone),
      end: formatInstant(bucket.end, zone),
      tiers: perBucket[n] ?? zeros(),
    })),
  };
}

export const OVERVIEW_CSV_HEADER = ['start', 'end', 'tier', ...USAGE_COUNT_FIELDS, 'keys'].join(',');

/** One row per interval and tier under `OVERVIEW_CSV_HEADER`, zeros included, CRLF line ends. */
export function overviewCsv(overview: UsageOverview): string {
  const rows = overview.intervals.flatMap((interval) =>
    overview.tiers.map((tier) => {
      const counts = interval.tiers[tier] ?? NO_TIER_USAGE;
      // Tier names are the config file's `^[a-z][a-z0-9_-]*$` or a stored key's: never a comma or quote.
      return [
        interval.start,
        interval.end,
        tier,
        ...USAGE_COUNT_FIELDS.map((f) => counts[f]),
        counts.keys,
      ].join(',');
    }),
  );
  return `${[OVERVIEW_CSV_HEADER, ...rows].join('\r\n')}\r\n`;
}
