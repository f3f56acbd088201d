/**
 * OMIE's two day files of day-ahead marginal prices, read into prices by position in the market day
 * (position 0 starts at 00:00 Spanish peninsular time; positions run on in real time, so a DST day
 * has 23 or 25 hours, 92 or 100 quarter hours).
 *
 * - The report `INT_PBC_EV_H_1_DD_MM_YYYY_DD_MM_YYYY.TXT` (ISO-8859-1): a title line naming the
 *   market date, a line of period labels (`1;2;...;25` while periods were hours, `H1Q1;...;H25Q4`
 *   since quarter hours), then one row per quantity, its label stating the unit:
 *   `Precio marginal en el sistema español (EUR/MWh);   105,10;...`. Decimal comma.
 * - `marginalpdbc_YYYYMMDD.1`: `MARGINALPDBC;`, then `year;month;day;period;PT;ES;` per period,
 *   then `*`. Decimal point. The unit, EUR/MWh, is stated by OMIE's file documentation only.
 */
import { checkPrice } from '../../domain/prices/decimal.js';
import type { Resolution } from '../../domain/time/days.js';
import { shiftDecimal } from '../decimal-shift.js';

export type OmieZone = 'ES' | 'PT';

/** One day file read: prices by position, or why it cannot be read. */
export type OmieDay =
  | { readonly ok: true; readonly resolution: Resolution; readonly prices: ReadonlyMap<number, string> }
  | { readonly ok: false; readonly reason: string };

/** Quarter-hour periods began with the market day of 1 October 2025 (the SDAC 15-minute switch). */
export const QUARTER_HOURS_FROM = '2025-10-01';

/** Row labels of the marginal price, by zone; the report before mid-2009 had one Spanish price only. */
const REPORT_ROWS: Record<OmieZone, readonly string[]> = {
  ES: ['Precio marginal en el sistema espa', 'Precio marginal ('],
  PT: ['Precio marginal en el sistema portugu'],
};
/** Units the report's labels state, as the power of ten to EUR/MWh: cents per kWh are 10 times less. */
const REPORT_UNITS: Record<string, number> = { 'eur/mwh': 0, 'cent/kwh': 1 };

/**
 * The report for market day `date` (`YYYY-MM-DD`), holding `intervals(resolution)` periods.
 * @example readReport(text, '2025-10-26', 'ES', (r) => (r === 'PT15M' ? 100 : 25))
 */
export function readReport(
  text: string,
  date: string,
  zone: OmieZone,
  intervals: (resolution: Resolution) => number,
): OmieDay {
  const lines = text.split(/\r?\n/);
  const dates = (lines[0] ?? '').match(/\d{2}\/\d{2}\/\d{4}/g);
  // The title names the issue date first and the market date last.
  const market = dates?.at(-1);
  if (market === undefined) return { ok: false, reason: 'the first line names no market date' };
  const [dd, mm, yyyy] = market.split('/');
  if (`${yyyy}-${mm}-${dd}` !== date) return { ok: false, reason: `the file is for ${market}, not ${date}` };
  const header = lines.find((line) => /^\s*;\s*(\d+|H\d+Q\d)\s*;/.test(line));
  if (header === undefined) return { ok: false, reason: 'no line of period labels' };
  const labels = header.split(';').map((label) => label.trim());
  const row = lines
    .map((line) => line.split(';'))
    .find((fields) => REPORT_ROWS[zone].some((prefix) => (fields[0] ?? '').trim().startsWith(prefix)));
  if (row === undefined) return { ok: false, reason: `no marginal price row for ${zone}` };
  const label = (row[0] ?? '').trim();
  const unit = /\(([^)]*)\)\s*$/.exec(label)?.[1] ?? '';
  const places = REPORT_UNITS[unit.toLowerCase()];
  if (places === undefined)
    return { ok: false, reason: `"${label}": unit "${unit}" is not EUR/MWh or Cent/kWh` };
  let resolution: Resolution | undefined;
  const prices = new Map<number, string>();
  for (let column = 1; column < labels.length; column++) {
    const period = labels[column] as string;
    if (period === '') continue;
    const hourly = /^\d+$/.test(period);
    const quarter = /^H(\d+)Q([1-4])$/.exec(period);
    if (!hourly && quarter === null) return { ok: false, reason: `period label "${period}"` };
    const kind: Resolution = hourly ? 'PT1H' : 'PT15M';
    if (resolution !== undefined && kind !== resolution)
      return { ok: false, reason: 'period labels of hours and quarter hours' };
    resolution = kind;
    const position =
      quarter === null ? Number(period) - 1 : (Number(quarter[1]) - 1) * 4 + Number(quarter[2]) - 1;
    if (position < 0 || position >= intervals(kind)) {
      return { ok: false, reason: `period ${period} on a day of ${intervals(kind)} periods` };
    }
    const value = (row[column] ?? '').trim();
    if (value === '') continue; // no price: missing, never 0
    if (!/^-?\d+(,\d+)?$/.test(value))
      return { ok: false, reason: `period ${period}: price "${value}" is not a number` };
    const price = euroPerMwh(value.replace(',', '.'), places);
    if (!price.ok) return { ok: false, reason: `period ${period}: ${price.reason}` };
    prices.set(position, price.text);
  }
  if (resolution === undefined) return { ok: false, reason: 'the line of period labels is empty' };
  return { ok: true, resolution, prices };
}

/**
 * The `marginalpdbc` file for market day `date`. Its periods are hours before 1 October 2025 and
 * quarter hours from then on; the file does not say which.
 */
export function readMarginalPdbc(
  text: string,
  date: string,
  zone: OmieZone,
  intervals: (resolution: Resolution) => number,
): OmieDay {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (!(lines[0] ?? '').startsWith('MARGINALPDBC'))
    return { ok: false, reason: 'it does not begin with MARGINALPDBC;' };
  if (lines.at(-1) !== '*') return { ok: false, reason: 'it ends before its closing "*" line (cut short)' };
  const resolution: Resolution = date >= QUARTER_HOURS_FROM ? 'PT15M' : 'PT1H';
  const column = zone === 'PT' ? 4 : 5;
  const prices = new Map<number, string>();
  const seen = new Set<number>();
  for (const line of lines.slice(1, -1)) {
    const fields = line.split(';').map((field) => field.trim());
    const [y, m, d, p] = fields;
    if (fields.length < 6 || !/^\d+$/.test(p ?? '')) return { ok: false, reason: `line "${line}"` };
    const day = `${y}-${(m ?? '').padStart(2, '0')}-${(d ?? '').padStart(2, '0')}`;
    if (day !== date) return { ok: false, reason: `a line for ${day}, not ${date}` };
    const position = Number(p) - 1;
    if (position < 0 || position >= intervals(resolution)) {
      return {
        ok: false,
        reason: `period ${p} on a day of ${intervals(resolution)} periods of ${resolution}`,
      };
    }
    if (seen.has(position)) return { ok: false, reason: `period ${p} is there twice` };
    seen.add(position);
    const value = fields[column] ?? '';
    if (value === '') continue; // no price: missing, never 0
    const price = euroPerMwh(value.replace(',', '.'), 0);
    if (!price.ok) return { ok: false, reason: `period ${p}: ${price.reason}` };
    prices.set(position, price.text);
  }
  return { ok: true, resolution, prices };
}

function euroPerMwh(
  text: string,
  places: number,
): { ok: true; text: string } | { ok: false; reason: string } {
  const checked = checkPrice(text);
  if (!checked.ok) return checked;
  const shifted = shiftDecimal(checked.text, places);
  return shifted === undefined ? { ok: false, reason: `price "${text}"` } : checkPrice(shifted);
}
