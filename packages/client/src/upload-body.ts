/**
 * The body of `uploadPrices`: a JSON array written one point per line. It is a standard JSON
 * document, and each line holds exactly one point, so a server that reads JSON Lines takes it as
 * well as one that parses the whole array (docs/operating.md "Importing prices").
 */
import type { PriceInput } from './types.js';

/** A JSON number as RFC 8259 writes it: what a decimal-string price must look like. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const TEXT_FIELDS = ['symbol', 'date', 'start', 'end', 'currency', 'unit'] as const;

function priceText(price: unknown, index: number): string {
  if (typeof price === 'number' && Number.isFinite(price)) return JSON.stringify(price);
  if (typeof price === 'string' && JSON_NUMBER.test(price)) return price;
  throw new TypeError(
    `uploadPrices: points[${index}].price must be a finite number or a decimal string such as "41.270"`,
  );
}

/** One point as one line: its known fields, with `price` as the exact number text. */
function pointLine(point: PriceInput, index: number): string {
  if (typeof point !== 'object' || point === null) {
    throw new TypeError(`uploadPrices: points[${index}] must be an object`);
  }
  const fields: Record<string, string> = {};
  for (const name of TEXT_FIELDS) {
    if (point[name] !== undefined) fields[name] = point[name];
  }
  const head = JSON.stringify(fields);
  const price = `"price":${priceText(point.price, index)}`;
  return head === '{}' ? `{${price}}` : `${head.slice(0, -1)},${price}}`;
}

/**
 * The points as a JSON array, one point per line.
 *
 * @example
 * pricesBody([{ start: '2026-11-22T00:00:00+01:00', price: '41.270' }]);
 * // '[\n{"start":"2026-11-22T00:00:00+01:00","price":41.270}\n]\n'
 */
export function pricesBody(points: readonly PriceInput[]): string {
  if (!Array.isArray(points)) throw new TypeError('uploadPrices: points must be an array');
  return `[\n${points.map(pointLine).join(',\n')}\n]\n`;
}
