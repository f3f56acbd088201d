/**
 * The billing export (docs/usage-history.md "Billing export"): one row per key and UTC day of a
 * month, as CSV, as CloudEvents for OpenMeter, or as Stripe meter events, each as JSON Lines. Ids
 * are made from the key and the day only, so exporting a month again gives the same ids and a
 * metering system that deduplicates on them counts each day once. Today's row is marked partial.
 */
import type { UsageCounts, UsageDay } from '../stores/usage.js';

/** The counts in the order the export writes them: units first, what a bill is made of. */
const EXPORT_COUNT_FIELDS = [
  'units',
  'requests',
  'served',
  'notModified',
  'rateLimited',
  'clientErrors',
] as const satisfies readonly (keyof UsageCounts)[];

export const EXPORT_FORMATS = ['csv', 'cloudevents', 'openmeter', 'stripe'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** What the export shows of a key: never its hash or anything secret. */
export interface ExportKey {
  readonly id: string;
  readonly name: string;
  readonly tier: string;
  /** The operator's customer reference of the key, where it has one. */
  readonly customerRef: string | null;
}

export interface ExportRow extends UsageCounts {
  /** The UTC day, YYYY-MM-DD. */
  readonly date: string;
  readonly keyId: string;
  readonly keyName: string;
  readonly tier: string;
  readonly customerRef: string | null;
  /** The day is today (UTC): more may still be counted. */
  readonly partial: boolean;
}

/** The default CloudEvents `type` and Stripe `event_name`: what a meter is set up to match. */
export const DEFAULT_EVENT_NAMES: Readonly<Record<'cloudevents' | 'stripe', string>> = {
  cloudevents: 'pricepoint.usage.daily',
  stripe: 'pricepoint_units',
};
/** The CloudEvents `source`: OpenMeter deduplicates on `source` and `id` together. */
export const EVENT_SOURCE = 'pricepoint';

const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * The span of `month` (`YYYY-MM`), or why it cannot be exported at `now`: a month that has not
 * begun has nothing to bill.
 * @example monthSpan('2026-11', Date.now()) // { from: Date.UTC(2026, 10, 1), to: Date.UTC(2026, 11, 1) }
 */
export function monthSpan(month: string, now: number): { from: number; to: number } | string {
  const match = /^(\d{4})-(\d{2})$/.exec(month);
  const year = Number(match?.[1]);
  const number = Number(match?.[2]);
  if (match === null || number < 1 || number > 12 || year < 1970) {
    return `"${month.slice(0, 20)}" is not a month written YYYY-MM, such as 2026-11`;
  }
  const from = Date.UTC(year, number - 1, 1);
  if (from > now) return `${month} has not begun yet (today is ${dateOf(now)} UTC)`;
  return { from, to: Date.UTC(year, number, 1) };
}

/** One row per key and day, in key id and date order; a key the store no longer has shows its id only. */
export function exportRows(
  days: readonly UsageDay[],
  keys: ReadonlyMap<string, ExportKey>,
  now: number,
): ExportRow[] {
  const today = dateOf(now);
  return days.map((day) => {
    const key = keys.get(day.keyId);
    const date = dateOf(day.dayStart);
    const counts = Object.fromEntries(EXPORT_COUNT_FIELDS.map((f) => [f, day[f]])) as unknown as UsageCounts;
    return {
      date,
      keyId: day.keyId,
      keyName: key?.name ?? '',
      tier: key?.tier ?? '',
      customerRef: key?.customerRef || null,
      ...counts,
      partial: date === today,
    };
  });
}

export const EXPORT_CSV_HEADER = [
  'date',
  'keyId',
  'keyName',
  'tier',
  'customerRef',
  ...EXPORT_COUNT_FIELDS,
  'partial',
].join(',');

/**
 * A text field for a spreadsheet: quoted where it must be, and a leading `= + - @` (or tab, CR)
 * made inert with a `'`, since key names may come from customers and a spreadsheet would run them.
 */
function spreadsheetField(value: string): string {
  const inert = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(inert) ? `"${inert.replaceAll('"', '""')}"` : inert;
}

export function exportCsv(rows: readonly ExportRow[]): string {
  const lines = rows.map((row) =>
    [
      row.date,
      row.keyId,
      spreadsheetField(row.keyName),
      spreadsheetField(row.tier),
      spreadsheetField(row.customerRef ?? ''),
      ...EXPORT_COUNT_FIELDS.map((f) => row[f]),
      row.partial,
    ].join(','),
  );
  return `${[EXPORT_CSV_HEADER, ...lines].join('\r\n')}\r\n`;
}

/** CloudEvents 1.0 in JSON, one per line, as OpenMeter ingests them (`subject`: the key id). */
export function exportCloudEvents(
  rows: readonly ExportRow[],
  type = DEFAULT_EVENT_NAMES.cloudevents,
): string {
  return jsonLines(
    rows.map((row) => ({
      specversion: '1.0',
      type,
      source: EVENT_SOURCE,
      id: `usage-${row.keyId}-${row.date}`,
      subject: row.keyId,
      time: `${row.date}T00:00:00Z`,
      datacontenttype: 'application/json',
      data: {
        date: row.date,
        keyName: row.keyName,
        tier: row.tier,
        customerRef: row.customerRef,
        ...Object.fromEntries(EXPORT_COUNT_FIELDS.map((f) => [f, row[f]])),
        partial: row.partial,
      },
    })),
  );
}

/**
 * Stripe meter events (`POST /v1/billing/meter_events`), one per line: the value is the day's units,
 * the customer the key's customer reference or else its id. `partial` is ours, not Stripe's: it is
 * left out when sending (docs/usage-history.md shows how).
 */
export function exportStripe(rows: readonly ExportRow[], eventName = DEFAULT_EVENT_NAMES.stripe): string {
  return jsonLines(
    rows.map((row) => ({
      event_name: eventName,
      identifier: `pricepoint-${row.keyId}-${row.date}`,
      timestamp: Date.parse(`${row.date}T00:00:00Z`) / 1000,
      payload: { stripe_customer_id: row.customerRef ?? row.keyId, value: String(row.units) },
      partial: row.partial,
    })),
  );
}

function jsonLines(values: readonly unknown[]): string {
  return values.map((value) => `${JSON.stringify(value)}\n`).join('');
}

/** The export of `rows` in `format` (`openmeter` is `cloudevents`). */
export function formatExport(rows: readonly ExportRow[], format: ExportFormat, eventName?: string): string {
  if (format === 'csv') return exportCsv(rows);
  if (format === 'stripe') return exportStripe(rows, eventName);
  return exportCloudEvents(rows, eventName);
}
