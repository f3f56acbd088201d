/**
 * `buildApp` wires the whole service once, at start: services over the given stores, hooks, and
 * every route, registered here by name so a reader finds each one by grep.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Config } from '../config/config.js';
import { ApiError } from '../domain/errors/api-error.js';
import { maskKeysInUrl } from '../domain/keys/key-format.js';
import { createAuthenticator } from '../services/authenticator.js';
import { createImportService } from '../services/import-service.js';
import { createKeyService } from '../services/key-service.js';
import { createPriceService } from '../services/price-service.js';
import { createRateLimiter } from '../services/rate-limiter.js';
import { createSeriesService } from '../services/series-service.js';
import type { Stores } from '../stores/types.js';
import { createKeyGuard } from './key-guard.js';
import { clientErrorAnswer, registerProblemHandling, sendProblem } from './problem.js';
import { healthRoutes } from './routes/health.js';
import { keyRoutes } from './routes/keys.js';
import { priceWriteRoutes } from './routes/price-writes.js';
import { priceRoutes } from './routes/prices.js';
import { seriesAdminRoutes } from './routes/series-admin.js';
import { usageRoutes } from './routes/usage.js';

export interface AppDeps {
  readonly stores: Stores;
  /** Epoch milliseconds; tests pass a fake clock. */
  readonly clock?: () => number;
  /** Where log lines go (tests capture them); stdout by default. */
  readonly logStream?: DestinationStream;
  /** TLS key and certificate; without them the app speaks plain HTTP (tests with `inject`, or behind a proxy). */
  readonly https?: { readonly key: string | Buffer; readonly cert: string | Buffer };
}

export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const clock = deps.clock ?? Date.now;
  const app = Fastify({
    logger: {
      level: config.logLevel,
      ...(deps.logStream && { stream: deps.logStream }),
      // Defence in depth: nothing logs headers, but if anything ever does, keys stay out.
      redact: [
        'req.headers.authorization',
        'req.headers["x-api-key"]',
        'headers.authorization',
        'headers["x-api-key"]',
      ],
    },
    // Our own onResponse hook writes the one line per request, masked.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    trustProxy: config.trustProxy.length > 0 ? [...config.trustProxy] : false,
    return503OnClosing: false,
    ...(deps.https && {
      https: { key: deps.https.key, cert: deps.https.cert, minVersion: 'TLSv1.2' as const },
    }),
    // Slow or stalled clients must not hold sockets: bound every phase of a request.
    connectionTimeout: 30_000,
    keepAliveTimeout: 5_000,
    requestTimeout: 30_000,
    bodyLimit: 1_048_576,
    // A URL that cannot be decoded never reaches a route; answer it like every other error.
    frameworkErrors: (_error, request, reply) => {
      reply.header('x-request-id', request.id).header('x-content-type-options', 'nosniff');
      sendProblem(request, reply, new ApiError('invalid_parameter', 'The URL is malformed.'));
    },
    clientErrorHandler: clientErrorAnswer,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } },
  });

  const services = {
    auth: createAuthenticator({
      keys: deps.stores.keys,
      rateLimits: deps.stores.rateLimits,
      clock,
      keySecret: config.keySecret,
      cacheMs: config.keyCacheMs,
      failuresPerMinute: config.authFailuresPerMinute,
      acceptDemoKeys: config.devData,
      onFlushError: (error) => app.log.error({ err: error }, 'writing last-used times failed'),
    }),
    keys: createKeyService({
      keys: deps.stores.keys,
      tiers: config.tiers,
      keySecret: config.keySecret,
      clock,
    }),
    limiter: createRateLimiter({ store: deps.stores.rateLimits, tiers: config.tiers, clock }),
    prices: createPriceService({ prices: deps.stores.prices, clock }),
  };
  const keyGuard = createKeyGuard(services.auth, services.limiter);

  app.decorateRequest('caller', null);
  app.decorateRequest('limitHeaders', null);
  registerProblemHandling(app);

  // Last-used times still in memory are written before the stores close (they close after the app).
  app.addHook('onClose', () => services.auth.close());
  let closing = false;
  // preClose, not onClose: onClose runs only after requests in flight have finished.
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id).header('x-content-type-options', 'nosniff');
    if (deps.https) reply.header('strict-transport-security', 'max-age=31536000');
    if (closing) {
      reply.header('connection', 'close');
      return sendProblem(request, reply, new ApiError('service_unavailable', 'The server is shutting down.'));
    }
  });
  // Rate-limit headers go on every authenticated answer, errors included.
  app.addHook('onSend', async (request, reply) => {
    if (request.limitHeaders) reply.headers(request.limitHeaders);
  });
  // One structured line per request; the URL is masked and no header is logged.
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        url: maskKeysInUrl(request.url),
        status: reply.statusCode,
        latencyMs: Math.round(reply.elapsedTime * 100) / 100,
        keyId: request.caller?.key.id ?? null,
        tier: request.caller?.tier.name ?? null,
        ip: request.ip,
      },
      'request',
    );
  });

  healthRoutes(app, { stores: deps.stores });
  priceRoutes(app, { prices: services.prices, keyGuard });
  priceWriteRoutes(app, {
    prices: deps.stores.prices,
    imports: createImportService({ prices: deps.stores.prices }),
    keyGuard,
  });
  seriesAdminRoutes(app, { series: createSeriesService({ prices: deps.stores.prices }), keyGuard });
  usageRoutes(app, { limiter: services.limiter, keyGuard, clock });
  keyRoutes(app, { keys: services.keys, keyGuard, clock, changed: () => services.auth.forget() });

  return app;
}
