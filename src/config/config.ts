/**
 * The one place that reads `process.env` and the config file (`PRICEPOINT_CONFIG`, JSON or YAML).
 * The settings are declared in settings.ts; this reads each from the environment, else the file, else
 * its default, then derives what the server uses (TLS mode, database path, tiers, zone rule sources).
 * A bad setting stops the start with a message that names it. Tiers are merged over the defaults by name.
 */
import { isAbsolute, resolve } from 'node:path';
import leven from 'leven';
import { devTiers, withDevConfig } from '../dev-data/dev-config.js';
import { DEFAULT_SIGNUP_PER_ADDRESS, type SignupRules } from '../domain/keys/signup-rules.js';
import { DEFAULT_TIERS, mergeTiers, type Tier, type TierOverride } from '../domain/limits/tiers.js';
import type { Tariff } from '../domain/money/tariff.js';
import { parseDuration } from '../domain/time/duration.js';
import { type TzSourceOptions, tzFolderProblem } from '../domain/time/tz-source.js';
import { checkMqttTariffs, type MqttConfig, MqttConfigError, parseMqtt } from '../mqtt/mqtt-config.js';
import { parseSources, type SourceConfig, SourceConfigError } from '../sources/source-config.js';
import { type FxPairs, readConfigFile, type SignupEntry } from './config-file.js';
import type { Env } from './environment.js';
import { ConfigError } from './setting-kinds.js';
import { type Chosen, ENV_SETTINGS, SETTINGS, type Settings } from './settings.js';

export { ConfigError } from './setting-kinds.js';
export {
  ENV_SETTINGS,
  LOG_LEVELS,
  type LogLevel,
  REDIS_FALLBACKS,
  type RedisFallback,
  type Settings,
} from './settings.js';

export type TlsSettings =
  | { readonly mode: 'self-signed' }
  | { readonly mode: 'files'; readonly certFile: string; readonly keyFile: string }
  | { readonly mode: 'off' };

/** Settings read as they are; the ones below replace them in `Config`. */
type ReplacedInConfig =
  | 'configFile'
  | 'tlsCert'
  | 'tlsKey'
  | 'insecureHttp'
  | 'shutdownGraceSeconds'
  | 'tzDir';

/** What the server, the CLI and the tests use; docs/settings.md says what each setting does. */
export type Config = Omit<Settings, ReplacedInConfig> & {
  /** Absolute. */
  readonly dataDir: string;
  /** SQLite file; `:memory:` in tests. */
  readonly databasePath: string;
  readonly tls: TlsSettings;
  readonly tiers: Readonly<Record<string, Tier>>;
  /** How long SIGTERM waits for requests in flight. */
  readonly shutdownGraceMs: number;
  /**
   * Where zone rules may come from (docs/operating.md "Time zone data"): `PRICEPOINT_TZDIR`, used whatever its
   * release, and the system's zoneinfo (`TZDIR`, else /usr/share/zoneinfo).
   */
  readonly tzData: TzSourceOptions;
  /** The config file's `sources:` (docs/sources.md); none without a file. */
  readonly sources: readonly SourceConfig[];
  /** The config file's `fx:` (docs/data-model.md, "Converted prices"); none without a file. */
  readonly fx: FxPairs;
  /** The config file's `tariffs:` by name (docs/tariffs.md); none without a file. */
  readonly tariffs: Readonly<Record<string, Tariff>>;
  /** The config file's `mqtt:` (docs/mqtt.md); absent without one: nothing is published. */
  readonly mqtt?: MqttConfig;
  /** The config file's `signup:` (docs/invitations.md "Open sign-up"); absent: sign-up is off. */
  readonly signup?: SignupRules;
};

/** Each setting from the environment, else the file, else its default: the environment wins. */
function readSettings(
  env: Env,
  cwd: string,
): {
  settings: Settings;
  tiers: Record<string, TierOverride>;
  sources: SourceConfig[];
  fx: FxPairs;
  tariffs: Readonly<Record<string, Tariff>>;
  mqtt: MqttConfig | undefined;
  signup: SignupEntry | undefined;
  filePath: string | undefined;
} {
  const configFile = SETTINGS.configFile.kind.parse(env.PRICEPOINT_CONFIG ?? '', 'PRICEPOINT_CONFIG');
  const filePath = configFile === undefined ? undefined : resolve(cwd, configFile);
  const file = filePath === undefined ? undefined : readConfigFile(filePath);
  const chosen: Record<string, unknown> = {};
  const defaults: [string, (chosen: Chosen) => unknown][] = [];
  for (const [name, setting] of Object.entries(SETTINGS)) {
    const raw = env[setting.env];
    const fromEnv = raw === undefined ? undefined : setting.kind.parse(raw, setting.env);
    const fromFile = setting.file === undefined ? undefined : file?.values[setting.file];
    const value: unknown = fromEnv ?? fromFile;
    if (value !== undefined) {
      // The kind's own value: its parse made it, or the file schema (the kind's schema) let it through.
      const problem = setting.kind.problem?.(value as never);
      if (problem !== undefined) {
        const where =
          fromEnv !== undefined ? setting.env : `PRICEPOINT_CONFIG: ${filePath}: setting "${setting.file}"`;
        throw new ConfigError(`${where}: ${problem}`);
      }
      chosen[name] = value;
    } else if (typeof setting.default === 'function') {
      defaults.push([name, setting.default as (chosen: Chosen) => unknown]);
    } else {
      chosen[name] = setting.default;
    }
  }
  // Defaults that depend on other settings, once those are known.
  for (const [name, byOthers] of defaults) chosen[name] = byOthers(chosen);
  let sources: SourceConfig[] = [];
  try {
    sources = parseSources(file?.sources, env);
  } catch (error) {
    if (!(error instanceof SourceConfigError)) throw error;
    throw new ConfigError(`PRICEPOINT_CONFIG: ${filePath}: ${error.message}`);
  }
  let mqtt: MqttConfig | undefined;
  try {
    mqtt = parseMqtt(file?.mqtt, env);
  } catch (error) {
    if (!(error instanceof MqttConfigError)) throw error;
    throw new ConfigError(`PRICEPOINT_CONFIG: ${filePath}: ${error.message}`);
  }
  return {
    mqtt,
    signup: file?.signup,
    filePath,
    settings: chosen as Settings,
    tiers: { ...file?.tiers },
    sources,
    fx: file?.fx ?? {},
    tariffs: file?.tariffs ?? {},
  };
}

/** `signup:` as the services use it; its tier must be one of `tiers`. */
function signupRules(
  entry: SignupEntry | undefined,
  tiers: Readonly<Record<string, Tier>>,
  filePath: string | undefined,
): SignupRules | undefined {
  if (entry === undefined) return undefined;
  if (!Object.hasOwn(tiers, entry.tier)) {
    throw new ConfigError(
      `PRICEPOINT_CONFIG: ${filePath}: setting "signup.tier" must name a tier (${Object.keys(tiers).join(', ')}), not "${entry.tier}"`,
    );
  }
  return {
    tier: entry.tier,
    scopes: entry.scopes === undefined ? ['read'] : [...new Set(entry.scopes)],
    perAddress: entry.perAddress ?? DEFAULT_SIGNUP_PER_ADDRESS,
    keyExpiresInMs: entry.keyExpiresIn === undefined ? null : (parseDuration(entry.keyExpiresIn) ?? null),
  };
}

function tlsSettings(settings: Settings, cwd: string): TlsSettings {
  const { tlsCert, tlsKey, insecureHttp } = settings;
  if ((tlsCert === undefined) !== (tlsKey === undefined)) {
    throw new ConfigError('PRICEPOINT_TLS_CERT and PRICEPOINT_TLS_KEY: set both or neither');
  }
  if (insecureHttp && tlsCert !== undefined) {
    throw new ConfigError('PRICEPOINT_INSECURE_HTTP: cannot be true while PRICEPOINT_TLS_CERT is set');
  }
  if (insecureHttp) return { mode: 'off' };
  if (tlsCert !== undefined && tlsKey !== undefined) {
    return { mode: 'files', certFile: resolve(cwd, tlsCert), keyFile: resolve(cwd, tlsKey) };
  }
  return { mode: 'self-signed' };
}

/** `PRICEPOINT_TZDIR` must be a folder of compiled zone files; `TZDIR` is the system's, as for libc. */
function tzDataSetting(tzDir: string | undefined, env: Env, cwd: string): TzSourceOptions {
  const systemDir = env.TZDIR || '/usr/share/zoneinfo';
  if (tzDir === undefined) return { systemDir };
  const setting = resolve(cwd, tzDir);
  const problem = tzFolderProblem(setting);
  if (problem !== undefined) {
    throw new ConfigError(
      `PRICEPOINT_TZDIR: must be a folder of compiled time zone files (TZif): ${problem}`,
    );
  }
  return { setting, systemDir };
}

/**
 * The setting a `PRICEPOINT_` variable that is none looks like a misspelling of: at most two edits
 * away, or the setting cut or extended at an underscore (`PRICEPOINT_DATABASE`). Any other name is
 * left alone, for the clients' own variables (`PRICEPOINT_URL`, `PRICEPOINT_API_KEY`): docs/settings.md.
 * @example misspeltSetting('PRICEPOINT_PROT') // 'PRICEPOINT_PORT'
 */
export function misspeltSetting(name: string): string | undefined {
  if (!name.startsWith('PRICEPOINT_') || ENV_SETTINGS.includes(name)) return undefined;
  const near = (setting: string) =>
    leven(name, setting) <= 2 || setting.startsWith(`${name}_`) || name.startsWith(`${setting}_`);
  return ENV_SETTINGS.find(near);
}

/**
 * Reads and validates every setting. `overrides` come from the CLI (`--dev-data`) and tests.
 * @example const config = loadConfig(process.env, { devData: true })
 */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  for (const name of Object.keys(env)) {
    const meant = misspeltSetting(name);
    if (meant !== undefined) {
      throw new ConfigError(
        `${name}: not a Pricepoint setting; did you mean ${meant}? The settings are ${ENV_SETTINGS.join(', ')}`,
      );
    }
  }
  const cwd = process.cwd();
  const {
    settings,
    tiers: tierOverrides,
    sources,
    fx,
    tariffs,
    mqtt,
    signup,
    filePath,
  } = readSettings(env, cwd);
  const tls = tlsSettings(settings, cwd);
  let tiers: Record<string, Tier>;
  try {
    const devData = overrides.devData ?? settings.devData;
    tiers = mergeTiers(devData ? devTiers(DEFAULT_TIERS) : DEFAULT_TIERS, tierOverrides);
  } catch (error) {
    throw new ConfigError(`PRICEPOINT_CONFIG: ${(error as Error).message}`);
  }
  const { configFile, tlsCert, tlsKey, insecureHttp, shutdownGraceSeconds, tzDir, ...plain } = settings;
  const dataDir = resolve(cwd, settings.dataDir);
  const config: Config = {
    ...plain,
    dataDir,
    databasePath: resolve(dataDir, 'pricepoint.db'),
    tls,
    tiers,
    shutdownGraceMs: shutdownGraceSeconds * 1000,
    tzData: tzDataSetting(tzDir, env, cwd),
    sources,
    fx,
    tariffs,
    ...(mqtt !== undefined && { mqtt }),
    ...(signup !== undefined && { signup: signupRules(signup, tiers, filePath) as SignupRules }),
    ...overrides,
  };
  if (!isAbsolute(config.databasePath) && config.databasePath !== ':memory:') {
    throw new ConfigError('databasePath: must be absolute');
  }
  const final = config.devData ? withDevConfig(config) : config;
  // Only now: the development data set's tariffs apply where the file has none.
  try {
    checkMqttTariffs(final.mqtt, Object.keys(final.tariffs));
  } catch (error) {
    if (!(error instanceof MqttConfigError)) throw error;
    throw new ConfigError(`PRICEPOINT_CONFIG: ${filePath}: ${error.message}`);
  }
  return final;
}
