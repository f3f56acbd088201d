/**
 * The day answer as JSON and CSV. Written by hand rather than through a generic serialiser so that
 * each price goes out exactly as it was ingested: the stored decimal text becomes the JSON number
 * (`41.27` never turns into `41.270000000000003`).
 */
import type { DayAnswer } from '../../services/price-service.js';

/** @example renderDayJson(answer) // '{"generatedAt":"...","series":[{"symbol":"NO1",...,"prices":[...]}]}' */
export function renderDayJson(answer: DayAnswer): string {
  const series = answer.series.map((s) => {
    const prices = s.prices
      .map((p) => `{"start":"${p.start}","end":"${p.end}","price":${p.price}}`)
      .join(',');
    const meta = JSON.stringify({
      symbol: s.symbol,
      name: s.name,
      kind: s.kind,
      currency: s.currency,
      unit: s.unit,
      timezone: s.timezone,
      resolution: s.resolution,
      date: s.date,
    });
    return `${meta.slice(0, -1)},"prices":[${prices}]}`;
  });
  return `{"generatedAt":"${answer.generatedAt}","series":[${series.join(',')}]}`;
}

/** RFC 4180 quoting, only where a field needs it. */
function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

export const CSV_HEADER = 'symbol,date,start,end,price,currency,unit';

/** One header row, then one row per interval, CRLF line ends (RFC 4180; spreadsheets like them). */
export function renderDayCsv(answer: DayAnswer): string {
  const lines = [CSV_HEADER];
  for (const s of answer.series) {
    const tail = `${csvField(s.currency)},${csvField(s.unit)}`;
    const head = `${csvField(s.symbol)},${s.date}`;
    for (const p of s.prices) lines.push(`${head},${p.start},${p.end},${p.price},${tail}`);
  }
  return `${lines.join('\r\n')}\r\n`;
}
