/**
 * European bidding zones by their usual names, with the EIC code the ENTSO-E Transparency Platform
 * knows them by (its guide, "Areas") and the time zone of their market day for the series a source
 * creates. A zone may also be given as its EIC code. See docs/sources.md.
 */

export interface BiddingZone {
  /** The usual name, which is also the default series symbol. */
  readonly name: string;
  readonly eic: string;
  readonly timezone: string;
}

const ZONES: readonly (readonly [string, string, string])[] = [
  ['NO1', '10YNO-1--------2', 'Europe/Oslo'],
  ['NO2', '10YNO-2--------T', 'Europe/Oslo'],
  ['NO3', '10YNO-3--------J', 'Europe/Oslo'],
  ['NO4', '10YNO-4--------9', 'Europe/Oslo'],
  ['NO5', '10Y1001A1001A48H', 'Europe/Oslo'],
  ['SE1', '10Y1001A1001A44P', 'Europe/Stockholm'],
  ['SE2', '10Y1001A1001A45N', 'Europe/Stockholm'],
  ['SE3', '10Y1001A1001A46L', 'Europe/Stockholm'],
  ['SE4', '10Y1001A1001A47J', 'Europe/Stockholm'],
  ['DK1', '10YDK-1--------W', 'Europe/Copenhagen'],
  ['DK2', '10YDK-2--------M', 'Europe/Copenhagen'],
  ['FI', '10YFI-1--------U', 'Europe/Helsinki'],
  ['EE', '10Y1001A1001A39I', 'Europe/Tallinn'],
  ['LV', '10YLV-1001A00074', 'Europe/Riga'],
  ['LT', '10YLT-1001A0008Q', 'Europe/Vilnius'],
  ['DE-LU', '10Y1001A1001A82H', 'Europe/Berlin'],
  // The German-Austrian-Luxembourg zone, split on 1 October 2018: for backfills before that day.
  ['DE-AT-LU', '10Y1001A1001A63L', 'Europe/Berlin'],
  ['AT', '10YAT-APG------L', 'Europe/Vienna'],
  ['BE', '10YBE----------2', 'Europe/Brussels'],
  ['NL', '10YNL----------L', 'Europe/Amsterdam'],
  ['FR', '10YFR-RTE------C', 'Europe/Paris'],
  ['CH', '10YCH-SWISSGRIDZ', 'Europe/Zurich'],
  ['ES', '10YES-REE------0', 'Europe/Madrid'],
  ['PT', '10YPT-REN------W', 'Europe/Lisbon'],
  ['PL', '10YPL-AREA-----S', 'Europe/Warsaw'],
  ['CZ', '10YCZ-CEPS-----N', 'Europe/Prague'],
  ['SK', '10YSK-SEPS-----K', 'Europe/Bratislava'],
  ['HU', '10YHU-MAVIR----U', 'Europe/Budapest'],
  ['SI', '10YSI-ELES-----O', 'Europe/Ljubljana'],
  ['HR', '10YHR-HEP------M', 'Europe/Zagreb'],
  ['RO', '10YRO-TEL------P', 'Europe/Bucharest'],
  ['BG', '10YCA-BULGARIA-R', 'Europe/Sofia'],
  ['GR', '10YGR-HTSO-----Y', 'Europe/Athens'],
  ['RS', '10YCS-SERBIATSOV', 'Europe/Belgrade'],
  ['ME', '10YCS-CG-TSO---S', 'Europe/Podgorica'],
  ['MK', '10YMK-MEPSO----8', 'Europe/Skopje'],
  ['IT-NORD', '10Y1001A1001A73I', 'Europe/Rome'],
  ['IT-CNOR', '10Y1001A1001A70O', 'Europe/Rome'],
  ['IT-CSUD', '10Y1001A1001A71M', 'Europe/Rome'],
  ['IT-SUD', '10Y1001A1001A788', 'Europe/Rome'],
  ['IT-CALA', '10Y1001C--00096J', 'Europe/Rome'],
  ['IT-SICI', '10Y1001A1001A75E', 'Europe/Rome'],
  ['IT-SARD', '10Y1001A1001A74G', 'Europe/Rome'],
  ['IE-SEM', '10Y1001A1001A59C', 'Europe/Dublin'],
];

/** Every shipped zone, in the order above (north to south, roughly). */
export const BIDDING_ZONES: readonly BiddingZone[] = ZONES.map(([name, eic, timezone]) => ({
  name,
  eic,
  timezone,
}));

const BY_KEY = new Map<string, BiddingZone>();
for (const zone of BIDDING_ZONES) {
  BY_KEY.set(zone.name, zone);
  BY_KEY.set(zone.eic, zone);
}

/**
 * The zone named `name` (any letter case) or with that EIC code.
 * @example biddingZone('de-lu')?.eic // '10Y1001A1001A82H'
 */
export function biddingZone(name: string): BiddingZone | undefined {
  return BY_KEY.get(name.trim().toUpperCase());
}
