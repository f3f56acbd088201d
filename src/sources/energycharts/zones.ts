/**
 * The bidding zones Energy-Charts serves day-ahead prices for (its `bzn` parameter), with the EIC
 * code ENTSO-E lists them by, the time zone of their market day and the names users know them by.
 * A zone's default series symbol is its name as the `entsoe` type spells it (`IT-North` fills
 * `IT-NORD`), so both types can fill one series ranked (docs/sources.md).
 */
import type { ConnectorZone } from '../types.js';

export interface EnergyChartsZone extends ConnectorZone {
  /** The `bzn` value, as the API spells it. */
  readonly zone: string;
  readonly eic: string;
  /** The default series symbol. */
  readonly symbol: string;
  readonly timezone: string;
}

/**
 * Zones whose prices Energy-Charts publishes under CC BY 4.0 (Bundesnetzagentur | SMARD.de); every
 * other zone's answer says "for private and internal use only" in its `license_info`.
 */
export const CC_BY_ZONES: ReadonlySet<string> = new Set([
  'AT',
  'BE',
  'CH',
  'CZ',
  'DE-LU',
  'DE-AT-LU',
  'DK1',
  'DK2',
  'FR',
  'HU',
  'IT-North',
  'NL',
  'NO2',
  'PL',
  'SE4',
  'SI',
]);

// [bzn, symbol, EIC, time zone, aliases]
const ROWS: readonly (readonly [string, string, string, string, readonly string[]])[] = [
  ['AT', 'AT', '10YAT-APG------L', 'Europe/Vienna', ['Austria']],
  ['BE', 'BE', '10YBE----------2', 'Europe/Brussels', ['Belgium']],
  ['BG', 'BG', '10YCA-BULGARIA-R', 'Europe/Sofia', ['Bulgaria']],
  ['CH', 'CH', '10YCH-SWISSGRIDZ', 'Europe/Zurich', ['Switzerland']],
  ['CZ', 'CZ', '10YCZ-CEPS-----N', 'Europe/Prague', ['Czechia', 'Czech Republic']],
  ['DE-LU', 'DE-LU', '10Y1001A1001A82H', 'Europe/Berlin', ['DE', 'LU', 'Germany', 'Luxembourg']],
  // Until 30 September 2018, for backfills.
  ['DE-AT-LU', 'DE-AT-LU', '10Y1001A1001A63L', 'Europe/Berlin', []],
  ['DK1', 'DK1', '10YDK-1--------W', 'Europe/Copenhagen', ['West Denmark']],
  ['DK2', 'DK2', '10YDK-2--------M', 'Europe/Copenhagen', ['East Denmark']],
  ['EE', 'EE', '10Y1001A1001A39I', 'Europe/Tallinn', ['Estonia']],
  ['ES', 'ES', '10YES-REE------0', 'Europe/Madrid', ['Spain']],
  ['FI', 'FI', '10YFI-1--------U', 'Europe/Helsinki', ['Finland']],
  ['FR', 'FR', '10YFR-RTE------C', 'Europe/Paris', ['France']],
  ['GR', 'GR', '10YGR-HTSO-----Y', 'Europe/Athens', ['Greece']],
  ['HR', 'HR', '10YHR-HEP------M', 'Europe/Zagreb', ['Croatia']],
  ['HU', 'HU', '10YHU-MAVIR----U', 'Europe/Budapest', ['Hungary']],
  ['IT-Calabria', 'IT-CALA', '10Y1001C--00096J', 'Europe/Rome', ['IT-CALA']],
  ['IT-Centre-North', 'IT-CNOR', '10Y1001A1001A70O', 'Europe/Rome', ['IT-CNOR']],
  ['IT-Centre-South', 'IT-CSUD', '10Y1001A1001A71M', 'Europe/Rome', ['IT-CSUD']],
  ['IT-North', 'IT-NORD', '10Y1001A1001A73I', 'Europe/Rome', ['IT-NORD']],
  ['IT-SACOAC', 'IT-SACOAC', '10Y1001A1001A885', 'Europe/Rome', []],
  ['IT-SACODC', 'IT-SACODC', '10Y1001A1001A893', 'Europe/Rome', []],
  ['IT-Sardinia', 'IT-SARD', '10Y1001A1001A74G', 'Europe/Rome', ['IT-SARD']],
  ['IT-Sicily', 'IT-SICI', '10Y1001A1001A75E', 'Europe/Rome', ['IT-SICI']],
  ['IT-South', 'IT-SUD', '10Y1001A1001A788', 'Europe/Rome', ['IT-SUD']],
  ['LT', 'LT', '10YLT-1001A0008Q', 'Europe/Vilnius', ['Lithuania']],
  ['LV', 'LV', '10YLV-1001A00074', 'Europe/Riga', ['Latvia']],
  ['ME', 'ME', '10YCS-CG-TSO---S', 'Europe/Podgorica', ['Montenegro']],
  ['NL', 'NL', '10YNL----------L', 'Europe/Amsterdam', ['Netherlands']],
  ['NO1', 'NO1', '10YNO-1--------2', 'Europe/Oslo', ['Oslo']],
  ['NO2', 'NO2', '10YNO-2--------T', 'Europe/Oslo', ['Kristiansand']],
  // The North Sea Link's own zone beside NO2.
  ['NO2NSL', 'NO2NSL', '50Y0JVU59B4JWQCU', 'Europe/Oslo', []],
  ['NO3', 'NO3', '10YNO-3--------J', 'Europe/Oslo', ['Trondheim']],
  ['NO4', 'NO4', '10YNO-4--------9', 'Europe/Oslo', ['Tromsø']],
  ['NO5', 'NO5', '10Y1001A1001A48H', 'Europe/Oslo', ['Bergen']],
  ['PL', 'PL', '10YPL-AREA-----S', 'Europe/Warsaw', ['Poland']],
  ['PT', 'PT', '10YPT-REN------W', 'Europe/Lisbon', ['Portugal']],
  ['RO', 'RO', '10YRO-TEL------P', 'Europe/Bucharest', ['Romania']],
  ['RS', 'RS', '10YCS-SERBIATSOV', 'Europe/Belgrade', ['Serbia']],
  ['SE1', 'SE1', '10Y1001A1001A44P', 'Europe/Stockholm', ['Luleå']],
  ['SE2', 'SE2', '10Y1001A1001A45N', 'Europe/Stockholm', ['Sundsvall']],
  ['SE3', 'SE3', '10Y1001A1001A46L', 'Europe/Stockholm', ['Stockholm']],
  ['SE4', 'SE4', '10Y1001A1001A47J', 'Europe/Stockholm', ['Malmö']],
  ['SI', 'SI', '10YSI-ELES-----O', 'Europe/Ljubljana', ['Slovenia']],
  ['SK', 'SK', '10YSK-SEPS-----K', 'Europe/Bratislava', ['Slovakia']],
];

export const ENERGY_CHARTS_ZONES: readonly EnergyChartsZone[] = ROWS.map(
  ([zone, symbol, eic, timezone, aliases]) => ({ zone, symbol, eic, timezone, aliases }),
);

const BY_KEY: ReadonlyMap<string, EnergyChartsZone> = new Map(
  ENERGY_CHARTS_ZONES.flatMap((zone) =>
    [zone.zone, zone.eic, ...zone.aliases].map((key) => [key.toUpperCase(), zone] as const),
  ),
);

/**
 * The zone named `name` (its `bzn`, an alias or its EIC code, in any letter case).
 * @example energyChartsZone('it-nord')?.zone // 'IT-North'
 */
export function energyChartsZone(name: string): EnergyChartsZone | undefined {
  return BY_KEY.get(name.trim().toUpperCase());
}
