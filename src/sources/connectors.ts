/**
 * Every connector type Pricepoint ships, by the `type` a source names in the config file. A new
 * upstream is a module implementing `ConnectorType` and one line here.
 */
import { awattar } from './awattar/connector.js';
import { ecb } from './ecb/connector.js';
import { elering } from './elering/connector.js';
import { energidataservice } from './energidataservice/connector.js';
import { energycharts } from './energycharts/connector.js';
import { entsoe } from './entsoe/connector.js';
import { nordpool } from './nordpool/connector.js';
import { octopus } from './octopus/connector.js';
import { omie } from './omie/connector.js';
import {
  type ConnectorType,
  type SourceConnector,
  SourceSettingsError,
  type UpstreamOptions,
} from './types.js';

// Each type checks its own settings in `create`, so the table holds them as settings of any shape.
// biome-ignore lint/suspicious/noExplicitAny: settings are checked by the connector they belong to
export const CONNECTOR_TYPES: Readonly<Record<string, ConnectorType<any>>> = {
  entsoe,
  ecb,
  energidataservice,
  energycharts,
  awattar,
  octopus,
  omie,
  nordpool,
  elering,
};

/**
 * A connector of `type` for `settings`; throws `SourceSettingsError` naming the bad field.
 * @example createConnector('ecb', { currencies: ['NOK'] }).fetchWindow({ from, to })
 */
export function createConnector(
  type: string,
  settings: Record<string, unknown>,
  upstream: UpstreamOptions = {},
): SourceConnector {
  const kind = Object.hasOwn(CONNECTOR_TYPES, type) ? CONNECTOR_TYPES[type] : undefined;
  if (kind === undefined) {
    throw new SourceSettingsError(
      'type',
      `"${type}" is not one of ${Object.keys(CONNECTOR_TYPES).join(', ')}`,
    );
  }
  return kind.create(settings, upstream);
}
