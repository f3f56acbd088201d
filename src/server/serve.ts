/**
 * Starting and stopping the service: stores, development data, TLS, the app, the banner, and a
 * SIGTERM that lets requests in flight finish before the process exits.
 */
import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import { type Config, ConfigError } from '../config/config.js';
import { DEMO_API_KEY, DEV_SERIES, loadDevData, loadDevPrices } from '../dev-data/dev-data.js';
import { localDate } from '../domain/time/days.js';
import { describeTzSource } from '../domain/time/tz-source.js';
import { useTzSource } from '../domain/time/zone.js';
import { createMetrics } from '../http/metrics.js';
import { startMqtt } from '../mqtt/start.js';
import { warnAboutOffGridPoints } from '../services/grid-check.js';
import { openSources } from '../sources/sources.js';
import { speedOf } from '../speed/index.js';
import type { Stores } from '../stores/types.js';
import { startDeliveries } from '../webhooks/start.js';
import { startBuildThreads } from './build-threads.js';
import { composeApp } from './compose.js';
import { openStores } from './open-stores.js';
import { tlsMaterial } from './tls.js';

// Where the CLI and the benchmarks have always found them.
export { dataDirError, openStores, type StoreHooks } from './open-stores.js';

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
  // Zone rules first: the development data and every day served are cut with them.
  const tz = useTzSource(config.tzData);
  const speed = await speedOf(config.fastPath);
  const metrics = createMetrics(speed.requestMetrics);
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
    // Once per outage: while it lasts, calls are refused without asking PostgreSQL.
    onDatabaseAway: (away, error) => {
      if (away) app?.log.error({ err: error }, 'PostgreSQL is not answering; what needs it answers 503');
      else app?.log.info('PostgreSQL answers again');
    },
  });
  const tls = await tlsMaterial(config);
  // One log line per request: in batches with the speed switch on (../speed/log-destination.ts).
  const logStream = speed.logDestination();
  // Configured sources (docs/sources.md); none without `sources:` in the config file.
  const sources = await openSources(config.sources, {
    prices: stores.prices,
    databaseUrl: config.databaseUrl,
    databasePath: config.databasePath,
    registry: metrics.registry,
    log: { info: (fields, message) => app?.log.info(fields, message), warn: (f, m) => app?.log.warn(f, m) },
  }).catch(async (error: unknown) => {
    await stores.close();
    logStream?.close();
    throw error;
  });
  // Heavy reads are built off the event loop (./build-threads.ts), over the same database.
  const threads =
    config.buildThreads > 0
      ? startBuildThreads(config, config.buildThreads, {
          onThreadError: (error) => app?.log.error({ err: error }, 'a build thread failed'),
          onStoreError: (message) => {
            metrics.storeErrors.inc({ store: 'prices' });
            app?.log.error({ err: { message } }, 'a store operation failed in a build thread');
          },
        })
      : undefined;
  if (threads)
    stores.notices.subscribe((notice) => notice.kind === 'prices' && threads.forget(notice.symbols));
  const composed = await composeApp(config, {
    stores,
    metrics,
    ...(logStream && { logStream }),
    speed,
    sources,
    ...(tls && { https: tls }),
    ...(threads && { buildHeavy: threads.build }),
  });
  app = composed.app;
  const timers: NodeJS.Timeout[] = [];
  if (config.devData) {
    try {
      await loadDevData({ prices: stores.prices, keys: composed.services.keys, now: Date.now() });
    } catch (error) {
      await app.close();
      await sources.close();
      await threads?.close();
      await stores.close();
      logStream?.close();
      throw error;
    }
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
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    for (const timer of timers) clearInterval(timer);
    await app.close();
    await sources.close();
    await threads?.close();
    await stores.close();
    logStream?.close();
    throw listenError(error, config);
  }
  sources.start();
  // Webhook deliveries (docs/webhooks.md): beside serving, so an import never waits for a receiver.
  const deliveries = startDeliveries(config, stores, app.log);
  // Prices to an MQTT broker, for Home Assistant (docs/mqtt.md); none without `mqtt:` in the config file.
  const mqtt = await startMqtt(config, {
    prices: composed.services.prices,
    events: stores.events,
    log: { info: (f, m) => app?.log.info(f, m), warn: (f, m) => app?.log.warn(f, m) },
  }).catch(async (error: unknown) => {
    await app?.close();
    await deliveries?.stop();
    await sources.close();
    await threads?.close();
    await stores.close();
    logStream?.close();
    throw error;
  });
  app.log.info({ tz }, `time zone data: ${describeTzSource(tz)}`);
  // Stored points written under older zone rules: one warning, from a scan that runs beside serving.
  const offGridScan = new AbortController();
  const offGridScanned = warnAboutOffGridPoints(stores.prices, app.log, offGridScan.signal);
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const local = ['127.0.0.1', '0.0.0.0', '::', '::1', 'localhost'].includes(config.host);
  const host = local ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `${tls ? 'https' : 'http'}://${host}:${port}`;

  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      for (const timer of timers) clearInterval(timer);
      offGridScan.abort();
      // Node closes the keep-alive connections that are idle when closing starts, once. A connection
      // whose request is still running goes idle later and would hold the exit for keepAliveTimeout,
      // past the grace time if the drain was long: close such connections as soon as they go idle.
      const reaper = setInterval(() => app.server.closeIdleConnections(), 100);
      try {
        await app.close();
      } finally {
        clearInterval(reaper);
      }
      await offGridScanned;
      await mqtt?.close();
      await deliveries?.stop();
      await sources.close();
      await threads?.close();
      await stores.close();
      logStream?.close();
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
