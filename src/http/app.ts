/**
 * `buildApp` wires HTTP once, at start, around services built by the composition root
 * (../server/compose.ts): the request pipeline's steps as Fastify hooks and as the fast entry
 * (./README.md), and every route, registered here by name so a reader finds each one by grep.
 */
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type RequestListener } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import cors from '@fastify/cors';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Config } from '../config/config.js';
import { DEMO_API_KEY } from '../dev-data/dev-data.js';
import { ApiError } from '../domain/errors/api-error.js';
import type { EventStreamOptions } from '../events/stream-limits.js';
import { mcpRoutes } from '../mcp/http-route.js';
import { llmsTxtRoute } from '../mcp/llms-txt.js';
import type { Services } from '../server/services.js';
import type { Sources } from '../sources/sources.js';
import type { Speed } from '../speed/index.js';
import { auditHook } from './audit-hook.js';
import { registerDocs } from './contract/docs.js';
import { clientErrorAnswer, registerProblemHandling, sendProblem } from './contract/problem.js';
import { foldEnumCase } from './contract/read-query.js';
import { ProblemSchema } from './contract/schemas.js';
import type { Metrics } from './metrics.js';
import { loadPageFiles, registerPages } from './pages/pages.js';
import { registerPortalPages } from './pages/portal-pages.js';
import { createAdmission } from './pipeline/admit.js';
import { createAnswerCache } from './pipeline/answer-cache.js';
import { CORS, commonHeaders } from './pipeline/headers.js';
import { createHeavyReads } from './pipeline/heavy-reads.js';
import { createRecorder } from './pipeline/record.js';
import type { DayBuilder } from './render/day-content.js';
import { auditRoutes } from './routes/audit.js';
import { cheapestRoutes } from './routes/cheapest.js';
import { consoleSignInRoutes } from './routes/console-sign-in.js';
import { deviceRoutes } from './routes/devices.js';
import { type EventRouteDeps, eventRoutes } from './routes/events.js';
import { healthRoutes } from './routes/health.js';
import { InvitationViewSchema, invitationRoutes } from './routes/invitations.js';
import { KeyViewSchema, keyRoutes } from './routes/keys.js';
import { metricsRoutes } from './routes/metrics.js';
import { ownKeyRoutes } from './routes/own-key.js';
import { pointerRoutes } from './routes/pointers.js';
import { priceWriteRoutes } from './routes/price-writes.js';
import { DayAnswerSchema, priceRoutes } from './routes/prices.js';
import { SeriesInfoSchema, seriesRoutes } from './routes/series.js';
import { seriesAdminRoutes } from './routes/series-admin.js';
import { sourceRoutes } from './routes/sources.js';
import { TariffSchema, tariffRoutes } from './routes/tariffs.js';
import { usageRoutes } from './routes/usage.js';
import { usageHistoryRoutes } from './routes/usage-history.js';
import { WebhookViewSchema, webhookRoutes } from './routes/webhooks.js';
import {
  type ConnectionLimits,
  connectionGuard,
  DEFAULT_CONNECTION_LIMITS,
  TLS_PROTOCOL,
} from './transport/connections.js';
import { trustedProxies } from './transport/trust.js';

export interface AppDeps {
  /** Services and the stores they use, from the composition root (../server/compose.ts). */
  readonly services: Services;
  /** Epoch milliseconds; tests pass a fake clock. */
  readonly clock?: () => number;
  /** Where log lines go (tests capture them); stdout by default. */
  readonly logStream?: DestinationStream;
  /** TLS key and certificate; without them the app speaks plain HTTP (tests with `inject`, or behind a proxy). */
  readonly https?: { readonly key: string | Buffer; readonly cert: string | Buffer };
  /** The configured sources (../sources/sources.ts); without them, `GET /api/v1/sources` lists none. */
  readonly sources?: Sources;
  /** Created by the caller, since the stores report into it too (store errors, fallbacks). */
  readonly metrics: Metrics;
  /**
   * Deadlines of a connection's phases (tests shorten them), over the defaults and the configured idle
   * deadline; the per-address bounds come from config.
   */
  readonly connections?: Partial<Omit<ConnectionLimits, 'perAddress' | 'unsentBytesPerAddress'>>;
  /** Heartbeats and open streams per key of `GET /api/v1/events` (tests shorten the heartbeat). */
  readonly eventStreams?: EventStreamOptions;
  /** Where heavy reads are built (../server/build-threads.ts); absent, on the event loop. */
  readonly buildHeavy?: DayBuilder;
  /** The speed parts (../speed), chosen by the one switch. */
  readonly speed: Speed;
}

/** Bytes of finished answers kept per process: a few thousand days of every development series. */
const ANSWER_CACHE_BYTES = 64 * 1024 * 1024;

export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const clock = deps.clock ?? Date.now;
  const { metrics, speed } = deps;
  const trust = trustedProxies(config.trustProxy);
  // The fast entry sits in front of Fastify on the server's own listener (../speed/fast-entry.ts);
  // it is given its services once they exist, below.
  let fastifyListener: RequestListener | undefined;
  // What the server's connection guard counts, once the server exists.
  let countUnsent: NonNullable<EventRouteDeps['countUnsent']> = () => {};
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
    trustProxy: trust ?? false,
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
        idleMs: config.idleSeconds * 1_000,
        ...deps.connections,
        perAddress: config.maxConnectionsPerAddress,
        unsentBytesPerAddress: config.maxUnsentBytesPerAddress,
      };
      const connections = connectionGuard(limits, trust, metrics);
      const { options, listener: guarded, guard } = connections;
      countUnsent = connections.countUnsent;
      const server = deps.https
        ? createHttpsServer(
            { key: deps.https.key, cert: deps.https.cert, ...TLS_PROTOCOL, ...options },
            guarded(serve),
          )
        : createHttpServer(options, guarded(serve));
      guard(server);
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

  const { services } = deps;
  const stores = services.stores;
  const admission = createAdmission(services.auth, services.limiter, { keyMemo: speed.keyMemo });
  const keyGuard = admission.guard;
  const changeToken = stores.prices.changeToken?.bind(stores.prices);
  const answers = createAnswerCache({
    maxBytes: ANSWER_CACHE_BYTES,
    ...(changeToken && { token: changeToken }),
  });

  app.decorateRequest('caller', null);
  app.decorateRequest('limitHeaders', null);
  app.decorateRequest('unitsTaken', 0);
  app.decorateRequest('countedAt', null);
  app.decorateRequest('problemCode', null);
  app.decorateRequest('auditTarget', null);
  app.decorateRequest('auditKeyId', null);
  registerProblemHandling(app);
  // Shared shapes, referenced by `$id` from the route schemas: one copy each in the document.
  app.addSchema(ProblemSchema);
  app.addSchema(DayAnswerSchema);
  app.addSchema(SeriesInfoSchema);
  app.addSchema(TariffSchema);
  app.addSchema(KeyViewSchema);
  app.addSchema(InvitationViewSchema);
  app.addSchema(WebhookViewSchema);
  await registerDocs(app, config.devData ? { demoKey: DEMO_API_KEY } : {});
  // The console and the portal (./pages/), from web/.
  const pageFiles = await loadPageFiles();
  await registerPages(app, pageFiles);
  // The portal's claim and sign-up pages, on the same assets (./pages/portal-pages.ts).
  await registerPortalPages(app, { version: pageFiles.version, signupTier: config.signup?.tier });
  // The preflight, from the one header table (./pipeline/headers.ts).
  await app.register(cors, CORS);

  stores.notices.subscribe((notice) => {
    if (notice.kind === 'keys') services.auth.forget();
    else {
      services.prices.forget(notice.symbols);
      answers.forget(notice.symbols);
    }
  });
  // Last-used times still in memory are written before the stores close (they close after the app).
  app.addHook('onClose', () => services.auth.close());
  // What this instance counted since its last flush is written before the stores close too.
  app.addHook('onClose', async () => services.usage?.close());
  let closing = false;
  // preClose, not onClose: onClose runs only after requests in flight have finished.
  app.addHook('preClose', async () => {
    closing = true;
  });
  const common = commonHeaders(deps.https !== undefined);
  // The hooks every request passes take `done` rather than being async: no promise per hook.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id).headers(common);
    if (!closing) return done();
    // Answered here: Fastify goes on with the reply sent, not with `done`.
    reply.header('connection', 'close');
    sendProblem(request, reply, new ApiError('service_unavailable', 'The server is shutting down.'));
  });
  // Rate-limit headers go on every authenticated answer, errors included.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.limitHeaders) reply.headers(request.limitHeaders);
    done(null, payload);
  });
  // Admin actions into the audit log, before their answers leave (audit-hook.ts, docs/audit.md).
  app.addHook('onSend', auditHook(services.audit));
  // The record step: one structured line per request and its metrics, on either entry.
  const usage = config.usageHistory ? services.usage : undefined;
  const record = createRecorder(metrics, speed.lineWriter(app.log), usage);
  app.addHook('onResponse', (request, reply, done) => {
    // A request the fast entry handed over is timed from when it arrived there.
    const arrived = admission.arrivedAt(request.raw);
    record({
      reqId: request.id,
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      url: request.url,
      status: reply.statusCode,
      elapsedMs: arrived === undefined ? reply.elapsedTime : performance.now() - arrived,
      keyId: request.caller?.key.id ?? null,
      tier: request.caller?.tier.name ?? null,
      ip: request.ip,
      problemCode: request.problemCode,
      fast: false,
      units: request.unitsTaken,
      countedAt: request.countedAt,
    });
    done();
  });

  // The fast entry answers repeated reads before Fastify; with the speed switch off, Fastify answers all.
  listener = speed.fastEntry({
    admission,
    auth: services.auth,
    limiter: services.limiter,
    answers,
    record,
    log: app.log,
    clock,
    commonHeaders: common,
    trust,
    closing: () => closing,
    next: fastifyListener as RequestListener,
  });

  foldEnumCase(app);
  pointerRoutes(app);
  healthRoutes(app, { stores });
  metricsRoutes(app, { metrics });
  const heavyReads = createHeavyReads({
    total: config.heavyReadsInFlight,
    perClient: config.heavyReadsPerClient,
    waiting: 4 * config.heavyReadsPerClient,
  });
  priceRoutes(app, {
    prices: services.prices,
    keyGuard,
    answers,
    freshMs: config.readCacheMs,
    clock,
    heavyReads,
    ...(deps.buildHeavy && { buildHeavy: deps.buildHeavy }),
  });
  cheapestRoutes(app, { cheapest: services.cheapest, keyGuard, answers, freshMs: config.readCacheMs, clock });
  deviceRoutes(app, { prices: services.prices, keyGuard, answers, clock });
  priceWriteRoutes(app, {
    prices: stores.prices,
    imports: services.imports,
    keyGuard,
  });
  seriesRoutes(app, { prices: services.prices, keyGuard });
  tariffRoutes(app, { tariffs: config.tariffs, keyGuard });
  seriesAdminRoutes(app, { series: services.series, keyGuard });
  sourceRoutes(app, { sources: deps.sources, configured: config.sources, keyGuard });
  usageRoutes(app, { limiter: services.limiter, keyGuard, clock });
  if (services.usage)
    usageHistoryRoutes(app, {
      usage: services.usage,
      keys: services.keys,
      tiers: Object.keys(config.tiers),
      keyGuard,
      clock,
    });
  auditRoutes(app, { audit: services.audit, keyGuard });
  consoleSignInRoutes(app, { keyGuard });
  mcpRoutes(app, { keyGuard });
  llmsTxtRoute(app);
  if (services.webhooks) webhookRoutes(app, { webhooks: services.webhooks, events: stores.events, keyGuard });
  eventRoutes(app, {
    events: stores.events,
    prices: services.prices,
    keyGuard,
    clock,
    metrics,
    countUnsent: (response, bytes) => countUnsent(response, bytes),
    ...(deps.eventStreams && { options: deps.eventStreams }),
  });
  invitationRoutes(app, { invitations: services.invitations, keyGuard, publicUrl: config.publicUrl });
  const keyChanged = (keyId: string) => {
    // This instance forgets at once; the others when the notice reaches them (or their cache expires).
    services.auth.forget();
    stores.notices.publish({ kind: 'keys', keyIds: [keyId] }).catch((error: unknown) => {
      metrics.storeErrors.inc({ store: 'notices' });
      app.log.warn(
        { err: error },
        'publishing a key change failed; other instances see it when their key cache expires',
      );
    });
  };
  keyRoutes(app, { keys: services.keys, keyGuard, clock, changed: keyChanged });
  ownKeyRoutes(app, { keys: services.keys, keyGuard, changed: keyChanged });

  return app;
}
