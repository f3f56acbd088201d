/**
 * The delivery areas Nord Pool's data portal publishes day-ahead prices for (its `deliveryArea`
 * codes), with the EIC code ENTSO-E lists them by, the time zone of their market day and the names
 * users know them by. A zone's default series symbol is its name as the `entsoe` type spells it
 * (`GER` fills `DE-LU`, `TEL` fills `RO`), so both types can fill one series ranked.
 */
import type { ConnectorZone } from '../types.js';

export interface NordPoolZone extends ConnectorZone {
  /** The `deliveryArea` code, as the data portal spells it. */
  readonly zone: string;
  readonly eic: string;
  /** The default series symbol. */
  readonly symbol: string;
  readonly timezone: string;
}

// [deliveryArea, EIC, symbol, time zone, aliases]
const AREAS: readonly (readonly [string, string, string, string, readonly string[]])[] = [
  ['NO1', '10YNO-1--------2', 'NO1', 'Europe/Oslo', ['Oslo']],
  ['NO2', '10YNO-2--------T', 'NO2', 'Europe/Oslo', ['Kristiansand', 'Kr.sand']],
  ['NO3', '10YNO-3--------J', 'NO3', 'Europe/Oslo', ['Trondheim', 'Molde', 'Tr.heim']],
  ['NO4', '10YNO-4--------9', 'NO4', 'Europe/Oslo', ['Tromsø', 'Tromso']],
  ['NO5', '10Y1001A1001A48H', 'NO5', 'Europe/Oslo', ['Bergen']],
  ['SE1', '10Y1001A1001A44P', 'SE1', 'Europe/Stockholm', ['Luleå', 'Lulea']],
  ['SE2', '10Y1001A1001A45N', 'SE2', 'Europe/Stockholm', ['Sundsvall']],
  ['SE3', '10Y1001A1001A46L', 'SE3', 'Europe/Stockholm', ['Stockholm']],
  ['SE4', '10Y1001A1001A47J', 'SE4', 'Europe/Stockholm', ['Malmö', 'Malmo']],
  ['DK1', '10YDK-1--------W', 'DK1', 'Europe/Copenhagen', ['West Denmark']],
  ['DK2', '10YDK-2--------M', 'DK2', 'Europe/Copenhagen', ['East Denmark']],
  ['FI', '10YFI-1--------U', 'FI', 'Europe/Helsinki', ['Finland']],
  ['EE', '10Y1001A1001A39I', 'EE', 'Europe/Tallinn', ['Estonia']],
  ['LV', '10YLV-1001A00074', 'LV', 'Europe/Riga', ['Latvia']],
  ['LT', '10YLT-1001A0008Q', 'LT', 'Europe/Vilnius', ['Lithuania']],
  ['AT', '10YAT-APG------L', 'AT', 'Europe/Vienna', ['Austria']],
  ['BE', '10YBE----------2', 'BE', 'Europe/Brussels', ['Belgium']],
  ['FR', '10YFR-RTE------C', 'FR', 'Europe/Paris', ['France']],
  ['GER', '10Y1001A1001A82H', 'DE-LU', 'Europe/Berlin', ['DE-LU', 'DE', 'Germany']],
  ['NL', '10YNL----------L', 'NL', 'Europe/Amsterdam', ['Netherlands']],
  ['PL', '10YPL-AREA-----S', 'PL', 'Europe/Warsaw', ['Poland']],
  ['BG', '10YCA-BULGARIA-R', 'BG', 'Europe/Sofia', ['Bulgaria']],
  ['TEL', '10YRO-TEL------P', 'RO', 'Europe/Bucharest', ['RO', 'Romania']],
];

/** Every delivery area the connector can fill, in the order above. */
export const NORD_POOL_ZONES: readonly NordPoolZone[] = AREAS.map(
  ([zone, eic, symbol, timezone, aliases]) => ({ zone, eic, symbol, timezone, aliases }),
);

const BY_KEY: ReadonlyMap<string, NordPoolZone> = new Map(
  NORD_POOL_ZONES.flatMap((zone) =>
    [zone.zone, zone.eic, zone.symbol, ...zone.aliases].map((key) => [key.toUpperCase(), zone] as const),
  ),
);

/**
 * The area named `name` (its code, symbol, an alias or its EIC code, any letter case).
 * @example nordPoolZone('de-lu')?.zone // 'GER'
 */
export function nordPoolZone(name: string): NordPoolZone | undefined {
  return BY_KEY.get(name.trim().toUpperCase());
}
