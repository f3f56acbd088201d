/**
 * Moving a decimal point, for upstreams that quote in a sub-unit: pence per kWh become pounds per
 * kWh, cents per kWh become euros per MWh. Done on the digits, so nothing is rounded.
 */

const PLAIN = /^(-?)(\d+)(?:\.(\d+))?$/;

/**
 * `text` times 10^`places`, written as a plain decimal without redundant zeros; `undefined` for text
 * that is not a plain decimal.
 * @example shiftDecimal('24.15', -2) // '0.2415'; shiftDecimal('6.694', 1) // '66.94'
 */
export function shiftDecimal(text: string, places: number): string | undefined {
  const match = PLAIN.exec(text);
  if (match === null) return undefined;
  const [, sign = '', whole = '', fraction = ''] = match;
  if (places === 0) return text;
  let digits = whole + fraction;
  let point = whole.length + places;
  if (point <= 0) {
    digits = '0'.repeat(1 - point) + digits;
    point = 1;
  } else if (point > digits.length) {
    digits += '0'.repeat(point - digits.length);
  }
  const head = digits.slice(0, point).replace(/^0+(?=\d)/, '');
  const tail = digits.slice(point).replace(/0+$/, '');
  const shifted = tail === '' ? head : `${head}.${tail}`;
  return /^0(\.0*)?$/.test(shifted) ? '0' : `${sign}${shifted}`;
}
