/**
 * Which zones the connector types can fill, and a zone found by any of its names
 * (`GET /api/v1/sources/zones`, docs/sources.md "Finding a zone"): `DE` finds `DE-LU`, `Oslo` finds
 * `NO1`, `10YNO-1--------2` finds it too, in any letter case.
 */
import { CONNECTOR_TYPES } from './connectors.js';
import type { ConnectorZone } from './types.js';

/** The zones one connector type can fill, and the configured sources of that type. */
export interface TypeZones {
  readonly type: string;
  /** The names of the configured sources of the type; empty for a type none is configured of. */
  readonly sources: string[];
  readonly zones: { readonly zone: string; readonly eic?: string; readonly aliases: string[] }[];
}

export interface ZoneQuery {
  /** Every type Pricepoint ships, not only those of configured sources. */
  readonly all?: boolean;
  /** Only zones with this name, alias or EIC code (case-insensitive, whole name). */
  readonly q?: string;
}

/**
 * Per connector type that fills zones (`ecb` fills none), in the order of `CONNECTOR_TYPES`: the
 * zones it can fill. Only the types of `sources` unless `all`; with `q`, only the zones so named,
 * and only the types that have one.
 * @example findZones([{ name: 'no1', type: 'entsoe' }], { q: 'oslo' }) // [{ type: 'entsoe', sources: ['no1'], zones: [NO1] }]
 */
export function findZones(
  sources: readonly { readonly name: string; readonly type: string }[],
  query: ZoneQuery = {},
): TypeZones[] {
  const wanted = query.q?.trim().toUpperCase();
  const found: TypeZones[] = [];
  for (const [type, kind] of Object.entries(CONNECTOR_TYPES)) {
    const names = sources.filter((s) => s.type === type).map((s) => s.name);
    if (kind.zones === undefined || (names.length === 0 && query.all !== true)) continue;
    const zones =
      wanted === undefined ? kind.zones : kind.zones.filter((zone) => namesOf(zone).includes(wanted));
    if (wanted !== undefined && zones.length === 0) continue;
    found.push({ type, sources: names, zones: zones.map((z) => ({ ...z, aliases: [...z.aliases] })) });
  }
  return found;
}

/**
 * Every name a zone is known by, upper-cased: its own, its EIC code and its aliases.
 * @example namesOf({ zone: 'NO1', eic: '10YNO-1--------2', aliases: ['Oslo'] }) // ['NO1', '10YNO-1--------2', 'OSLO']
 */
export function namesOf(zone: ConnectorZone): string[] {
  return [zone.zone, ...(zone.eic === undefined ? [] : [zone.eic]), ...zone.aliases].map((n) =>
    n.toUpperCase(),
  );
}
