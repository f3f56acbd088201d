/**
 * `tariff=` on the read endpoints and `GET /api/v1/tariffs` (docs/tariffs.md): which tariff a read
 * means, what it converts into, the days with each interval's total and parts, and the list as
 * answered. The arithmetic is src/domain/money/tariff.ts. Knows nothing of HTTP.
 */
import { ApiError } from '../domain/errors/api-error.js';
import { energyExponent } from '../domain/money/exact.js';
import { applyTariff, type Tariff, type TariffedPrice } from '../domain/money/tariff.js';
import type { Series } from '../stores/types.js';
import type { ConversionQuery, FxPairs, PricePoint } from './price-conversion.js';

export type Tariffs = Readonly<Record<string, Tariff>>;

/**
 * The tariff `name` names (case-insensitive: names are lower-case), or a 400 naming the parameter
 * and the tariffs there are.
 */
export function tariffNamed(tariffs: Tariffs, name: string): Tariff {
  const tariff = Object.hasOwn(tariffs, name.toLowerCase()) ? tariffs[name.toLowerCase()] : undefined;
  if (tariff !== undefined) return tariff;
  const known = Object.keys(tariffs).sort();
  throw new ApiError(
    'invalid_parameter',
    `The parameter "tariff" names no tariff of this server${known.length === 0 ? ' (it has none)' : `; it has ${known.join(', ')}`}.`,
    { extra: { parameter: 'tariff' } },
  );
}

/**
 * What a read with `tariff` converts into: the tariff's currency and unit. A `currency` or `unit`
 * asked besides must be the tariff's (400 naming it otherwise), and every series must be priced per
 * energy unit and convertible into the tariff's currency with an FX series of `fx` (400 naming `tariff`).
 */
export function tariffConversion(
  tariff: Tariff,
  query: ConversionQuery,
  series: readonly Series[],
  fx: FxPairs,
): ConversionQuery {
  if (query.currency !== undefined && query.currency !== tariff.currency) {
    throw new ApiError(
      'invalid_parameter',
      `The parameter "currency" (${query.currency}) differs from the currency of tariff ${tariff.name} (${tariff.currency}); a tariff answers in its own.`,
      { extra: { parameter: 'currency' } },
    );
  }
  if (query.unit !== undefined && query.unit !== tariff.unit) {
    throw new ApiError(
      'invalid_parameter',
      `The parameter "unit" (${query.unit}) differs from the unit of tariff ${tariff.name} (${tariff.unit}); a tariff answers per its own.`,
      { extra: { parameter: 'unit' } },
    );
  }
  const refused = series.filter((s) => energyExponent(s.unit) === undefined).map((s) => s.symbol);
  if (refused.length > 0) {
    throw new ApiError(
      'invalid_parameter',
      `The parameter "tariff" applies to prices per energy unit (Wh, kWh, MWh); not to ${refused.join(', ')}.`,
      { extra: { parameter: 'tariff', symbols: refused } },
    );
  }
  const unconverted = series.filter(
    (s) => s.currency !== tariff.currency && fx[s.currency]?.[tariff.currency] === undefined,
  );
  if (unconverted.length > 0) {
    const pairs = [...new Set(unconverted.map((s) => `${s.currency} into ${tariff.currency}`))].join(', ');
    throw new ApiError(
      'invalid_parameter',
      `The parameter "tariff" (${tariff.name}) is in ${tariff.currency}, and no FX series is configured to convert ${pairs} (${unconverted.map((s) => s.symbol).join(', ')}).`,
      { extra: { parameter: 'tariff', symbols: unconverted.map((s) => s.symbol) } },
    );
  }
  return { currency: tariff.currency, unit: tariff.unit };
}

/** An interval with its total and parts under a tariff; without them where the tariff does not apply yet. */
export type TariffedPoint = PricePoint & Partial<TariffedPrice>;

/**
 * `days` (converted into the tariff's currency and unit) with each interval's `total`, `spot`,
 * `fees` and `vat`, and the tariff's name on each day. New objects: the days given stay as they are.
 */
export function withTariff<T extends { readonly timezone: string; readonly prices: readonly PricePoint[] }>(
  days: readonly T[],
  tariff: Tariff,
): (T & { tariff: string; prices: TariffedPoint[] })[] {
  return days.map((day) => {
    const parts = applyTariff(tariff, day.prices, day.timezone);
    return {
      ...day,
      tariff: tariff.name,
      prices: day.prices.map((p, i): TariffedPoint => {
        const priced = parts[i];
        if (priced === undefined) return p;
        // Written out: spreading both objects costs several times the arithmetic (bench/README.md).
        const { spot, fees, vat, total } = priced;
        const { start, end, price, fx } = p;
        return fx === undefined
          ? { start, end, price, spot, fees, vat, total }
          : { start, end, price, fx, spot, fees, vat, total };
      }),
    };
  });
}

/** A tariff as `GET /api/v1/tariffs` lists it: as configured, hours written back as `HH:MM-HH:MM`. */
export interface TariffView {
  readonly name: string;
  readonly description: string | null;
  readonly currency: string;
  readonly unit: string;
  readonly timezone: string | null;
  readonly vat: readonly { readonly from: string; readonly percent: string }[];
  readonly fixed: readonly { readonly from: string; readonly amount: string }[];
  readonly fees: readonly {
    readonly from: string;
    readonly rules: readonly {
      readonly amount: string;
      readonly hours?: string;
      readonly weekdays?: readonly string[];
      readonly months?: readonly number[];
    }[];
  }[];
}

const clock = (minute: number) =>
  `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;

/** Every tariff by name, versions oldest first. */
export function tariffViews(tariffs: Tariffs): TariffView[] {
  const byDate = <V extends { from: string }>(list: readonly V[]) =>
    [...list].sort((a, b) => (a.from < b.from ? -1 : 1));
  return Object.values(tariffs)
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((t) => ({
      name: t.name,
      description: t.description ?? null,
      currency: t.currency,
      unit: t.unit,
      timezone: t.timezone ?? null,
      vat: byDate(t.vat),
      fixed: byDate(t.fixed),
      fees: byDate(t.fees).map((v) => ({
        from: v.from,
        rules: v.rules.map(({ minutes, ...rule }) => ({
          ...rule,
          ...(minutes !== undefined && { hours: `${clock(minutes[0])}-${clock(minutes[1])}` }),
        })),
      })),
    }));
}
