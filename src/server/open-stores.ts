/**
 * Opening the stores `config` asks for, once, for the server and for every CLI command
 * (docs/scale-out.md). Services are built over them in ./compose.ts.
 */
import { type Config, ConfigError } from '../config/config.js';
import type { DiskReport } from '../http/routes/health.js';
import { announceChanges } from '../stores/announcing.js';
import { MemoryNoticeBus } from '../stores/memory/notice-bus.js';
import { MemoryRateLimitStore } from '../stores/memory/rate-limit-store.js';
import { openPostgresStores } from '../stores/postgres/index.js';
import { openRedis } from '../stores/redis/index.js';
import { type EmbeddedStores, openEmbeddedStores } from '../stores/sqlite/index.js';
import type { NoticeBus, Stores } from '../stores/types.js';

/**
 * The stores `config` asks for (docs/scale-out.md): PostgreSQL when
 * `PRICEPOINT_DATABASE_URL` is set, else SQLite in the data folder; Redis counters and notices
 * when `PRICEPOINT_REDIS_URL` is set, else in-process ones. A folder or database that cannot be
 * opened is a `ConfigError` naming the setting, so the operator sees which setting to fix.
 */
export async function openStores(config: Config, hooks: StoreHooks = {}): Promise<Stores> {
  let data: Pick<
    Stores,
    'prices' | 'keys' | 'close' | 'events' | 'webhooks' | 'usage' | 'audit' | 'invitations'
  > &
    Partial<Pick<EmbeddedStores, 'onKeyChanges'>>;
  try {
    data = config.databaseUrl
      ? await openPostgresStores(config.databaseUrl, {
          timeoutMs: config.databaseTimeoutMs,
          changeCheckMs: config.changeCheckMs,
          ...(hooks.onDatabaseAway && { onAvailabilityChange: hooks.onDatabaseAway }),
        })
      : await openEmbeddedStores(config.databasePath);
  } catch (error) {
    if (!config.databaseUrl) throw dataDirError(error, config);
    // The URL may hold a password: the message never repeats it.
    const reason = (error as Error).message.replaceAll(config.databaseUrl, '(the URL)');
    throw new ConfigError(`PRICEPOINT_DATABASE_URL: cannot open the database: ${reason}`);
  }
  // SQLite tells of key changes another process made, and of revocations this one accepted before
  // they are written: every instance forgets its verified keys then, whatever its key cache time.
  const forwardKeyChanges = (notices: NoticeBus) =>
    data.onKeyChanges?.((keyIds) => {
      notices.publish({ kind: 'keys', keyIds }).catch((error: unknown) => hooks.onRedisError?.(error));
    });
  if (!config.redisUrl) {
    const notices = new MemoryNoticeBus();
    forwardKeyChanges(notices);
    const stores: Stores & Partial<DiskReport> = {
      keys: data.keys,
      events: data.events,
      webhooks: data.webhooks,
      usage: data.usage,
      ...(data.audit && { audit: data.audit }),
      ...(data.invitations && { invitations: data.invitations }),
      close: data.close,
      prices: announceChanges(data.prices, notices),
      rateLimits: new MemoryRateLimitStore(),
      notices,
      ...diskReport(data.prices),
    };
    return stores;
  }
  const redis = openRedis(config.redisUrl, {
    prefix: `${config.redisPrefix}:`,
    fallback: config.redisFallback,
    commandTimeoutMs: config.redisTimeoutMs,
    ...(hooks.onFallback && { onFallback: hooks.onFallback }),
    ...(hooks.onRedisError && { onError: hooks.onRedisError }),
  });
  // Start even when Redis is away: limits follow the fallback policy until it answers.
  await Promise.race([redis.ready(), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
  forwardKeyChanges(redis.notices);
  const stores: Stores & Partial<DiskReport> = {
    ...diskReport(data.prices),
    prices: announceChanges(data.prices, redis.notices, hooks.onRedisError),
    keys: data.keys,
    events: data.events,
    webhooks: data.webhooks,
    usage: data.usage,
    ...(data.audit && { audit: data.audit }),
    ...(data.invitations && { invitations: data.invitations }),
    rateLimits: redis.rateLimits,
    notices: redis.notices,
    shared: {
      fallback: config.redisFallback,
      degraded: () => redis.rateLimits.state() === 'degraded',
      ping: () => redis.ping(),
    },
    async close() {
      await Promise.all([data.close(), redis.close()]);
    },
  };
  return stores;
}

/** `diskFull` of a store that can tell (SQLite), for `/readyz`; nothing for one that cannot. */
function diskReport(prices: object): Partial<DiskReport> {
  const store = prices as Partial<DiskReport>;
  return typeof store.diskFull === 'function' ? { diskFull: () => (store.diskFull as () => boolean)() } : {};
}

/** Reports from the stores for metrics and logs. */
export interface StoreHooks {
  /** A rate-limit decision taken without Redis, under `policy`. */
  readonly onFallback?: (policy: 'local' | 'open' | 'closed', error: unknown) => void;
  /** A Redis connection error or a failed rate-limit command or probe (reported often while it is away). */
  readonly onRedisError?: (error: unknown) => void;
  /** PostgreSQL stopped answering (`away`, with the error that showed it), or answers again. */
  readonly onDatabaseAway?: (away: boolean, error: unknown) => void;
}

/** File-system and SQLite open errors (ENOTDIR, EACCES, SQLITE_CANTOPEN, ...) as the setting behind them. */
export function dataDirError(error: unknown, config: Config): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string' && /^(E[A-Z]+|SQLITE_(CANTOPEN|READONLY|PERM|NOTADB))$/.test(code)) {
    return new ConfigError(
      `PRICEPOINT_DATA_DIR: cannot open the database ${config.databasePath}: ${(error as Error).message}`,
    );
  }
  return error;
}
