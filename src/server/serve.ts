/**
 * Starting and stopping the service: stores, development data, TLS, the app, the banner, and a
 * SIGTERM that lets requests in flight finish before the process exits.
 */
import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import { destination } from 'pino';
import { type Config, ConfigError } from '../config/config.js';
import { DEMO_API_KEY, DEV_SERIES, loadDevData, loadDevPrices } from '../dev-data/dev-data.js';
import { localDate } from '../domain/time/days.js';
import { buildApp } from '../http/app.js';
import { createMetrics } from '../http/metrics.js';
import { createKeyService } from '../services/key-service.js';
import { announceChanges } from '../stores/announcing.js';
import { MemoryNoticeBus } from '../stores/memory/notice-bus.js';
import { MemoryRateLimitStore } from '../stores/memory/rate-limit-store.js';
import { openPostgresStores } from '../stores/postgres/index.js';
import { openRedis } from '../stores/redis/index.js';
import { openEmbeddedStores } from '../stores/sqlite/index.js';
import type { Stores } from '../stores/types.js';
import { tlsMaterial } from './tls.js';

export interface Running {
  readonly app: FastifyInstance;
  readonly stores: Stores;
  readonly url: string;
  readonly certFile: string | undefined;
  readonly demoKey: string | undefined;
  close(): Promise<void>;
}

/** The current local date of every development series: when it changes, the data set is extended. */
function devDates(now: number): string {
  return DEV_SERIES.map((s) => localDate(now, s.timezone)).join(',');
}

/**
 * The stores `config` asks for (DESIGN sections 6 and 7): PostgreSQL when
 * `PRICEPOINT_DATABASE_URL` is set, else SQLite in the data folder; Redis counters and notices
 * when `PRICEPOINT_REDIS_URL` is set, else in-process ones. A folder or database that cannot be
 * opened is a `ConfigError` naming the setting, so the operator sees which setting to fix.
 */
export async function openStores(config: Config, hooks: StoreHooks = {}): Promise<Stores> {
  let data: Pick<Stores, 'prices' | 'keys' | 'close'>;
  try {
    data = config.databaseUrl
      ? await openPostgresStores(config.databaseUrl)
      : await openEmbeddedStores(config.databasePath);
  } catch (error) {
    if (!config.databaseUrl) throw dataDirError(error, config);
    // The URL may hold a password: the message never repeats it.
    const reason = (error as Error).message.replaceAll(config.databaseUrl, '(the URL)');
    throw new ConfigError(`PRICEPOINT_DATABASE_URL: cannot open the database: ${reason}`);
  }
  if (!config.redisUrl) {
    const notices = new MemoryNoticeBus();
    return {
      ...data,
      prices: announceChanges(data.prices, notices),
      rateLimits: new MemoryRateLimitStore(),
      notices,
    };
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
  return {
    prices: announceChanges(data.prices, redis.notices, hooks.onRedisError),
    keys: data.keys,
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
}

/** Reports from the stores for metrics and logs. */
export interface StoreHooks {
  /** A rate-limit decision taken without Redis, under `policy`. */
  readonly onFallback?: (policy: 'local' | 'open' | 'closed', error: unknown) => void;
  /** A Redis connection error or a failed rate-limit command or probe (reported often while it is away). */
  readonly onRedisError?: (error: unknown) => void;
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

/** Why `listen` failed, as the setting to fix (`listen EADDRINUSE ...` names neither). */
function listenError(error: unknown, config: Config): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = (error as Error).message;
  if (code === 'EADDRINUSE') {
    return new ConfigError(`PRICEPOINT_PORT: port ${config.port} on ${config.host} is already in use`);
  }
  if (code === 'EACCES') {
    return new ConfigError(`PRICEPOINT_PORT: no permission to listen on port ${config.port}: ${message}`);
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code?.startsWith('EAI_')) {
    return new ConfigError(`PRICEPOINT_HOST: cannot listen on ${config.host}: ${message}`);
  }
  return error;
}

export async function startServer(config: Config): Promise<Running> {
  const metrics = createMetrics();
  let lastRedisLog = 0;
  let app: FastifyInstance | undefined;
  const stores = await openStores(config, {
    onFallback: (policy) => metrics.fallbacks.inc({ policy }),
    // ioredis reports every reconnect attempt; one line in ten seconds says enough.
    onRedisError: (error) => {
      metrics.storeErrors.inc({ store: 'redis' });
      if (Date.now() - lastRedisLog < 10_000) return;
      lastRedisLog = Date.now();
      app?.log.error(
        { err: error },
        `Redis unreachable; rate limits follow the ${config.redisFallback} policy`,
      );
    },
  });
  const timers: NodeJS.Timeout[] = [];
  if (config.devData) {
    const keys = createKeyService({
      keys: stores.keys,
      tiers: config.tiers,
      keySecret: config.keySecret,
      clock: Date.now,
    });
    await loadDevData({ prices: stores.prices, keys, now: Date.now() });
    let dates = devDates(Date.now());
    const extend = setInterval(() => {
      const now = Date.now();
      if (devDates(now) === dates) return;
      dates = devDates(now);
      loadDevPrices(stores.prices, now).catch((error) =>
        app?.log.error({ err: error }, 'extending dev data failed'),
      );
    }, 60_000);
    extend.unref();
    timers.push(extend);
  }
  const tls = await tlsMaterial(config);
  // One log line per request, written in batches of 8 KiB instead of a system call each, and at
  // least every 250 ms. Asynchronous, because pino writes what is left at exit only for an
  // asynchronous destination (a SIGKILL still loses the last 250 ms).
  const logStream = destination({ dest: 1, sync: false, minLength: 8192, periodicFlush: 250 });
  app = await buildApp(config, { stores, metrics, logStream, ...(tls && { https: tls }) });
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    for (const timer of timers) clearInterval(timer);
    await app.close();
    await stores.close();
    throw listenError(error, config);
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const local = ['127.0.0.1', '0.0.0.0', '::', '::1', 'localhost'].includes(config.host);
  const host = local ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `${tls ? 'https' : 'http'}://${host}:${port}`;

  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      for (const timer of timers) clearInterval(timer);
      // Node closes the keep-alive connections that are idle when closing starts, once. A connection
      // whose request is still running goes idle later and would hold the exit for keepAliveTimeout,
      // past the grace time if the drain was long: close such connections as soon as they go idle.
      const reaper = setInterval(() => app.server.closeIdleConnections(), 100);
      try {
        await app.close();
      } finally {
        clearInterval(reaper);
      }
      await stores.close();
    })();
    return closed;
  };
  return {
    app,
    stores,
    url,
    certFile: tls?.certFile,
    demoKey: config.devData ? DEMO_API_KEY : undefined,
    close,
  };
}

/** The lines printed at start: where it serves, the demo key, and a curl line that works as printed. */
export function banner(running: Running): string {
  const lines = [`Pricepoint is serving ${running.url}/api/v1/`];
  if (running.demoKey) {
    const trust = running.certFile ? `--cacert '${running.certFile}' ` : '';
    lines.push(
      `Demo key: ${running.demoKey}`,
      'Try it:',
      `  curl ${trust}-H 'x-api-key: ${running.demoKey}' ${running.url}/api/v1/prices/today`,
    );
  }
  return lines.join('\n');
}

/** Closes the server on SIGTERM or SIGINT, letting requests in flight finish within the grace time. */
export function closeOnSignals(running: Running, graceMs: number): void {
  closeWithGrace({ delay: graceMs }, async ({ signal, err }) => {
    if (err) running.app.log.error({ err }, 'closing after an error');
    else running.app.log.info({ signal }, 'closing: draining requests in flight');
    await running.close();
  });
}
