/**
 * What the development data set brings to the configuration (docs/data-model.md, "The development
 * data set"): the `fx:` pairs and the household tariff of docs/settings.md, so that every example
 * of the README runs on `npm start` alone. They apply only where the config file has no `fx:`, or
 * no `tariffs:`, of its own; a file that has them is taken as it is.
 */
import type { FxPairs } from '../config/config-file.js';
import type { Tier } from '../domain/limits/tiers.js';
import type { Tariff } from '../domain/money/tariff.js';
import { parseTariffs } from '../domain/money/tariff-config.js';

/** docs/settings.md, `fx:`: the development data set has each of these series. */
export const DEV_FX: FxPairs = { EUR: { NOK: 'EURNOK', SEK: 'EURSEK', USD: 'EURUSD' } };

/** docs/settings.md, `tariffs:` (docs/tariffs.md has the worked example). */
export const DEV_TARIFFS: Readonly<Record<string, Tariff>> = parseTariffs({
  'no1-household': {
    currency: 'NOK',
    unit: 'kWh',
    timezone: 'Europe/Oslo',
    vat: [{ from: '2026-01-01', percent: 25 }],
    fixed: [{ from: '2026-01-01', amount: '0.0713' }],
    fees: [
      {
        from: '2026-01-01',
        rules: [{ hours: '06:00-22:00', amount: '0.3640' }, { amount: '0.2640' }],
      },
    ],
  },
});

/**
 * The tiers the development data set starts from: the defaults, with `pro` keys allowed to rotate
 * themselves so the portal's rotation can be tried on `npm start` (the shared demo key never may). The
 * config file's `tiers:` are merged over these, so a file that says `selfRotate: false` wins.
 */
export function devTiers(defaults: Readonly<Record<string, Tier>>): Record<string, Tier> {
  const tiers = { ...defaults };
  if (tiers.pro !== undefined) tiers.pro = { ...tiers.pro, selfRotate: true };
  return tiers;
}

/** `fx` and `tariffs` with the development data set's where the configuration has none. */
export function withDevConfig<T extends { fx: FxPairs; tariffs: Readonly<Record<string, Tariff>> }>(
  config: T,
): T {
  return {
    ...config,
    fx: Object.keys(config.fx).length > 0 ? config.fx : DEV_FX,
    tariffs: Object.keys(config.tariffs).length > 0 ? config.tariffs : DEV_TARIFFS,
  };
}
