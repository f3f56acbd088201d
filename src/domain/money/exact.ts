/**
 * Exact decimal arithmetic on price texts (docs/data-model.md, "Converted prices"): a price in
 * another currency or per another energy unit is computed on integers (BigInt), never on doubles,
 * so one price at one rate is the same text on every engine and every run (on doubles only where
 * their integers are exact: ./small-decimal.ts).
 */
import { roundedSmall, type SmallDecimal, smallDecimal, smallText } from './small-decimal.js';

/**
 * Decimals a currency-converted price keeps, in the unit the series is stored in (per MWh for
 * EUR/MWh series). The unit conversion after it only moves the decimal point, so per kWh such a
 * price has up to 9 decimals and per Wh up to 12, all exact.
 */
export const CONVERTED_DECIMALS = 6;

/** Watt-hours in each energy unit a price can be asked per (`unit=`). */
export const ENERGY_UNITS = { Wh: 0, kWh: 3, MWh: 6 } as const;
export type EnergyUnit = keyof typeof ENERGY_UNITS;

/** Powers of ten of Wh in `unit`, or `undefined` when `unit` is no energy unit (troy_oz, EUR). */
export function energyExponent(unit: string): number | undefined {
  return Object.hasOwn(ENERGY_UNITS, unit) ? ENERGY_UNITS[unit as EnergyUnit] : undefined;
}

/** A plain decimal text as `digits × 10^-scale`. */
export interface ExactDecimal {
  readonly digits: bigint;
  readonly scale: number;
  /** The same as a double, when its digits fit (./small-decimal.ts). */
  readonly small?: SmallDecimal | undefined;
}

const PLAIN = /^-?(?:0|[1-9]\d*)(?:\.\d+)?$/;

function parse(text: string): ExactDecimal {
  if (!PLAIN.test(text)) throw new RangeError(`not a plain decimal: ${text}`);
  const negative = text.startsWith('-');
  const unsigned = negative ? text.slice(1) : text;
  const [whole = '0', fraction = ''] = unsigned.split('.');
  const digits = BigInt(whole + fraction);
  return { digits: negative ? -digits : digits, scale: fraction.length };
}

/** `digits × 10^-scale` as a plain decimal text, without trailing fraction zeros or a minus on zero. */
function format({ digits, scale }: ExactDecimal): string {
  const negative = digits < 0n;
  let text = (negative ? -digits : digits).toString();
  if (scale > 0) {
    text = text.padStart(scale + 1, '0');
    const fraction = text.slice(-scale).replace(/0+$/, '');
    text = text.slice(0, -scale) + (fraction === '' ? '' : `.${fraction}`);
  } else if (scale < 0 && text !== '0') {
    text += '0'.repeat(-scale);
  }
  return negative && text !== '0' ? `-${text}` : text;
}

/** `value` rounded half away from zero to `decimals` fraction digits. */
function roundTo(value: ExactDecimal, decimals: number): ExactDecimal {
  if (value.scale <= decimals) return value;
  const divisor = 10n ** BigInt(value.scale - decimals);
  const magnitude = value.digits < 0n ? -value.digits : value.digits;
  let quotient = magnitude / divisor;
  if ((magnitude % divisor) * 2n >= divisor) quotient += 1n;
  return { digits: value.digits < 0n ? -quotient : quotient, scale: decimals };
}

/**
 * `price × rate`, rounded half away from zero to `decimals` (default `CONVERTED_DECIMALS`).
 * @example multiplyRounded('41.27', '11.5847') // '478.100569'
 * @example multiplyRounded('-0.015', '11.5847') // '-0.173771' (-0.1737705 rounds away from zero)
 */
export function multiplyRounded(price: string, rate: string, decimals = CONVERTED_DECIMALS): string {
  const a = parse(price);
  const b = parse(rate);
  return format(roundTo({ digits: a.digits * b.digits, scale: a.scale + b.scale }, decimals));
}

/**
 * A plain decimal text as `digits × 10^-scale`, to multiply many prices by (`multiplyRoundedShifted`).
 * @example exactDecimal('11.5847') // { digits: 115847n, scale: 4 }
 */
export function exactDecimal(text: string): ExactDecimal {
  return { ...parse(text), small: smallDecimal(text) };
}

/**
 * `price × rate` rounded half away from zero to `decimals`, then `× 10^places`, in one step: the text
 * `shiftDecimal(multiplyRounded(price, rate, decimals), places)` writes, for a rate read once.
 * @example multiplyRoundedShifted('41.27', exactDecimal('11.5847'), 6, -3) // '0.478100569'
 */
export function multiplyRoundedShifted(
  price: string,
  rate: ExactDecimal,
  decimals: number,
  places: number,
): string {
  const small = rate.small && smallDecimal(price);
  if (small !== undefined && rate.small !== undefined) {
    const product = small.n * rate.small.n;
    if (Number.isSafeInteger(product)) {
      const rounded = roundedSmall(product, small.scale + rate.small.scale, decimals);
      return smallText(rounded.n, rounded.scale - places);
    }
  }
  const a = parse(price);
  const rounded = roundTo({ digits: a.digits * rate.digits, scale: a.scale + rate.scale }, decimals);
  return format({ digits: rounded.digits, scale: rounded.scale - places });
}

/**
 * `price × 10^places`: exact, only the decimal point moves.
 * @example shiftDecimal('41.27', -3) // '0.04127' (EUR/MWh to EUR/kWh)
 */
export function shiftDecimal(price: string, places: number): string {
  const { digits, scale } = parse(price);
  return format({ digits, scale: scale - places });
}

/**
 * A price per `from` as a price per `to`, both energy units: per kWh is a thousandth of per MWh.
 * @example perUnit('41.27', 'MWh', 'kWh') // '0.04127'
 */
export function perUnit(price: string, from: EnergyUnit, to: EnergyUnit): string {
  return shiftDecimal(price, ENERGY_UNITS[to] - ENERGY_UNITS[from]);
}
