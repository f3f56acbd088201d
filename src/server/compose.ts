/**
 * The composition root: the one place where services are built over the stores, for the server,
 * every CLI command and the tests. `buildApp` (../http/app.ts) only wires HTTP around what is
 * built here; the stores themselves are opened in ./open-stores.ts.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Config } from '../config/config.js';
import { type AppDeps, buildApp } from '../http/app.js';
import { createMetrics } from '../http/metrics.js';
import { createAuditService } from '../services/audit-service.js';
import { createAuthenticator } from '../services/authenticator.js';
import { createCheapestService } from '../services/cheapest.js';
import { createImportService } from '../services/import-service.js';
import { createInvitationService } from '../services/invitation-service.js';
import { createKeyService } from '../services/key-service.js';
import { createRateLimiter } from '../services/rate-limiter.js';
import { createSeriesService } from '../services/series-service.js';
import { createUsageHistory } from '../services/usage-history.js';
import { type Speed, speedOf } from '../speed/index.js';
import { guardStores, type StoreName } from '../stores/guard.js';
import type { Stores } from '../stores/types.js';
import { createWebhookService, sendOptionsOf } from '../webhooks/service.js';
import { openStores, type StoreHooks } from './open-stores.js';
import { priceServiceOf } from './price-reads.js';
import type { Services } from './services.js';

export interface ServiceHooks {
  /** Epoch milliseconds; tests pass a fake clock. */
  readonly clock?: () => number;
  /**
   * Told of every failed store call. Given (the server), the stores are guarded: a failure becomes a
   * 503 `service_unavailable` (../stores/guard.ts). Without it (the CLI) errors pass as they are.
   */
  readonly onStoreError?: (store: StoreName, error: unknown) => void;
  /** Told when a batch of last-used times could not be written. */
  readonly onFlushError?: (error: unknown) => void;
  /** Told when an audit entry could not be written (the action it records stands). */
  readonly onAuditError?: (error: unknown) => void;
}

/**
 * Every service, once, over `raw`.
 * @example const services = composeServices(config, await openStores(config))
 */
export function composeServices(config: Config, raw: Stores, hooks: ServiceHooks = {}): Services {
  const clock = hooks.clock ?? Date.now;
  const stores = hooks.onStoreError ? guardStores(raw, hooks.onStoreError) : raw;
  const prices = priceServiceOf(config, stores.prices, clock);
  const keys = createKeyService({
    keys: stores.keys,
    tiers: config.tiers,
    keySecret: config.keySecret,
    clock,
  });
  return {
    stores,
    auth: createAuthenticator({
      keys: stores.keys,
      rateLimits: stores.rateLimits,
      clock,
      keySecret: config.keySecret,
      cacheMs: config.keyCacheMs,
      failuresPerMinute: config.authFailuresPerMinute,
      acceptDemoKeys: config.devData,
      ...(hooks.onFlushError && { onFlushError: hooks.onFlushError }),
    }),
    keys,
    invitations: createInvitationService({
      store: stores.invitations,
      keys,
      keyStore: stores.keys,
      rateLimits: stores.rateLimits,
      tiers: config.tiers,
      keySecret: config.keySecret,
      failuresPerMinute: config.authFailuresPerMinute,
      signup: config.signup,
      clock,
    }),
    limiter: createRateLimiter({ store: stores.rateLimits, tiers: config.tiers, clock }),
    prices,
    imports: createImportService({ prices: stores.prices }),
    series: createSeriesService({ prices: stores.prices }),
    cheapest: createCheapestService({ prices }),
    ...(stores.webhooks && {
      webhooks: createWebhookService({
        store: stores.webhooks,
        keySecret: config.keySecret,
        send: sendOptionsOf(config),
        clock,
      }),
    }),
    ...(stores.usage && {
      usage: createUsageHistory({
        store: stores.usage,
        clock,
        flushMs: config.usageFlushSeconds * 1_000,
        // Guarded stores report a failed write themselves (../stores/guard.ts); it is retried.
        retentionDays: config.usageRetentionDays,
      }),
    }),
    audit: createAuditService({
      store: stores.audit,
      clock,
      retentionDays: config.auditRetentionDays,
      ...(hooks.onAuditError && { onError: hooks.onAuditError }),
    }),
  };
}

export type { Services } from './services.js';

/**
 * Opens the stores, builds the services, runs one command with them and closes both: how every
 * CLI command reaches the data, through the same services as the API.
 * @example await withServices(config, (s) => s.keys.list())
 */
export async function withServices<T>(
  config: Config,
  run: (services: Services) => Promise<T>,
  hooks: StoreHooks = {},
): Promise<T> {
  const stores = await openStores(config, hooks);
  const services = composeServices(config, stores);
  try {
    return await run(services);
  } finally {
    try {
      await services.auth.close();
    } finally {
      await stores.close();
    }
  }
}

export interface ComposeAppDeps extends Omit<AppDeps, 'services' | 'metrics' | 'speed'> {
  readonly stores: Stores;
  readonly metrics?: AppDeps['metrics'];
  /** The speed parts; by default those of `config.fastPath`, the one switch (../speed). */
  readonly speed?: Speed;
}

/**
 * The app over `deps.stores`: services built here, failed store calls counted and logged, HTTP
 * wired by `buildApp`. Used by the server and the tests alike.
 * @example const { app } = await composeApp(config, { stores: await openStores(config) })
 */
export async function composeApp(
  config: Config,
  deps: ComposeAppDeps,
): Promise<{ app: FastifyInstance; services: Services }> {
  const speed = deps.speed ?? (await speedOf(config.fastPath));
  const metrics = deps.metrics ?? createMetrics(speed.requestMetrics);
  // The app's logger exists once the app does; nothing fails before the app is built.
  let log: FastifyBaseLogger | undefined;
  const services = composeServices(config, deps.stores, {
    ...(deps.clock && { clock: deps.clock }),
    onStoreError: (store, error) => {
      metrics.storeErrors.inc({ store });
      log?.error({ err: error, store }, 'a store operation failed');
    },
    onFlushError: (error) => log?.error({ err: error }, 'writing last-used times failed'),
    onAuditError: (error) => log?.error({ err: error }, 'writing an audit entry failed'),
  });
  const app = await buildApp(config, { ...deps, services, metrics, speed });
  log = app.log;
  return { app, services };
}
