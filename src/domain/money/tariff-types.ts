/**
 * The shape of a tariff and of a price under one (docs/tariffs.md): what ./tariff.ts reads and
 * ./tariff-pricer.ts computes with, in a module of its own so neither imports the other for them.
 */
import type { CalendarDate } from '../time/days.js';
import type { EnergyUnit } from './exact.js';

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
