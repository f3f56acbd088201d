/**
 * `buildApp` wires the whole service once, at start: services over the given stores, hooks, and
 * every route, registered here by name so a reader finds each one by grep.
 */
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type RequestListener } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import cors from '@fastify/cors';
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
import { guardStores } from '../stores/guard.js';
import type { Stores } from '../stores/types.js';
import { createAnswerCache } from './answer-cache.js';
import {
  type ConnectionLimits,
  DEFAULT_CONNECTION_LIMITS,
  guardConnections,
  serverTimeouts,
  TLS_PROTOCOL,
} from './connections.js';
import { registerDocs } from './docs.js';
import { createFastPath } from './fast-path.js';
import { createKeyGuard } from './key-guard.js';
import { createMetrics, type Metrics } from './metrics.js';
import { clientErrorAnswer, HSTS, registerProblemHandling, sendProblem } from './problem.js';
import { healthRoutes } from './routes/health.js';
import { keyRoutes } from './routes/keys.js';
import { metricsRoutes } from './routes/metrics.js';
import { priceWriteRoutes } from './routes/price-writes.js';
import { priceRoutes } from './routes/prices.js';
import { seriesRoutes } from './routes/series.js';
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
  /** Created by the caller when the stores report into it too (store errors, fallbacks). */
  readonly metrics?: Metrics;
  /** Deadlines of a connection's phases (tests shorten them); the per-address bound comes from config. */
  readonly connections?: Partial<Omit<ConnectionLimits, 'perAddress'>>;
}

/** Response headers a browser script may read (CORS): limits, validators and the request id. */
const EXPOSED_HEADERS = [
  'etag',
  'ratelimit',
  'ratelimit-policy',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
  'x-request-id',
  'www-authenticate',
];

/** Bytes of finished answers kept per process: a few thousand days of every development series. */
const ANSWER_CACHE_BYTES = 64 * 1024 * 1024;

export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const clock = deps.clock ?? Date.now;
  const metrics = deps.metrics ?? createMetrics();
  // The hot path sits in front of Fastify on the server's own listener (see fast-path.ts); it is
  // given its services once they exist, below.
  let fastifyListener: RequestListener | undefined;
  let listener: RequestListener | undefined;
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
    // Only read by Fastify for the "listening at https://" line: the server is made just below.
    ...(deps.https && { https: { allowHTTP1: true } }),
    serverFactory: (handler) => {
      fastifyListener = handler;
      const serve: RequestListener = (req, res) => (listener ?? handler)(req, res);
      // Slow, stalled or greedy clients must not hold sockets: every phase of a connection has a
      // deadline and one address only so many connections (connections.ts).
      const limits: ConnectionLimits = {
        ...DEFAULT_CONNECTION_LIMITS,
        ...deps.connections,
        perAddress: config.maxConnectionsPerAddress,
      };
      const options = serverTimeouts(limits);
      const server = deps.https
        ? createHttpsServer(
            { key: deps.https.key, cert: deps.https.cert, ...TLS_PROTOCOL, ...options },
            serve,
          )
        : createHttpServer(options, serve);
      guardConnections(server, limits, config.trustProxy, () => metrics.connectionsRefused.inc());
      return server;
    },
    bodyLimit: 1_048_576,
    // A URL that cannot be decoded never reaches a route; answer it like every other error.
    frameworkErrors: (_error, request, reply) => {
      reply.header('x-request-id', request.id).header('x-content-type-options', 'nosniff');
      sendProblem(request, reply, new ApiError('invalid_parameter', 'The URL is malformed.'));
    },
    clientErrorHandler: clientErrorAnswer,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } },
  });

  const stores = guardStores(deps.stores, (store, error) => {
    metrics.storeErrors.inc({ store });
    app.log.error({ err: error, store }, 'a store operation failed');
  });
  const services = {
    auth: createAuthenticator({
      keys: stores.keys,
      rateLimits: stores.rateLimits,
      clock,
      keySecret: config.keySecret,
      cacheMs: config.keyCacheMs,
      failuresPerMinute: config.authFailuresPerMinute,
      acceptDemoKeys: config.devData,
      onFlushError: (error) => app.log.error({ err: error }, 'writing last-used times failed'),
    }),
    keys: createKeyService({
      keys: stores.keys,
      tiers: config.tiers,
      keySecret: config.keySecret,
      clock,
    }),
    limiter: createRateLimiter({ store: stores.rateLimits, tiers: config.tiers, clock }),
    prices: createPriceService({
      prices: stores.prices,
      clock,
      cache: { freshMs: config.readCacheMs, staleMs: 15 * 60_000, now: () => performance.now() },
    }),
  };
  const keyGuard = createKeyGuard(services.auth, services.limiter);
  const changeToken = stores.prices.changeToken?.bind(stores.prices);
  const answers = createAnswerCache({
    maxBytes: ANSWER_CACHE_BYTES,
    ...(changeToken && { token: changeToken }),
  });

  app.decorateRequest('caller', null);
  app.decorateRequest('limitHeaders', null);
  app.decorateRequest('problemCode', null);
  registerProblemHandling(app);
  await registerDocs(app);
  // CORS (DESIGN section 2): keys travel in headers, never in cookies, so any origin may read; the
  // preflight allows the key headers, and clients may read the rate-limit and cache headers.
  await app.register(cors, {
    origin: '*',
    methods: ['GET', 'HEAD', 'PUT', 'POST', 'DELETE'],
    allowedHeaders: ['x-api-key', 'authorization', 'content-type', 'if-none-match', 'accept'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 7200,
    // Any OPTIONS request is answered as a preflight, never with a plain-text 400.
    strictPreflight: false,
  });

  stores.notices.subscribe((notice) => {
    if (notice.kind === 'keys') services.auth.forget();
    else {
      services.prices.forget(notice.symbols);
      answers.forget(notice.symbols);
    }
  });
  // Last-used times still in memory are written before the stores close (they close after the app).
  app.addHook('onClose', () => services.auth.close());
  let closing = false;
  // preClose, not onClose: onClose runs only after requests in flight have finished.
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id).header('x-content-type-options', 'nosniff');
    if (deps.https) reply.header('strict-transport-security', HSTS);
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
    const route = request.routeOptions.url ?? 'unmatched';
    const tier = request.caller?.tier.name ?? 'none';
    metrics.requests.inc({ route, method: request.method, status: reply.statusCode, tier });
    metrics.latency.observe({ route, method: request.method }, reply.elapsedTime / 1000);
    const code = request.problemCode;
    if (code === 'rate_limited') metrics.rateLimited.inc({ tier });
    else if (code !== null && (reply.statusCode === 401 || code === 'too_many_auth_failures')) {
      metrics.authFailures.inc({ code });
    }
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

  listener = createFastPath({
    auth: services.auth,
    limiter: services.limiter,
    answers,
    metrics,
    log: app.log,
    clock,
    commonHeaders: {
      'access-control-allow-origin': '*',
      'access-control-expose-headers': EXPOSED_HEADERS.join(', '),
      'x-content-type-options': 'nosniff',
      ...(deps.https && { 'strict-transport-security': HSTS }),
    },
    trustProxy: config.trustProxy,
    closing: () => closing,
    next: fastifyListener as RequestListener,
  });

  healthRoutes(app, { stores });
  metricsRoutes(app, { metrics });
  priceRoutes(app, { prices: services.prices, keyGuard, answers, freshMs: config.readCacheMs, clock });
  priceWriteRoutes(app, {
    prices: stores.prices,
    imports: createImportService({ prices: stores.prices }),
    keyGuard,
  });
  seriesRoutes(app, { prices: services.prices, keyGuard });
  seriesAdminRoutes(app, { series: createSeriesService({ prices: stores.prices }), keyGuard });
  usageRoutes(app, { limiter: services.limiter, keyGuard, clock });
  keyRoutes(app, {
    keys: services.keys,
    keyGuard,
    clock,
    changed: (keyId) => {
      // This instance forgets at once; the others when the notice reaches them (or their cache expires).
      services.auth.forget();
      stores.notices.publish({ kind: 'keys', keyIds: [keyId] }).catch((error: unknown) => {
        metrics.storeErrors.inc({ store: 'notices' });
        app.log.warn(
          { err: error },
          'publishing a key change failed; other instances see it when their key cache expires',
        );
      });
    },
  });

  return app;
}
