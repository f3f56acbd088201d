/**
 * What a household pays for an interval under an operator's tariff (docs/tariffs.md): the spot
 * price (already in the tariff's currency and unit), plus fixed amounts per unit and a time-of-use
 * grid fee by local time of day, weekday and month, plus VAT in percent of both. Each part has
 * versions with a valid-from date; the newest version valid on the interval's local date applies.
 * Exact decimal arithmetic (./exact.ts), done by ./tariff-pricer.ts; the only rounding is VAT's
 * (`vatDecimals`).
 */
import { instantOf } from '../time/days.js';
import { CONVERTED_DECIMALS, ENERGY_UNITS, type EnergyUnit } from './exact.js';
import { tariffPricer } from './tariff-pricer.js';
import type { Tariff, TariffedPrice } from './tariff-types.js';

export type { FeeRule, Tariff, TariffedPrice, Versioned, Weekday } from './tariff-types.js';
export { WEEKDAYS } from './tariff-types.js';

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
