/**
 * What a household pays for an interval under an operator's tariff (docs/tariffs.md): the spot
 * price (already in the tariff's currency and unit), plus fixed amounts per unit and a time-of-use
 * grid fee by local time of day, weekday and month, plus VAT in percent of both. Each part has
 * versions with a valid-from date; the newest version valid on the interval's local date applies.
 * Exact decimal arithmetic (./exact.ts), done by ./tariff-pricer.ts; the only rounding is VAT's
 * (`vatDecimals`).
 */
import { type CalendarDate, instantOf } from '../time/days.js';
import { CONVERTED_DECIMALS, ENERGY_UNITS, type EnergyUnit } from './exact.js';
import { tariffPricer } from './tariff-pricer.js';

/** Days of the week as the config file writes them, Sunday first as `Date#getUTCDay` counts. */
export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** One time-of-use rule of a fee version: `amount` per unit where every condition given holds. */
export interface FeeRule {
  /** Per unit of the tariff, in its currency: a plain decimal text. */
  readonly amount: string;
  /**
   * Local minutes of the day `[from, to)` the rule holds in; `from > to` runs over midnight
   * (22:00-06:00). Absent: all day.
   */
  readonly minutes?: readonly [number, number];
  readonly weekdays?: readonly Weekday[];
  /** 1 (January) to 12. */
  readonly months?: readonly number[];
}

/** A version of a part, in force from its local date until the next version's. */
export interface Versioned {
  readonly from: CalendarDate;
}

export interface Tariff {
  readonly name: string;
  readonly description?: string;
  readonly currency: string;
  readonly unit: EnergyUnit;
  /** Whose local time the fees follow; absent: the zone of the series the tariff is applied to. */
  readonly timezone?: string;
  /** VAT in percent of spot plus fees; none: no VAT. */
  readonly vat: readonly (Versioned & { readonly percent: string })[];
  /** Fixed amounts per unit (taxes, a supplier's margin); none: no fixed amount. */
  readonly fixed: readonly (Versioned & { readonly amount: string })[];
  /** Time-of-use grid fees: the first rule that holds applies, none that holds is 0; none: no fee. */
  readonly fees: readonly (Versioned & { readonly rules: readonly FeeRule[] })[];
}

/** An interval's price under a tariff, each a plain decimal text in the tariff's currency per its unit. */
export interface TariffedPrice {
  /** The spot price as given (converted into the tariff's currency and unit). */
  readonly spot: string;
  /** Fixed amounts plus the time-of-use fee in force at the interval's local start. */
  readonly fees: string;
  /** VAT percent of `spot + fees`, rounded (see `vatDecimals`). */
  readonly vat: string;
  /** `spot + fees + vat`, exactly: the parts always add up to it. */
  readonly total: string;
}

/**
 * Decimals VAT is rounded to, half away from zero: 6 per MWh, as converted prices (./exact.ts), so 9
 * per kWh and 12 per Wh.
 */
export function vatDecimals(unit: EnergyUnit): number {
  return CONVERTED_DECIMALS + ENERGY_UNITS.MWh - ENERGY_UNITS[unit];
}

/**
 * The parts of one interval starting at `epochMs` whose spot price is `spot`, or `undefined` when a
 * part the tariff has (VAT, fixed amounts, fees) has no version in force yet on the interval's
 * local date: the tariff does not apply then, and no part is guessed as 0.
 * @example tariffedPrice(tariff, Date.parse('2026-11-24T07:00:00+01:00'), '0.478100569', 'Europe/Oslo')
 */
export function tariffedPrice(
  tariff: Tariff,
  epochMs: number,
  spot: string,
  zone: string,
): TariffedPrice | undefined {
  return tariffPricer(tariff, zone, vatDecimals(tariff.unit))(epochMs, spot);
}

/**
 * Every interval of a series under `tariff`, in order: `intervals` are as served (RFC 3339 `start`,
 * `price` already converted into the tariff's currency and unit), `zone` the series' zone, which
 * the fees follow when the tariff names none. An entry is `undefined` where the tariff does not
 * apply yet (see `tariffedPrice`).
 * @example applyTariff(tariff, day.prices, 'Europe/Oslo').map((p) => p?.total)
 */
export function applyTariff(
  tariff: Tariff,
  intervals: readonly { readonly start: string; readonly price: string }[],
  zone: string,
): (TariffedPrice | undefined)[] {
  const price = tariffPricer(tariff, zone, vatDecimals(tariff.unit));
  return intervals.map((p) => price(instantOf(p.start), p.price));
}
