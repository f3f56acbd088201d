/**
 * Exact sums and comparisons of plain decimal texts, for tariffs and ranking (./tariff.ts,
 * ../../services/ranking.ts): on integers (BigInt), never on doubles, like ./exact.ts.
 */

const PLAIN = /^-?(?:0|[1-9]\d*)(?:\.\d+)?$/;

/** Whether `text` is a plain decimal as prices are written: `41.27`, `-0.5`, `0`; no exponent, no `+`. */
export function isPlainDecimal(text: string): boolean {
  return PLAIN.test(text);
}

/** `text` as `digits × 10^-scale` with exactly `scale` fraction digits (`scale` at least its own). */
export function scaled(text: string, scale: number): bigint {
  if (!PLAIN.test(text)) throw new RangeError(`not a plain decimal: ${text}`);
  const negative = text.startsWith('-');
  const [whole = '0', fraction = ''] = (negative ? text.slice(1) : text).split('.');
  if (fraction.length > scale) throw new RangeError(`${text} has more than ${scale} decimals`);
  const digits = BigInt(whole + fraction.padEnd(scale, '0'));
  return negative ? -digits : digits;
}

/** Fraction digits of a plain decimal text. */
export function decimalsOf(text: string): number {
  const point = text.indexOf('.');
  return point < 0 ? 0 : text.length - point - 1;
}

/** `digits × 10^-scale` as a plain decimal text, without trailing fraction zeros or a minus on zero. */
export function unscaled(digits: bigint, scale: number): string {
  const negative = digits < 0n;
  let text = (negative ? -digits : digits).toString();
  if (scale > 0) {
    text = text.padStart(scale + 1, '0');
    const fraction = text.slice(-scale).replace(/0+$/, '');
    text = text.slice(0, -scale) + (fraction === '' ? '' : `.${fraction}`);
  }
  return negative && text !== '0' ? `-${text}` : text;
}

/**
 * `a + b`, exactly.
 * @example addDecimals('0.478100569', '0.3640') // '0.842100569'
 */
export function addDecimals(a: string, b: string): string {
  const scale = Math.max(decimalsOf(a), decimalsOf(b));
  return unscaled(scaled(a, scale) + scaled(b, scale), scale);
}

/**
 * Negative, zero or positive as `a` is less than, equal to or greater than `b`, exactly.
 * @example compareDecimals('0.1', '0.10') // 0
 */
export function compareDecimals(a: string, b: string): number {
  const scale = Math.max(decimalsOf(a), decimalsOf(b));
  const difference = scaled(a, scale) - scaled(b, scale);
  return difference < 0n ? -1 : difference > 0n ? 1 : 0;
}
