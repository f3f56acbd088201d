/**
 * The config file (`PRICEPOINT_CONFIG`, JSON or YAML): its schema is built from the settings table
 * (settings.ts) plus the tiers, and a bad entry is named by its path in the file.
 */
import { readFileSync } from 'node:fs';
import { type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parse as parseYaml } from 'yaml';
import type { TierOverride } from '../domain/limits/tiers.js';
import type { Tariff } from '../domain/money/tariff.js';
import {
  parseTariffs,
  TariffConfigError,
  type TariffEntry,
  TariffSchema,
} from '../domain/money/tariff-config.js';
import { ConfigError } from './setting-kinds.js';
import { SETTINGS } from './settings.js';

const NAME = '^[a-z][a-z0-9_-]{0,31}$';
const CURRENCY = '^[A-Z0-9]{2,10}$';
const SYMBOL = '^[A-Za-z0-9._-]{1,32}$';

/** `fx:` of the config file: per currency, per currency it converts into, the FX series' symbol. */
export type FxPairs = Readonly<Record<string, Readonly<Record<string, string>>>>;

const LimitSchema = Type.Object(
  {
    name: Type.String({ pattern: NAME }),
    limit: Type.Integer({ minimum: 1 }),
    windowSeconds: Type.Integer({ minimum: 1, maximum: 31_536_000 }),
  },
  { additionalProperties: false },
);

const TierSchema = Type.Object(
  {
    limits: Type.Optional(Type.Array(LimitSchema, { minItems: 1, maxItems: 8 })),
    countPer: Type.Optional(Type.Union([Type.Literal('key'), Type.Literal('key+ip')])),
    kinds: Type.Optional(Type.Union([Type.Array(Type.String({ minLength: 1 })), Type.Null()])),
    historyDays: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
    // Open event streams per instance, counted per countPer (docs/events.md).
    streams: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    // Whether a key may rotate itself (docs/keys-and-tiers.md, "Rotating your own key").
    selfRotate: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const SignupSchema = Type.Object(
  {
    tier: Type.String({ pattern: NAME }),
    scopes: Type.Optional(
      Type.Array(Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('admin')]), {
        minItems: 1,
        maxItems: 3,
      }),
    ),
    perAddress: Type.Optional(
      Type.Object(
        {
          limit: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
          windowSeconds: Type.Integer({ minimum: 1, maximum: 31_536_000 }),
        },
        { additionalProperties: false },
      ),
    ),
    // A duration as operators type them: 30d, 12h.
    keyExpiresIn: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}[smhd]$' })),
  },
  { additionalProperties: false },
);

/** `signup:` of the config file as written. */
export interface SignupEntry {
  readonly tier: string;
  readonly scopes?: readonly ('read' | 'write' | 'admin')[];
  readonly perAddress?: { readonly limit: number; readonly windowSeconds: number };
  readonly keyExpiresIn?: string;
}

const fileSettings: Readonly<Record<string, TSchema>> = Object.fromEntries(
  Object.values(SETTINGS).flatMap((setting) =>
    setting.file === undefined ? [] : [[setting.file, Type.Optional(setting.kind.schema)]],
  ),
);

const FileSchema = Type.Object(
  {
    ...fileSettings,
    // Without additionalProperties: false, a Record lets keys that miss the pattern through unchecked.
    tiers: Type.Optional(
      Type.Record(Type.String({ pattern: NAME }), TierSchema, { additionalProperties: false }),
    ),
    // Each source is checked by its connector (../sources/source-config.ts), which names the field.
    sources: Type.Optional(
      Type.Record(Type.String({ pattern: NAME }), Type.Unknown(), { additionalProperties: false }),
    ),
    // The FX series that converts each pair (docs/data-model.md, "Converted prices").
    fx: Type.Optional(
      Type.Record(
        Type.String({ pattern: CURRENCY }),
        Type.Record(Type.String({ pattern: CURRENCY }), Type.String({ pattern: SYMBOL }), {
          additionalProperties: false,
        }),
        { additionalProperties: false },
      ),
    ),
    // Checked by ../mqtt/mqtt-config.ts, which names the field (docs/mqtt.md).
    mqtt: Type.Optional(Type.Unknown()),
    // Open sign-up for one tier (docs/invitations.md "Open sign-up"); the tier is checked in config.ts.
    signup: Type.Optional(SignupSchema),
    // Named tariffs for tariff= (docs/tariffs.md).
    tariffs: Type.Optional(
      Type.Record(Type.String({ pattern: NAME }), TariffSchema, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);

/** What a valid file holds: settings by file key, and tiers by name. */
export interface FileSettings {
  readonly values: Readonly<Record<string, unknown>>;
  readonly tiers: Readonly<Record<string, TierOverride>>;
  /** The `sources:` entries as written, checked by `parseSources`. */
  readonly sources?: Readonly<Record<string, unknown>>;
  /** The `fx:` pairs as written. */
  readonly fx?: FxPairs;
  /** The `tariffs:` by name, checked (docs/tariffs.md). */
  readonly tariffs?: Readonly<Record<string, Tariff>>;
  /** The `mqtt:` entry as written, checked by `parseMqtt`. */
  readonly mqtt?: unknown;
  /** The `signup:` entry, its tier not yet checked against the tiers. */
  readonly signup?: SignupEntry;
}

/** Reads and checks the file at the absolute `path`; an empty file sets nothing. */
export function readConfigFile(path: string): FileSettings {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`PRICEPOINT_CONFIG: cannot read ${path}: ${(error as Error).message}`);
  }
  let data: unknown;
  try {
    data = parseYaml(text); // YAML is a superset of JSON, so this reads both
  } catch (error) {
    throw new ConfigError(
      `PRICEPOINT_CONFIG: ${path} is neither valid JSON nor YAML: ${(error as Error).message}`,
    );
  }
  if (data === null || data === undefined) return { values: {}, tiers: {} };
  const first = Value.Errors(FileSchema, data).First();
  if (first !== undefined) {
    const where = first.path.replace(/^\//, '').replaceAll('/', '.') || '(top level)';
    throw new ConfigError(`PRICEPOINT_CONFIG: ${path}: setting "${where}" ${first.message.toLowerCase()}`);
  }
  const {
    tiers = {},
    sources,
    fx,
    tariffs: tariffEntries,
    mqtt,
    signup,
    ...values
  } = data as {
    mqtt?: unknown;
    signup?: SignupEntry;
    tiers?: Record<string, TierOverride>;
    sources?: Record<string, unknown>;
    fx?: FxPairs;
    tariffs?: Record<string, TariffEntry>;
  };
  // A limit is known to clients by its name alone (RateLimit-Policy, violated-policies).
  for (const [tier, { limits = [] }] of Object.entries(tiers)) {
    const names = limits.map((limit) => limit.name);
    const twice = names.find((name, i) => names.indexOf(name) !== i);
    if (twice !== undefined) {
      throw new ConfigError(
        `PRICEPOINT_CONFIG: ${path}: setting "tiers.${tier}.limits" has two limits named "${twice}"`,
      );
    }
  }
  let tariffs: Record<string, Tariff> | undefined;
  try {
    tariffs = tariffEntries === undefined ? undefined : parseTariffs(tariffEntries);
  } catch (error) {
    if (!(error instanceof TariffConfigError)) throw error;
    throw new ConfigError(`PRICEPOINT_CONFIG: ${path}: ${error.message}`);
  }
  return {
    values,
    tiers,
    ...(sources !== undefined && { sources }),
    ...(fx !== undefined && { fx }),
    ...(tariffs !== undefined && { tariffs }),
    ...(mqtt !== undefined && { mqtt }),
    ...(signup !== undefined && { signup }),
  };
}
