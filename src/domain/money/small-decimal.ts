/**
 * The exact decimal arithmetic of ./exact.ts and ./tariff-pricer.ts on doubles, where that is
 * exact: prices have a few significant digits, so their digits, sums and products are integers
 * below 2^53, which doubles hold exactly, and a double operation on them is several times cheaper
 * than on BigInt and its texts. Every function answers `undefined` (or NaN) where a value would
 * leave that range, and the caller then does the same on BigInt; both give the same texts
 * (property tests in exact.test.ts and test/services/tariff-pricer.test.ts).
 */

/** A plain decimal text as `n × 10^-scale`, `n` a safe integer. */
export interface SmallDecimal {
  readonly n: number;
  readonly scale: number;
}

/** Powers of ten that doubles hold exactly. */
const POWERS = Array.from({ length: 23 }, (_, i) => 10 ** i);

/** `n × 10^k` when it stays a safe integer, else NaN. */
export function shifted(n: number, k: number): number {
  const power = POWERS[k];
  if (power === undefined) return Number.NaN;
  const out = n * power;
  return Number.isSafeInteger(out) ? out : Number.NaN;
}

/**
 * A plain decimal text (`41.27`, `-0.5`, `0`) with at most 15 digits, or `undefined` for anything
 * else, including texts that are no plain decimal: those are the BigInt path's to refuse.
 */
export function smallDecimal(text: string): SmallDecimal | undefined {
  const length = text.length;
  let i = text.charCodeAt(0) === 45 ? 1 : 0;
  const first = i;
  let n = 0;
  let digits = 0;
  let scale = -1;
  for (; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      // One point, after at least one digit, before at least one.
      if (scale >= 0 || i === first || i === length - 1) return undefined;
      scale = 0;
      continue;
    }
    const d = c - 48;
    if (d < 0 || d > 9) return undefined;
    // No leading zero before another digit of the whole part.
    if (scale < 0 && i === first + 1 && text.charCodeAt(first) === 48) return undefined;
    n = n * 10 + d;
    if (++digits > 15) return undefined;
    if (scale >= 0) scale++;
  }
  if (digits === 0) return undefined;
  return { n: first === 1 ? -n : n, scale: scale < 0 ? 0 : scale };
}

/** `n × 10^-scale` rounded half away from zero to at most `decimals` fraction digits. */
export function roundedSmall(n: number, scale: number, decimals: number): SmallDecimal {
  if (scale <= decimals) return { n, scale };
  const divisor = POWERS[scale - decimals];
  const magnitude = n < 0 ? -n : n;
  if (divisor === undefined || divisor > magnitude * 2) {
    // Below half of the last digit kept (or far below it): 0.
    return { n: 0, scale: decimals };
  }
  const rest = magnitude % divisor;
  let quotient = (magnitude - rest) / divisor;
  if (rest * 2 >= divisor) quotient += 1;
  return { n: n < 0 ? -quotient : quotient, scale: decimals };
}

/** `n × 10^-scale` as ./exact.ts writes it: no trailing fraction zeros, no minus on zero. */
export function smallText(n: number, scale: number): string {
  const negative = n < 0;
  let text = String(negative ? -n : n);
  if (scale > 0) {
    if (text.length <= scale) text = text.padStart(scale + 1, '0');
    const point = text.length - scale;
    let end = text.length;
    while (end > point && text.charCodeAt(end - 1) === 48) end--;
    text = end === point ? text.slice(0, point) : `${text.slice(0, point)}.${text.slice(point, end)}`;
  } else if (scale < 0 && text !== '0') {
    text += '0'.repeat(-scale);
  }
  return negative && text !== '0' ? `-${text}` : text;
}
