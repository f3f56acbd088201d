/**
 * The day answer as JSON and CSV. Written by hand rather than through a generic serialiser so that
 * each price goes out exactly as it was ingested: the stored decimal text becomes the JSON number
 * (`41.27` never turns into `41.270000000000003`).
 */
import type { DayAnswer } from '../../services/price-service.js';

/**
 * The `series` array of a day answer as JSON: everything but `generatedAt`, so it also identifies
 * the answer for caching (two answers with the same series text are the same answer).
 */
export function renderSeriesDaysJson(series: DayAnswer['series']): string {
  return `[${series.map(seriesDayJson).join(',')}]`;
}

type SeriesDay = DayAnswer['series'][number];

// The price service hands out the same day objects until their series changes, so each is
// written once: by identity, and dropped with the object.
const jsonOfDay = new WeakMap<SeriesDay, string>();
const csvOfDay = new WeakMap<SeriesDay, string>();

function seriesDayJson(s: SeriesDay): string {
  let json = jsonOfDay.get(s);
  if (json === undefined) {
    json = writeSeriesDayJson(s);
    jsonOfDay.set(s, json);
  }
  return json;
}

function writeSeriesDayJson(s: SeriesDay): string {
  const prices = s.prices.map((p) => `{"start":"${p.start}","end":"${p.end}","price":${p.price}}`).join(',');
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
}

/** @example renderDayJson(answer) // '{"generatedAt":"...","series":[{"symbol":"NO1",...,"prices":[...]}]}' */
export function renderDayJson(answer: DayAnswer, seriesJson = renderSeriesDaysJson(answer.series)): string {
  return `{"generatedAt":"${answer.generatedAt}","series":${seriesJson}}`;
}

/** RFC 4180 quoting, only where a field needs it. */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

export const CSV_HEADER = 'symbol,date,start,end,price,currency,unit';

/** One header row, then one row per interval, CRLF line ends (RFC 4180; spreadsheets like them). */
export function renderDayCsv(answer: DayAnswer): string {
  return `${CSV_HEADER}\r\n${answer.series.map(seriesDayCsv).join('')}`;
}

function seriesDayCsv(s: SeriesDay): string {
  let rows = csvOfDay.get(s);
  if (rows === undefined) {
    const tail = `${csvField(s.currency)},${csvField(s.unit)}`;
    const head = `${csvField(s.symbol)},${s.date}`;
    rows = s.prices.map((p) => `${head},${p.start},${p.end},${p.price},${tail}\r\n`).join('');
    csvOfDay.set(s, rows);
  }
  return rows;
}
