/**
 * The ECB's euro foreign exchange reference rates as published: the daily and 90-day XML files
 * (`gesmes:Envelope`, a `Cube` per day holding a `Cube` per currency) and the history CSV (`Date`
 * and a column per currency, named in its header, newest day first; `N/A` where a currency had no
 * rate, as for a retired one). Both read into rates per day, kept as the text the ECB wrote.
 */
import { parse as parseCsv } from 'csv-parse/sync';
import { XMLParser } from 'fast-xml-parser';
import { unzipSync } from 'fflate';

/** Date (`YYYY-MM-DD`) to currency to rate text; a currency without a rate that day is absent. */
export type RatesByDay = Map<string, Map<string, string>>;

export type EcbRead =
  | { readonly ok: true; readonly rates: RatesByDay; readonly currencies: ReadonlySet<string> }
  | { readonly ok: false; readonly reason: string };

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const CURRENCY = /^[A-Z]{3}$/;
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  removeNSPrefix: true,
  parseAttributeValue: false,
  parseTagValue: false,
  isArray: (name) => name === 'Cube',
});

type Node = Record<string, unknown>;

/** `N/A`, an empty field and a missing attribute all mean no rate. */
function rateText(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  return text === '' || text.toUpperCase() === 'N/A' ? undefined : text;
}

/**
 * @example readEcbXml(xml).ok // true
 */
export function readEcbXml(xml: string): EcbRead {
  let root: Node;
  try {
    root = parser.parse(xml, true) as Node;
  } catch (error) {
    return { ok: false, reason: `not well-formed XML: ${(error as Error).message.split('\n')[0]}` };
  }
  const envelope = root['Envelope'] as Node | undefined;
  if (envelope === undefined) return { ok: false, reason: 'not an ECB reference rates envelope' };
  const rates: RatesByDay = new Map();
  const currencies = new Set<string>();
  for (const outer of (envelope['Cube'] as Node[] | undefined) ?? []) {
    for (const day of (outer['Cube'] as Node[] | undefined) ?? []) {
      const date = day['time'];
      if (typeof date !== 'string' || !DATE.test(date))
        return { ok: false, reason: `a day is dated "${date}"` };
      const byCurrency = new Map<string, string>();
      for (const cube of (day['Cube'] as Node[] | undefined) ?? []) {
        const currency = cube['currency'];
        if (typeof currency !== 'string' || !CURRENCY.test(currency)) continue;
        currencies.add(currency);
        const rate = rateText(cube['rate']);
        if (rate !== undefined) byCurrency.set(currency, rate);
      }
      rates.set(date, byCurrency);
    }
  }
  return { ok: true, rates, currencies };
}

/**
 * The history CSV, or the ZIP file the ECB publishes it in (`eurofxref-hist.zip`).
 * @example readEcbCsv(bytes, 64 << 20).ok // true
 */
export function readEcbCsv(body: Uint8Array, maxBytes: number): EcbRead {
  let text: string;
  if (body[0] === 0x50 && body[1] === 0x4b && body[2] === 0x03 && body[3] === 0x04) {
    let files: Record<string, Uint8Array>;
    try {
      files = unzipSync(body, {
        filter: (file) => file.name.toLowerCase().endsWith('.csv') && file.originalSize <= maxBytes,
      });
    } catch (error) {
      return { ok: false, reason: `unreadable ZIP file: ${(error as Error).message}` };
    }
    const csv = Object.values(files)[0];
    if (csv === undefined)
      return { ok: false, reason: `the ZIP file holds no CSV file of at most ${maxBytes} bytes` };
    text = Buffer.from(csv).toString('utf8');
  } else {
    text = Buffer.from(body).toString('utf8');
  }
  let rows: Record<string, string>[];
  let header: string[] = [];
  const named = (names: string[]) => {
    header = names;
    return names;
  };
  try {
    rows = parseCsv(text, { columns: named, trim: true, skip_empty_lines: true, bom: true });
  } catch (error) {
    return { ok: false, reason: `unreadable CSV: ${(error as Error).message}` };
  }
  if (!header.includes('Date')) return { ok: false, reason: 'the CSV has no Date column' };
  const currencies = new Set(header.filter((name) => CURRENCY.test(name)));
  const rates: RatesByDay = new Map();
  for (const row of rows) {
    const date = row['Date'] ?? '';
    if (!DATE.test(date)) return { ok: false, reason: `a row is dated "${date}"` };
    const byCurrency = new Map<string, string>();
    for (const currency of currencies) {
      const rate = rateText(row[currency]);
      if (rate !== undefined) byCurrency.set(currency, rate);
    }
    rates.set(date, byCurrency);
  }
  return { ok: true, rates, currencies };
}
