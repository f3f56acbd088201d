/**
 * The terms that travel with data (docs/sources.md "Terms of each upstream"): the licence and
 * attribution of the upstream a source fetched from, found by the source's name, as a day's
 * provenance records it. Data no source wrote (`import`, a name no longer configured) has none.
 */
import { CONNECTOR_TYPES } from './connectors.js';
import type { UpstreamTerms } from './types.js';

/** A configured source as far as its terms go: its name, type and settings as written. */
export interface SourceIdentity {
  readonly name: string;
  readonly type: string;
  readonly settings: Readonly<Record<string, unknown>>;
}

/** What a price answer names beside the data a source wrote. */
export interface DataTerms {
  readonly license: string;
  readonly attribution: string;
}

/**
 * The terms of the data a source of `type` with `settings` fetches; undefined for an unknown type.
 * @example termsOfSource('energidataservice', { area: 'DK1' })?.license // 'CC-BY-4.0'
 */
export function termsOfSource(
  type: string,
  settings: Readonly<Record<string, unknown>>,
): UpstreamTerms | undefined {
  const kind = Object.hasOwn(CONNECTOR_TYPES, type) ? CONNECTOR_TYPES[type] : undefined;
  return kind === undefined ? undefined : (kind.termsFor?.(settings) ?? kind.terms);
}

/**
 * The terms of the data written by the source named `name`: the configured source of that name, or
 * else the connector type of that name (a run given no name records its type). Undefined for
 * `import`, `null` and names no source has.
 * @example sourceTermsLookup(config.sources)('entsoe-no1') // { license: '...', attribution: '...' }
 */
export function sourceTermsLookup(
  sources: readonly SourceIdentity[],
): (name: string | null) => DataTerms | undefined {
  const byName = new Map<string, DataTerms>();
  for (const type of Object.keys(CONNECTOR_TYPES)) {
    const terms = termsOfSource(type, {});
    if (terms !== undefined) byName.set(type, dataTerms(terms));
  }
  for (const source of sources) {
    const terms = termsOfSource(source.type, source.settings);
    if (terms !== undefined) byName.set(source.name, dataTerms(terms));
  }
  return (name) => (name === null ? undefined : byName.get(name));
}

function dataTerms({ license, attribution }: UpstreamTerms): DataTerms {
  return { license, attribution };
}
