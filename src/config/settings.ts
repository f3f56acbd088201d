/**
 * Every setting, declared once: its environment name, its config-file key (if the file may set it),
 * the kind of value it holds, its default and what it means. The `Config` type, the checks of both
 * sources, the defaults and docs/settings.md's settings table (`npm run docs:settings`) all follow from it.
 * The order here is the order of the table in docs/settings.md.
 */
import {
  boolean,
  integer,
  matching,
  oneOf,
  proxyRanges,
  publicUrl,
  type SettingKind,
  secret,
  text,
  url,
} from './setting-kinds.js';

/** What rate limiting does while Redis is unreachable (docs/scale-out.md). */
export const REDIS_FALLBACKS = ['local', 'open', 'closed'] as const;
export type RedisFallback = (typeof REDIS_FALLBACKS)[number];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The values chosen so far, for a default that depends on another setting. */
export type Chosen = Readonly<Record<string, unknown>>;

export interface Setting<T, Optional extends boolean = boolean> {
  readonly env: `PRICEPOINT_${string}`;
  /** Its key in the config file; undefined: only the environment sets it. */
  readonly file?: string | undefined;
  readonly kind: SettingKind<T>;
  /** Without a default, an unset setting is undefined. */
  readonly optional: Optional;
  readonly default?: T | ((chosen: Chosen) => T) | undefined;
  /** The default as docs/settings.md shows it, where the value alone does not say it well. */
  readonly shownDefault?: string | undefined;
  /** What it does, for docs/settings.md (Markdown). */
  readonly meaning: string;
}

type Declaration<T> = Omit<Setting<T>, 'optional' | 'default'>;

function withDefault<T>(
  declaration: Declaration<T> & { readonly default: T | ((chosen: Chosen) => T) },
): Setting<T, false> {
  return { ...declaration, optional: false };
}

function optional<T>(declaration: Declaration<T>): Setting<T, true> {
  return { ...declaration, optional: true };
}

export const SETTINGS = {
  configFile: optional({
    env: 'PRICEPOINT_CONFIG',
    kind: text('a path to a JSON or YAML file'),
    meaning: 'the config file: the settings that have a file key, and the tiers (below)',
  }),
  dataDir: withDefault({
    env: 'PRICEPOINT_DATA_DIR',
    file: 'dataDir',
    kind: text('a path'),
    default: '.pricepoint',
    shownDefault: '`./.pricepoint`',
    meaning:
      "SQLite database and the generated certificate. The folder is made owner-only (0700) and the database with its `-wal` and `-shm` 0600, at every start and whatever the umask (a shared folder such as `/tmp`, or another user's, is left as it is)",
  }),
  host: withDefault({
    env: 'PRICEPOINT_HOST',
    file: 'host',
    kind: text('an address'),
    default: '127.0.0.1',
    meaning: 'address to listen on (`0.0.0.0` for every interface)',
  }),
  port: withDefault({
    env: 'PRICEPOINT_PORT',
    file: 'port',
    kind: integer(0, 65535),
    default: 8443,
    meaning: 'port to listen on (0: any free port)',
  }),
  tlsCert: optional({
    env: 'PRICEPOINT_TLS_CERT',
    file: 'tlsCert',
    kind: text('a path'),
    meaning:
      'PEM file of your certificate, set together with `PRICEPOINT_TLS_KEY`; without them a self-signed localhost certificate is generated on first start and kept in the data folder',
  }),
  tlsKey: optional({
    env: 'PRICEPOINT_TLS_KEY',
    file: 'tlsKey',
    kind: text('a path'),
    meaning: 'PEM file of the key of that certificate',
  }),
  insecureHttp: withDefault({
    env: 'PRICEPOINT_INSECURE_HTTP',
    file: 'insecureHttp',
    kind: boolean(),
    default: false,
    meaning: 'plain HTTP, only behind a TLS-terminating proxy; refused together with a certificate',
  }),
  publicUrl: optional({
    env: 'PRICEPOINT_PUBLIC_URL',
    file: 'publicUrl',
    kind: publicUrl(),
    meaning:
      'the address customers reach this server at (`https://prices.example.com`), for the links the server hands out (invitations, docs/invitations.md); unset: the address each request came to, and for the command line `https://localhost:PORT`',
  }),
  trustProxy: withDefault<readonly string[]>({
    env: 'PRICEPOINT_TRUST_PROXY',
    file: 'trustProxy',
    kind: proxyRanges(),
    default: [],
    meaning: 'proxies whose `X-Forwarded-For` gives the client address',
  }),
  devData: withDefault({
    env: 'PRICEPOINT_DEV_DATA',
    file: 'devData',
    kind: boolean(),
    default: false,
    meaning: 'load the development data set and the demo key (`serve --dev-data` does the same)',
  }),
  logLevel: withDefault<LogLevel>({
    env: 'PRICEPOINT_LOG_LEVEL',
    file: 'logLevel',
    kind: oneOf(LOG_LEVELS),
    default: 'info',
    meaning: 'the least severe log lines written',
  }),
  keySecret: optional({
    env: 'PRICEPOINT_KEY_SECRET',
    kind: secret(16),
    meaning: 'stored key hashes become HMACs with it. Changing it invalidates every key',
  }),
  authFailuresPerMinute: withDefault({
    env: 'PRICEPOINT_AUTH_FAILURES_PER_MINUTE',
    kind: integer(1, 1_000_000),
    default: 20,
    meaning: 'failed authentications allowed per client address (IPv6 per /64) and minute',
  }),
  auditRetentionDays: withDefault({
    env: 'PRICEPOINT_AUDIT_RETENTION_DAYS',
    file: 'auditRetentionDays',
    kind: integer(1, 36_500),
    default: 400,
    meaning:
      'how many days the audit log of admin actions keeps an entry; older ones are deleted at most an hour after they pass it ([audit.md](audit.md))',
  }),
  maxConnectionsPerAddress: withDefault({
    env: 'PRICEPOINT_MAX_CONNECTIONS_PER_ADDRESS',
    kind: integer(0, 1_000_000),
    default: 256,
    meaning:
      'connections one client address (IPv6: all of its /64) may hold open at once (0: no bound); past it a new one is closed at once. Addresses in `PRICEPOINT_TRUST_PROXY` are exempt',
  }),
  maxUnsentBytesPerAddress: withDefault({
    env: 'PRICEPOINT_MAX_UNSENT_BYTES_PER_ADDRESS',
    kind: integer(0, 2 ** 40),
    default: 32 * 1024 * 1024,
    shownDefault: '`33554432` (32 MiB)',
    meaning:
      'bytes of answers one client address (IPv6: /64) may leave unread in the server (0: no bound); past it its connections holding the most are closed (see "Decisions"). Addresses in `PRICEPOINT_TRUST_PROXY` are exempt',
  }),
  idleSeconds: withDefault({
    env: 'PRICEPOINT_IDLE_SECONDS',
    kind: integer(1, 3600),
    default: 30,
    meaning:
      'a connection on which nothing moves for this long is closed: one that sends no request, and one whose client stops taking its answer or event stream (a stream resumes with `Last-Event-ID`). A client that reads, however slowly, keeps it',
  }),
  shutdownGraceSeconds: withDefault({
    env: 'PRICEPOINT_SHUTDOWN_GRACE_SECONDS',
    kind: integer(1, 3600),
    default: 10,
    meaning: 'how long SIGTERM waits for requests in flight',
  }),
  databaseUrl: optional({
    env: 'PRICEPOINT_DATABASE_URL',
    // It holds credentials: never log it (url() leaves it out of its messages).
    kind: url(['postgres', 'postgresql']),
    meaning:
      'keys and prices in PostgreSQL instead of SQLite (see "Running several instances"); the schema is migrated at start',
  }),
  databaseTimeoutMs: withDefault({
    env: 'PRICEPOINT_DATABASE_TIMEOUT_MS',
    kind: integer(50, 60_000),
    default: 1000,
    meaning:
      "how long connecting to PostgreSQL, waiting for a pooled connection or one query may take before the instance treats PostgreSQL as away and stops asking it until a background probe finds it back; imports' batches get 10 s more",
  }),
  redisUrl: optional({
    env: 'PRICEPOINT_REDIS_URL',
    kind: url(['redis', 'rediss']),
    meaning: 'rate-limit counters, key revocations and data-change notices shared through Redis',
  }),
  redisPrefix: withDefault({
    env: 'PRICEPOINT_REDIS_PREFIX',
    file: 'redisPrefix',
    kind: matching(/^[A-Za-z0-9:._-]{1,32}$/, '1 to 32 letters, digits or : . _ -'),
    default: 'pricepoint',
    meaning: 'prefix of every Redis key and channel, so deployments can share one Redis',
  }),
  redisFallback: withDefault<RedisFallback>({
    env: 'PRICEPOINT_REDIS_FALLBACK',
    file: 'redisFallback',
    kind: oneOf(REDIS_FALLBACKS),
    default: 'local',
    meaning:
      'what limits do while Redis is away: `local` (per-instance counters), `open` (allow, count nothing) or `closed` (503)',
  }),
  redisTimeoutMs: withDefault({
    env: 'PRICEPOINT_REDIS_TIMEOUT_MS',
    kind: integer(10, 60_000),
    default: 200,
    meaning:
      'how long a Redis command may take before the instance treats Redis as away; raise it on a loaded machine, since a command that timed out may still have been counted, so a short timeout can let more than a limit through across instances',
  }),
  keyCacheMs: withDefault({
    env: 'PRICEPOINT_KEY_CACHE_MS',
    kind: integer(0, 3_600_000),
    // Under the 5 s within which a revocation must be seen, even when no notice arrives.
    default: 2000,
    meaning:
      'how long a verified key is trusted in process; past 5000 a revocation reaches other instances only through Redis notices. On SQLite it does not matter for revocations: a server reads a counter of key changes every second, so one from any process (`keys revoke`) is refused within about a second of being written',
  }),
  readCacheMs: withDefault({
    env: 'PRICEPOINT_READ_CACHE_MS',
    kind: integer(0, 3_600_000),
    // Both engines tell of every change (SQLite's data_version, PostgreSQL's change counter, and
    // change notices), so days live until one; the hour only bounds a cache nothing tells.
    default: 3_600_000,
    meaning:
      'how long days read from the database, and answers built from them, are reused at most; they are dropped earlier when their data changes (0: never reused)',
  }),
  changeCheckMs: withDefault({
    env: 'PRICEPOINT_CHANGE_CHECK_MS',
    kind: integer(100, 3_600_000),
    default: 5_000,
    meaning:
      "PostgreSQL only: how often, at most, an instance under traffic reads the database's change counter, so a price or series change whose notice was lost (Redis away, no Redis, an import beside the servers) is served within this time; SQLite sees every change at once",
  }),
  heavyReadsInFlight: withDefault({
    env: 'PRICEPOINT_HEAVY_READS_IN_FLIGHT',
    kind: integer(1, 64),
    // The event loop is one thread: more at once only makes each wait longer between its turns.
    default: 2,
    meaning:
      'heavy reads (converted, tariffed, ranked or over one unit, not in the answer cache) the instance builds at once; the others wait their turn, client after client (docs/using-the-api.md "Rate limits")',
  }),
  buildThreads: withDefault({
    env: 'PRICEPOINT_BUILD_THREADS',
    kind: integer(0, 16),
    // One thread takes the heavy work off the event loop; more only help with cores to spare.
    default: 1,
    meaning:
      'worker threads that build heavy reads of more than one unit, so the event loop only admits, counts and sends them and light requests never wait behind one; 0 builds them on the event loop (docs/using-the-api.md "Heavy reads in flight")',
  }),
  heavyReadsPerClient: withDefault({
    env: 'PRICEPOINT_HEAVY_READS_PER_CLIENT',
    kind: integer(1, 64),
    default: 2,
    meaning:
      'heavy reads one key builds at once, per client address for tiers counted per key and address; four times as many wait their turn, and one beyond those gets 429 `rate_limited` (docs/using-the-api.md "Rate limits")',
  }),
  fastPath: withDefault({
    env: 'PRICEPOINT_FAST_PATH',
    kind: boolean(),
    default: true,
    meaning:
      'the one speed switch (src/speed/README.md): repeated reads of an answer already built are served before the framework runs, with the same checks, headers and log line, and log lines, metrics and heads take faster paths; `false` runs the plain public paths instead (Fastify for every request, pino, prom-client), the reference the parity test holds them to',
  }),
  webhookAllowPrivate: withDefault({
    env: 'PRICEPOINT_WEBHOOK_ALLOW_PRIVATE',
    kind: boolean(),
    default: false,
    meaning:
      'webhooks may be delivered to loopback, private, link-local and metadata addresses (docs/webhooks.md); leave `false` unless every receiver is yours',
  }),
  webhookAllowHttp: withDefault({
    env: 'PRICEPOINT_WEBHOOK_ALLOW_HTTP',
    kind: boolean(),
    default: false,
    meaning: 'webhook endpoints may use plain `http://` URLs; otherwise only `https://`',
  }),
  webhookTimeoutMs: withDefault({
    env: 'PRICEPOINT_WEBHOOK_TIMEOUT_MS',
    kind: integer(100, 60_000),
    default: 10_000,
    meaning: 'how long one webhook delivery may take, connecting included, before it counts as failed',
  }),
  usageHistory: withDefault({
    env: 'PRICEPOINT_USAGE_HISTORY',
    file: 'usageHistory',
    kind: boolean(),
    default: true,
    meaning:
      'count every keyed request per key and hour for `GET /api/v1/usage/history`, `GET /api/v1/keys/{id}/usage` and `pricepoint usage` (docs/usage-history.md); `false` counts nothing, and what is stored stays readable',
  }),
  usageFlushSeconds: withDefault({
    env: 'PRICEPOINT_USAGE_FLUSH_SECONDS',
    file: 'usageFlushSeconds',
    kind: integer(1, 300),
    default: 5,
    meaning:
      'how often an instance adds the usage it counted to the database (and once more when it stops); a crash loses at most this much',
  }),
  usageRetentionDays: withDefault({
    env: 'PRICEPOINT_USAGE_RETENTION_DAYS',
    file: 'usageRetentionDays',
    kind: integer(1, 36_500),
    default: 400,
    meaning: 'how long hourly usage is kept; older hours are removed about once an hour',
  }),
  tzDir: optional({
    env: 'PRICEPOINT_TZDIR',
    kind: text('a folder of compiled tz files (TZif, such as `/usr/share/zoneinfo`)'),
    meaning:
      'zone rules are read from it, whatever its release; a folder without them stops the start. Unset, the newest release found is used (see "Time zone data"); `TZDIR` names the system\'s folder, as for the C library',
  }),
} as const;

export type SettingName = keyof typeof SETTINGS;

/** The value one setting yields: undefined when it has no default and is not set. */
export type SettingValue<S> =
  S extends Setting<infer T, true> ? T | undefined : S extends Setting<infer T, false> ? T : never;

/** Every setting's value, as read from the environment, the file and the defaults. */
export type Settings = { readonly [K in SettingName]: SettingValue<(typeof SETTINGS)[K]> };

/** Every environment setting; any other `PRICEPOINT_*` name is a typo and stops the start. */
export const ENV_SETTINGS: readonly string[] = Object.values(SETTINGS).map((setting) => setting.env);
