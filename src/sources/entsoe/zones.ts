/**
 * European bidding zones by their usual names, with the EIC code the ENTSO-E Transparency Platform
 * knows them by (its guide, "Areas"), the time zone of their market day for the series a source
 * creates, and other names users know them by (the `energycharts` and `nordpool` tables use the
 * same). A zone may also be given as its EIC code or an alias. See docs/sources.md.
 */
import type { ConnectorZone } from '../types.js';

export interface BiddingZone {
  /** The usual name, which is also the default series symbol. */
  readonly name: string;
  readonly eic: string;
  readonly timezone: string;
  readonly aliases: readonly string[];
}

// [name, EIC, time zone, aliases]
const ZONES: readonly (readonly [string, string, string, readonly string[]])[] = [
  ['NO1', '10YNO-1--------2', 'Europe/Oslo', ['Oslo']],
  ['NO2', '10YNO-2--------T', 'Europe/Oslo', ['Kristiansand']],
  ['NO3', '10YNO-3--------J', 'Europe/Oslo', ['Trondheim']],
  ['NO4', '10YNO-4--------9', 'Europe/Oslo', ['Tromsø', 'Tromso']],
  ['NO5', '10Y1001A1001A48H', 'Europe/Oslo', ['Bergen']],
  ['SE1', '10Y1001A1001A44P', 'Europe/Stockholm', ['Luleå', 'Lulea']],
  ['SE2', '10Y1001A1001A45N', 'Europe/Stockholm', ['Sundsvall']],
  ['SE3', '10Y1001A1001A46L', 'Europe/Stockholm', ['Stockholm']],
  ['SE4', '10Y1001A1001A47J', 'Europe/Stockholm', ['Malmö', 'Malmo']],
  ['DK1', '10YDK-1--------W', 'Europe/Copenhagen', ['West Denmark']],
  ['DK2', '10YDK-2--------M', 'Europe/Copenhagen', ['East Denmark']],
  ['FI', '10YFI-1--------U', 'Europe/Helsinki', ['Finland']],
  ['EE', '10Y1001A1001A39I', 'Europe/Tallinn', ['Estonia']],
  ['LV', '10YLV-1001A00074', 'Europe/Riga', ['Latvia']],
  ['LT', '10YLT-1001A0008Q', 'Europe/Vilnius', ['Lithuania']],
  ['DE-LU', '10Y1001A1001A82H', 'Europe/Berlin', ['DE', 'LU', 'Germany', 'Luxembourg']],
  // The German-Austrian-Luxembourg zone, split on 1 October 2018: for backfills before that day.
  ['DE-AT-LU', '10Y1001A1001A63L', 'Europe/Berlin', []],
  ['AT', '10YAT-APG------L', 'Europe/Vienna', ['Austria']],
  ['BE', '10YBE----------2', 'Europe/Brussels', ['Belgium']],
  ['NL', '10YNL----------L', 'Europe/Amsterdam', ['Netherlands']],
  ['FR', '10YFR-RTE------C', 'Europe/Paris', ['France']],
  ['CH', '10YCH-SWISSGRIDZ', 'Europe/Zurich', ['Switzerland']],
  ['ES', '10YES-REE------0', 'Europe/Madrid', ['Spain']],
  ['PT', '10YPT-REN------W', 'Europe/Lisbon', ['Portugal']],
  ['PL', '10YPL-AREA-----S', 'Europe/Warsaw', ['Poland']],
  ['CZ', '10YCZ-CEPS-----N', 'Europe/Prague', ['Czechia', 'Czech Republic']],
  ['SK', '10YSK-SEPS-----K', 'Europe/Bratislava', ['Slovakia']],
  ['HU', '10YHU-MAVIR----U', 'Europe/Budapest', ['Hungary']],
  ['SI', '10YSI-ELES-----O', 'Europe/Ljubljana', ['Slovenia']],
  ['HR', '10YHR-HEP------M', 'Europe/Zagreb', ['Croatia']],
  ['RO', '10YRO-TEL------P', 'Europe/Bucharest', ['Romania']],
  ['BG', '10YCA-BULGARIA-R', 'Europe/Sofia', ['Bulgaria']],
  ['GR', '10YGR-HTSO-----Y', 'Europe/Athens', ['Greece']],
  ['RS', '10YCS-SERBIATSOV', 'Europe/Belgrade', ['Serbia']],
  ['ME', '10YCS-CG-TSO---S', 'Europe/Podgorica', ['Montenegro']],
  ['MK', '10YMK-MEPSO----8', 'Europe/Skopje', ['North Macedonia']],
  ['IT-NORD', '10Y1001A1001A73I', 'Europe/Rome', ['IT-North']],
  ['IT-CNOR', '10Y1001A1001A70O', 'Europe/Rome', ['IT-Centre-North']],
  ['IT-CSUD', '10Y1001A1001A71M', 'Europe/Rome', ['IT-Centre-South']],
  ['IT-SUD', '10Y1001A1001A788', 'Europe/Rome', ['IT-South']],
  ['IT-CALA', '10Y1001C--00096J', 'Europe/Rome', ['IT-Calabria']],
  ['IT-SICI', '10Y1001A1001A75E', 'Europe/Rome', ['IT-Sicily']],
  ['IT-SARD', '10Y1001A1001A74G', 'Europe/Rome', ['IT-Sardinia']],
  ['IE-SEM', '10Y1001A1001A59C', 'Europe/Dublin', ['Ireland', 'SEM']],
];

/** Every shipped zone, in the order above (north to south, roughly). */
export const BIDDING_ZONES: readonly BiddingZone[] = ZONES.map(([name, eic, timezone, aliases]) => ({
  name,
  eic,
  timezone,
  aliases,
}));

/** The zones as `GET /api/v1/sources/zones` lists them. */
export const ENTSOE_ZONES: readonly ConnectorZone[] = BIDDING_ZONES.map(({ name, eic, aliases }) => ({
  zone: name,
  eic,
  aliases,
}));

const BY_KEY: ReadonlyMap<string, BiddingZone> = new Map(
  BIDDING_ZONES.flatMap((zone) =>
    [zone.name, zone.eic, ...zone.aliases].map((key) => [key.toUpperCase(), zone] as const),
  ),
);

/**
 * The zone named `name` (its name, an alias or its EIC code, any letter case).
 * @example biddingZone('de-lu')?.eic // '10Y1001A1001A82H'
 */
export function biddingZone(name: string): BiddingZone | undefined {
  return BY_KEY.get(name.trim().toUpperCase());
}
