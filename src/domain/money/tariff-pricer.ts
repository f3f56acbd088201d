/**
 * The arithmetic of ./tariff.ts for many intervals at once (docs/tariffs.md): what depends only on
 * the local day (the versions in force, the fee rules of its weekday and month) is worked out once
 * per day, each fee once per fixed amount and rule, and each interval then parses its spot price
 * once and adds and multiplies integers (on doubles where they stay exact, ./small-decimal.ts,
 * else BigInt), writing two texts. The texts are the ones the
 * rules of ./tariff.ts define, exactly: every part is written without trailing fraction zeros, and
 * a fee that is only the fixed amount keeps the amount's text as configured.
 */
import { offsetMinutes } from '../time/zone.js';
import { shiftDecimal } from './exact.js';
import { roundedSmall, type SmallDecimal, shifted, smallDecimal, smallText } from './small-decimal.js';
import { addDecimals, decimalsOf, scaled, unscaled } from './tariff-decimal.js';
import type { FeeRule, Tariff, TariffedPrice, Versioned } from './tariff-types.js';

/** A decimal as `digits × 10^-scale`. */
interface Scaled {
  readonly digits: bigint;
  readonly scale: number;
}

/** A fee as answered (`text`) and as computed with. */
interface Fee extends Scaled {
  readonly text: string;
  readonly small: SmallDecimal | undefined;
}

/** What a local day's intervals are priced by; `null` where a part has no version in force. */
interface DayTerms {
  readonly fixed: (Versioned & { readonly amount: string }) | undefined;
  /** The rules of the fee version in force that hold on this weekday and month, in order. */
  readonly rules: readonly FeeRule[];
  /** VAT as a factor (25% is 0.25), or `undefined` without VAT. */
  readonly vat: (Scaled & { readonly small: SmallDecimal | undefined }) | undefined;
}

const DAY_MS = 86_400_000;
const WEEKDAY_OF_DAY_ZERO = 4; // 1970-01-01 was a Thursday (`getUTCDay` 4)
const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
const POWERS = Array.from({ length: 40 }, (_, i) => 10n ** BigInt(i));
const pow10 = (n: number): bigint => POWERS[n] ?? 10n ** BigInt(n);
const NO_FEE: Fee = { text: '0', digits: 0n, scale: 0, small: { n: 0, scale: 0 } };

function parsed(text: string): Scaled {
  const scale = decimalsOf(text);
  return { digits: scaled(text, scale), scale };
}

function withSmall(text: string): Scaled & { readonly small: SmallDecimal | undefined } {
  return { ...parsed(text), small: smallDecimal(text) };
}

/**
 * The parts on doubles (./small-decimal.ts) when every value stays a safe integer, else `undefined`
 * (the caller then computes them on BigInt).
 */
function smallParts(
  spot: string,
  fee: Fee,
  vat: DayTerms['vat'],
  vatDecimals: number,
): { vat: string; total: string } | undefined {
  const price = smallDecimal(spot);
  if (price === undefined || fee.small === undefined || (vat !== undefined && vat.small === undefined)) {
    return undefined;
  }
  const scale = Math.max(price.scale, fee.small.scale);
  const net = shifted(price.n, scale - price.scale) + shifted(fee.small.n, scale - fee.small.scale);
  if (!Number.isSafeInteger(net)) return undefined;
  let tax: SmallDecimal = { n: 0, scale: 0 };
  if (vat?.small !== undefined) {
    const product = net * vat.small.n;
    if (!Number.isSafeInteger(product)) return undefined;
    tax = roundedSmall(product, scale + vat.small.scale, vatDecimals);
  }
  const totalScale = Math.max(scale, tax.scale);
  const total = shifted(net, totalScale - scale) + shifted(tax.n, totalScale - tax.scale);
  if (!Number.isSafeInteger(total)) return undefined;
  return { vat: smallText(tax.n, tax.scale), total: smallText(total, totalScale) };
}

/** `value` rounded half away from zero to at most `decimals` fraction digits. */
function roundTo(value: Scaled, decimals: number): Scaled {
  if (value.scale <= decimals) return value;
  const divisor = pow10(value.scale - decimals);
  const magnitude = value.digits < 0n ? -value.digits : value.digits;
  let quotient = magnitude / divisor;
  if ((magnitude % divisor) * 2n >= divisor) quotient += 1n;
  return { digits: value.digits < 0n ? -quotient : quotient, scale: decimals };
}

/** `a + b` at the larger scale. */
function add(a: Scaled, b: Scaled): Scaled {
  const scale = Math.max(a.scale, b.scale);
  return { digits: a.digits * pow10(scale - a.scale) + b.digits * pow10(scale - b.scale), scale };
}

/** The newest version in force on `date`, or `undefined` when every version starts later. */
function inForce<T extends Versioned>(versions: readonly T[], date: string): T | undefined {
  let found: T | undefined;
  for (const v of versions) if (v.from <= date && (found === undefined || v.from > found.from)) found = v;
  return found;
}

/**
 * The parts of each interval of a series in `zone` under `tariff`, as `tariffedPrice` defines them:
 * call it with each interval's start (epoch ms) and spot price, in any order.
 * @example const price = tariffPricer(tariff, 'Europe/Oslo'); price(Date.parse('2026-11-24T07:00:00+01:00'), '0.478100569')
 */
export function tariffPricer(
  tariff: Tariff,
  zone: string,
  vatDecimals: number,
): (epochMs: number, spot: string) => TariffedPrice | undefined {
  const local = tariff.timezone ?? zone;
  const days = new Map<number, DayTerms | null>();
  const fees = new Map<object | undefined, Map<FeeRule | undefined, Fee>>();

  function termsOf(day: number): DayTerms | null {
    const wall = new Date(day * DAY_MS);
    const date = wall.toISOString().slice(0, 10);
    const weekday = WEEKDAYS[(((day + WEEKDAY_OF_DAY_ZERO) % 7) + 7) % 7] as (typeof WEEKDAYS)[number];
    const month = wall.getUTCMonth() + 1;
    const fixed = inForce(tariff.fixed, date);
    const version = inForce(tariff.fees, date);
    const vat = inForce(tariff.vat, date);
    if (
      (tariff.fixed.length > 0 && fixed === undefined) ||
      (tariff.fees.length > 0 && version === undefined) ||
      (tariff.vat.length > 0 && vat === undefined)
    ) {
      return null;
    }
    return {
      fixed,
      rules: (version?.rules ?? []).filter(
        (r) =>
          (r.weekdays === undefined || r.weekdays.includes(weekday)) &&
          (r.months === undefined || r.months.includes(month)),
      ),
      vat: vat === undefined ? undefined : withSmall(shiftDecimal(vat.percent, -2)),
    };
  }

  /** The fee of the fixed amount `fixed` and the rule `rule`, made once. */
  function feeOf(fixed: DayTerms['fixed'], rule: FeeRule | undefined): Fee {
    let byRule = fees.get(fixed);
    if (byRule === undefined) {
      byRule = new Map();
      fees.set(fixed, byRule);
    }
    let fee = byRule.get(rule);
    if (fee === undefined) {
      const base = fixed === undefined ? '0' : fixed.amount;
      const text = rule === undefined ? base : addDecimals(base, rule.amount);
      fee = text === '0' ? NO_FEE : { text, ...withSmall(text) };
      byRule.set(rule, fee);
    }
    return fee;
  }

  return (epochMs, spot) => {
    const wall = epochMs + offsetMinutes(epochMs, local) * 60_000;
    const day = Math.floor(wall / DAY_MS);
    let terms = days.get(day);
    if (terms === undefined) {
      terms = termsOf(day);
      days.set(day, terms);
    }
    if (terms === null) return undefined;
    const minute = Math.floor((wall - day * DAY_MS) / 60_000);
    const rule = terms.rules.find((r) => {
      if (r.minutes === undefined) return true;
      const [from, to] = r.minutes;
      return from <= to ? from <= minute && minute < to : minute >= from || minute < to;
    });
    const fee = feeOf(terms.fixed, rule);
    const small = smallParts(spot, fee, terms.vat, vatDecimals);
    if (small !== undefined) return { spot, fees: fee.text, vat: small.vat, total: small.total };
    const net = add(parsed(spot), fee);
    const vat =
      terms.vat === undefined
        ? NO_FEE
        : roundTo({ digits: net.digits * terms.vat.digits, scale: net.scale + terms.vat.scale }, vatDecimals);
    const total = add(net, vat);
    return {
      spot,
      fees: fee.text,
      vat: unscaled(vat.digits, vat.scale),
      total: unscaled(total.digits, total.scale),
    };
  };
}
