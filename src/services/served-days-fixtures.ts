/** Days as the price service serves them, for the tests of the read cache and of packed days. */
import type { SeriesDay } from './served-days.js';

export const series = {
  symbol: 'NO1',
  name: 'Oslo',
  kind: 'electricity',
  currency: 'EUR',
  unit: 'MWh',
  timezone: 'Europe/Oslo',
  resolution: 'PT15M' as const,
};

/** `count` quarter hours of one local day, prices of varied lengths and signs. */
export function quarterHours(date: string, count: number, offset = '+01:00'): SeriesDay {
  const at = (q: number) =>
    `${date}T${String(Math.floor(q / 4)).padStart(2, '0')}:${String((q % 4) * 15).padStart(2, '0')}:00${offset}`;
  return {
    ...series,
    date,
    prices: Array.from({ length: count }, (_, q) => ({
      start: at(q),
      end: q === count - 1 ? `${date}T23:59:59${offset}` : at(q + 1),
      price: q % 3 === 0 ? `-${q}.5` : q % 3 === 1 ? '0' : `${q * 1234.5678}`,
    })),
  };
}
