/**
 * The one place that reads `process.env` and the config file (`PRICEPOINT_CONFIG`, JSON or YAML).
 * Everything is validated here; a bad setting stops the start with a message that names it.
 * Precedence: environment over file over defaults. Tiers are merged over the defaults by name.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { isAbsolute, resolve } from 'node:path';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parse as parseYaml } from 'yaml';
import { DEFAULT_TIERS, mergeTiers, type Tier } from '../domain/limits/tiers.js';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** What rate limiting does while Redis is unreachable (DESIGN section 7). */
export const REDIS_FALLBACKS = ['local', 'open', 'closed'] as const;
export type RedisFallback = (typeof REDIS_FALLBACKS)[number];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const LimitSchema = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z][a-z0-9_-]{0,31}$' }),
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
  },
  { additionalProperties: false },
);

const FileSchema = Type.Object(
  {
    host: Type.Optional(Type.String({ minLength: 1 })),
    port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
    dataDir: Type.Optional(Type.String({ minLength: 1 })),
    redisPrefix: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9:._-]{1,32}$' })),
    redisFallback: Type.Optional(Type.Union(REDIS_FALLBACKS.map((f) => Type.Literal(f)))),
    logLevel: Type.Optional(Type.Union(LOG_LEVELS.map((l) => Type.Literal(l)))),
    tlsCert: Type.Optional(Type.String({ minLength: 1 })),
    tlsKey: Type.Optional(Type.String({ minLength: 1 })),
    insecureHttp: Type.Optional(Type.Boolean()),
    trustProxy: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    devData: Type.Optional(Type.Boolean()),
    // Without additionalProperties: false, a Record lets keys that miss the pattern through unchecked.
    tiers: Type.Optional(
      Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_-]{0,31}$' }), TierSchema, {
        additionalProperties: false,
      }),
    ),
  },
  { additionalProperties: false },
);
type FileSettings = Static<typeof FileSchema>;

export type TlsSettings =
  | { readonly mode: 'self-signed' }
  | { readonly mode: 'files'; readonly certFile: string; readonly keyFile: string }
  | { readonly mode: 'off' };

export interface Config {
  readonly dataDir: string;
  /** SQLite file; `:memory:` in tests. */
  readonly databasePath: string;
  readonly host: string;
  readonly port: number;
  readonly tls: TlsSettings;
  /** Proxy addresses whose `X-Forwarded-For` is believed; empty means none. */
  readonly trustProxy: readonly string[];
  readonly logLevel: LogLevel;
  readonly tiers: Readonly<Record<string, Tier>>;
  /** Optional server secret: stored key hashes become HMACs. */
  readonly keySecret: string | undefined;
  /** Load the development data set and the demo key. */
  readonly devData: boolean;
  /** Failed authentications allowed per client address and minute. */
  readonly authFailuresPerMinute: number;
  /**
   * How long a verified key is trusted in process (`PRICEPOINT_KEY_CACHE_MS`). The default 2 s keeps
   * revocations within 5 s even when no notice arrives (SQLite and the CLI, or Redis away); longer
   * relies on the Redis notices alone.
   */
  readonly keyCacheMs: number;
  /**
   * Connections one client address may hold open at once (`PRICEPOINT_MAX_CONNECTIONS_PER_ADDRESS`,
   * 0: no bound); addresses in `trustProxy` are exempt. Past it a new connection is closed at once.
   */
  readonly maxConnectionsPerAddress: number;
  /** How long SIGTERM waits for requests in flight. */
  readonly shutdownGraceMs: number;
  /** PostgreSQL for keys and prices instead of SQLite (DESIGN section 7); the URL holds credentials, never log it. */
  readonly databaseUrl: string | undefined;
  /** Redis for rate-limit counters and notices between instances. */
  readonly redisUrl: string | undefined;
  /** Prefix of every Redis key and channel, so several deployments can share one Redis. */
  readonly redisPrefix: string;
  /** What rate limiting does while Redis is unreachable. */
  readonly redisFallback: RedisFallback;
  /**
   * How long a Redis command may take before the instance treats Redis as away
   * (`PRICEPOINT_REDIS_TIMEOUT_MS`). A command that times out may still have been counted in Redis,
   * so under load a short timeout can let more than a limit through across instances.
   */
  readonly redisTimeoutMs: number;
  /**
   * How long days and the series list read from the database are reused (0: never). SQLite tells
   * of every change, also by other processes (its change token), so there they live until one;
   * on PostgreSQL change notices drop them, and 5 s bound what a lost notice can delay
   * (`PRICEPOINT_READ_CACHE_MS`).
   */
  readonly readCacheMs: number;
}

type Env = Readonly<Record<string, string | undefined>>;

/** Every environment setting; any other `PRICEPOINT_*` name is a typo and stops the start. */
export const ENV_SETTINGS = [
  'PRICEPOINT_CONFIG',
  'PRICEPOINT_DATA_DIR',
  'PRICEPOINT_HOST',
  'PRICEPOINT_PORT',
  'PRICEPOINT_TLS_CERT',
  'PRICEPOINT_TLS_KEY',
  'PRICEPOINT_INSECURE_HTTP',
  'PRICEPOINT_TRUST_PROXY',
  'PRICEPOINT_DEV_DATA',
  'PRICEPOINT_LOG_LEVEL',
  'PRICEPOINT_KEY_SECRET',
  'PRICEPOINT_AUTH_FAILURES_PER_MINUTE',
  'PRICEPOINT_MAX_CONNECTIONS_PER_ADDRESS',
  'PRICEPOINT_SHUTDOWN_GRACE_SECONDS',
  'PRICEPOINT_DATABASE_URL',
  'PRICEPOINT_REDIS_URL',
  'PRICEPOINT_REDIS_PREFIX',
  'PRICEPOINT_REDIS_FALLBACK',
  'PRICEPOINT_REDIS_TIMEOUT_MS',
  'PRICEPOINT_KEY_CACHE_MS',
  'PRICEPOINT_READ_CACHE_MS',
] as const;

/** A connection URL with one of `schemes`; the message never repeats the URL (it may hold a password). */
function urlSetting(env: Env, name: string, schemes: readonly string[]): string | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  let protocol: string;
  try {
    protocol = new URL(value).protocol.slice(0, -1);
  } catch {
    throw new ConfigError(`${name}: not a URL (expected ${schemes.map((s) => `${s}://...`).join(' or ')})`);
  }
  if (!schemes.includes(protocol)) {
    throw new ConfigError(`${name}: must start with ${schemes.map((s) => `${s}://`).join(' or ')}`);
  }
  return value;
}

function readFile(path: string): FileSettings {
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
  if (data === null || data === undefined) return {};
  const first = Value.Errors(FileSchema, data).First();
  if (first !== undefined) {
    const where = first.path.replace(/^\//, '').replaceAll('/', '.') || '(top level)';
    throw new ConfigError(`PRICEPOINT_CONFIG: ${path}: setting "${where}" ${first.message.toLowerCase()}`);
  }
  const settings = data as FileSettings;
  // A limit is known to clients by its name alone (RateLimit-Policy, violated-policies).
  for (const [tier, { limits = [] }] of Object.entries(settings.tiers ?? {})) {
    const names = limits.map((limit) => limit.name);
    const twice = names.find((name, i) => names.indexOf(name) !== i);
    if (twice !== undefined) {
      throw new ConfigError(
        `PRICEPOINT_CONFIG: ${path}: setting "tiers.${tier}.limits" has two limits named "${twice}"`,
      );
    }
  }
  return settings;
}

/** Fastify's named ranges, an IP address, or a CIDR range: what `trustProxy` accepts. */
function isProxyRange(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
  const [address = '', prefix, extra] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  const bits = Number(prefix);
  return /^\d{1,3}$/.test(prefix) && bits >= 1 && bits <= (version === 4 ? 32 : 128);
}

function integerSetting(env: Env, name: string, min: number, max: number): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
    throw new ConfigError(`${name}: must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function booleanSetting(env: Env, name: string): boolean | undefined {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return undefined;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name}: must be true or false, got "${env[name]}"`);
}

function listSetting(env: Env, name: string): string[] | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Reads and validates every setting. `overrides` come from the CLI (`--dev-data`) and tests.
 * @example const config = loadConfig(process.env, { devData: true })
 */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const unknown = Object.keys(env).find(
    (name) => name.startsWith('PRICEPOINT_') && !(ENV_SETTINGS as readonly string[]).includes(name),
  );
  if (unknown !== undefined) {
    throw new ConfigError(
      `${unknown}: not a Pricepoint setting; the settings are ${ENV_SETTINGS.join(', ')}`,
    );
  }
  const cwd = process.cwd();
  const configPath = env.PRICEPOINT_CONFIG;
  const file = configPath ? readFile(resolve(cwd, configPath)) : {};

  const logLevel = env.PRICEPOINT_LOG_LEVEL || file.logLevel || 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`PRICEPOINT_LOG_LEVEL: must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }

  const dataDir = resolve(cwd, env.PRICEPOINT_DATA_DIR || file.dataDir || '.pricepoint');
  const certFile = env.PRICEPOINT_TLS_CERT || file.tlsCert;
  const keyFile = env.PRICEPOINT_TLS_KEY || file.tlsKey;
  const insecureHttp = booleanSetting(env, 'PRICEPOINT_INSECURE_HTTP') ?? file.insecureHttp ?? false;
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new ConfigError('PRICEPOINT_TLS_CERT and PRICEPOINT_TLS_KEY: set both or neither');
  }
  if (insecureHttp && certFile !== undefined) {
    throw new ConfigError('PRICEPOINT_INSECURE_HTTP: cannot be true while PRICEPOINT_TLS_CERT is set');
  }
  const tls: TlsSettings = insecureHttp
    ? { mode: 'off' }
    : certFile !== undefined && keyFile !== undefined
      ? { mode: 'files', certFile: resolve(cwd, certFile), keyFile: resolve(cwd, keyFile) }
      : { mode: 'self-signed' };

  let tiers: Record<string, Tier>;
  try {
    tiers = mergeTiers(DEFAULT_TIERS, file.tiers ?? {});
  } catch (error) {
    throw new ConfigError(`PRICEPOINT_CONFIG: ${(error as Error).message}`);
  }

  // Checked here, or Fastify refuses it later with a message that does not name the setting.
  const proxyFromEnv = listSetting(env, 'PRICEPOINT_TRUST_PROXY');
  const trustProxy = proxyFromEnv ?? file.trustProxy ?? [];
  const badProxy = trustProxy.find((entry) => !isProxyRange(entry));
  if (badProxy !== undefined) {
    const setting = proxyFromEnv
      ? 'PRICEPOINT_TRUST_PROXY'
      : `PRICEPOINT_CONFIG: ${resolve(cwd, configPath ?? '')}: setting "trustProxy"`;
    throw new ConfigError(`${setting}: "${badProxy}" is not an IP address or CIDR range`);
  }

  const keySecret = env.PRICEPOINT_KEY_SECRET || undefined;
  if (keySecret !== undefined && keySecret.length < 16) {
    throw new ConfigError('PRICEPOINT_KEY_SECRET: must be at least 16 characters');
  }

  const redisFallback = env.PRICEPOINT_REDIS_FALLBACK || file.redisFallback || 'local';
  if (!(REDIS_FALLBACKS as readonly string[]).includes(redisFallback)) {
    throw new ConfigError(
      `PRICEPOINT_REDIS_FALLBACK: must be one of ${REDIS_FALLBACKS.join(', ')}, got "${redisFallback}"`,
    );
  }
  const redisPrefix = env.PRICEPOINT_REDIS_PREFIX || file.redisPrefix || 'pricepoint';
  if (!/^[A-Za-z0-9:._-]{1,32}$/.test(redisPrefix)) {
    throw new ConfigError('PRICEPOINT_REDIS_PREFIX: 1 to 32 letters, digits or : . _ -');
  }

  const config: Config = {
    dataDir,
    databasePath: resolve(dataDir, 'pricepoint.db'),
    host: env.PRICEPOINT_HOST || file.host || '127.0.0.1',
    port: integerSetting(env, 'PRICEPOINT_PORT', 0, 65535) ?? file.port ?? 8443,
    tls,
    trustProxy,
    logLevel: logLevel as LogLevel,
    tiers,
    keySecret,
    devData: booleanSetting(env, 'PRICEPOINT_DEV_DATA') ?? file.devData ?? false,
    authFailuresPerMinute: integerSetting(env, 'PRICEPOINT_AUTH_FAILURES_PER_MINUTE', 1, 1_000_000) ?? 20,
    keyCacheMs: integerSetting(env, 'PRICEPOINT_KEY_CACHE_MS', 0, 3_600_000) ?? 2000,
    maxConnectionsPerAddress:
      integerSetting(env, 'PRICEPOINT_MAX_CONNECTIONS_PER_ADDRESS', 0, 1_000_000) ?? 256,
    shutdownGraceMs: (integerSetting(env, 'PRICEPOINT_SHUTDOWN_GRACE_SECONDS', 1, 3600) ?? 10) * 1000,
    databaseUrl: urlSetting(env, 'PRICEPOINT_DATABASE_URL', ['postgres', 'postgresql']),
    redisUrl: urlSetting(env, 'PRICEPOINT_REDIS_URL', ['redis', 'rediss']),
    redisPrefix,
    redisFallback: redisFallback as RedisFallback,
    redisTimeoutMs: integerSetting(env, 'PRICEPOINT_REDIS_TIMEOUT_MS', 10, 60_000) ?? 200,
    readCacheMs:
      integerSetting(env, 'PRICEPOINT_READ_CACHE_MS', 0, 3_600_000) ??
      (env.PRICEPOINT_DATABASE_URL ? 5_000 : 3_600_000),
    ...overrides,
  };
  if (!isAbsolute(config.databasePath) && config.databasePath !== ':memory:') {
    throw new ConfigError('databasePath: must be absolute');
  }
  return config;
}
