/**
 * The hot path of the API (issue 6): a repeated read of a day that is already answered in the
 * answer cache, by a key that is already verified, is served straight from the Node request
 * listener, before Fastify builds its request and reply and runs its hooks. It does the same checks
 * in the same order as the full path and writes the same headers, log line and metrics.
 *
 * It only ever serves the happy case. Anything else (no cached answer, a key not in the cache, a
 * refused limit, a store error, a HEAD or a shutdown) is handed to Fastify before a byte is written,
 * and nothing was counted: a refusal takes no units and the key check counts no failure here.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyBaseLogger } from 'fastify';
import { maskKeysInUrl } from '../domain/keys/key-format.js';
import type { Authenticator } from '../services/authenticator.js';
import type { RateLimiter } from '../services/rate-limiter.js';
import { andThen, type Maybe } from '../stores/maybe.js';
import type { KeyRecord } from '../stores/types.js';
import { type AnswerCache, answerKey, type CachedAnswer, MIN_COMPRESS_BYTES } from './answer-cache.js';
import { codedTag, noneMatch, preferredCoding, VARY } from './caching.js';
import type { Metrics } from './metrics.js';
import { requestLineWriter } from './request-log.js';

export interface FastPathDeps {
  readonly auth: Authenticator;
  readonly limiter: RateLimiter;
  readonly answers: AnswerCache;
  readonly metrics: Metrics;
  readonly log: FastifyBaseLogger;
  readonly clock: () => number;
  /** Headers every answer carries (nosniff, HSTS on HTTPS, CORS), as the full path sets them. */
  readonly commonHeaders: Readonly<Record<string, string>>;
  /** Proxies whose `X-Forwarded-For` is believed, as Fastify's `trustProxy`. */
  readonly trustProxy: readonly string[];
  /** True once the server is closing: Fastify then answers 503. */
  readonly closing: () => boolean;
  /** Fastify's own listener, which answers everything the fast path does not. */
  readonly next: (req: IncomingMessage, res: ServerResponse) => void;
}

const PREFIX = '/api/v1/prices';

/**
 * A request listener that serves what it can and passes everything else to `deps.next`.
 * @example https.createServer(tls, createFastPath({ ...deps, next: fastifyListener }))
 */
export function createFastPath(deps: FastPathDeps) {
  const trusted = deps.trustProxy.length > 0 ? proxyAddr.compile([...deps.trustProxy]) : undefined;
  const common = Object.entries(deps.commonHeaders).flat();
  const logLine = requestLineWriter(deps.log);

  // The metrics' label sets, looked up once per route and tier rather than hashed per request.
  const instruments = new Map<string, ReturnType<typeof labelled>>();
  const labelled = (route: string, tier: string) => ({
    ok: deps.metrics.requests.labels({ route, method: 'GET', status: 200, tier }),
    notModified: deps.metrics.requests.labels({ route, method: 'GET', status: 304, tier }),
    fast: deps.metrics.fastAnswers.labels({ route }),
    latency: deps.metrics.latency.labels({ route, method: 'GET' }),
  });
  function instrumentsOf(route: string, tier: string) {
    const id = `${route}\n${tier}`;
    let found = instruments.get(id);
    if (found === undefined) {
      found = labelled(route, tier);
      instruments.set(id, found);
    }
    return found;
  }

  function clientAddress(req: IncomingMessage): string {
    if (trusted === undefined) return req.socket.remoteAddress ?? '';
    const all = proxyAddr.all(req, trusted);
    return all[all.length - 1] ?? '';
  }

  /**
   * Serves the request if it can: `true` once answered, `false` to hand it on untouched. With the
   * embedded default every step answers at once, so a request is served within the turn it arrived
   * in; a store that answers over the network (Redis) makes it a promise of the same.
   */
  function serve(req: IncomingMessage, res: ServerResponse, started: number): Maybe<boolean> {
    const headers = req.headers;
    const apiKey = headers['x-api-key'];
    const authorization = headers.authorization;
    if (apiKey === undefined && authorization === undefined) return false;
    const ip = clientAddress(req);
    const key = deps.auth.verifiedFromCache({ apiKeyHeader: apiKey, authorization });
    if (key === undefined) return false;
    const tier = deps.limiter.tierOf(key);
    const url = req.url as string;
    const answer = deps.answers.get(answerKey(tier.name, headers.accept, url), deps.clock());
    if (answer === undefined) return false;
    // The failed-login budget and the tier's limits, in one store call.
    return andThen(counted(key, ip), (limitHeaders) => {
      if (limitHeaders === undefined) return false;
      deps.auth.used(key);
      if (res.headersSent || res.destroyed) return true;
      const id = randomUUID();
      const status = write(req, res, answer, limitHeaders, id);
      const elapsed = performance.now() - started;
      const instruments = instrumentsOf(answer.route, tier.name);
      (status === 200 ? instruments.ok : instruments.notModified).inc();
      instruments.fast.inc();
      instruments.latency.observe(elapsed / 1000);
      logLine({
        reqId: id,
        method: 'GET',
        url: maskKeysInUrl(url),
        status,
        latencyMs: Math.round(elapsed * 100) / 100,
        keyId: key.id,
        tier: tier.name,
        ip,
      });
      return true;
    });
  }

  /**
   * Takes one unit of every limit if the address is within its failed-login budget: the headers, or
   * `undefined` when refused or the store failed.
   */
  function counted(key: KeyRecord, ip: string): Maybe<Record<string, string> | undefined> {
    try {
      const taken = deps.limiter.takeIfAllowed(key, ip, deps.auth.failureGate(ip));
      return taken instanceof Promise ? taken.catch(() => undefined) : taken;
    } catch {
      return undefined; // the full path answers it, and says why
    }
  }

  /** Writes the answer (or 304) with every header the full path would send; returns the status. */
  function write(
    req: IncomingMessage,
    res: ServerResponse,
    answer: CachedAnswer,
    limitHeaders: Record<string, string>,
    id: string,
  ): number {
    let coding =
      answer.body.length >= MIN_COMPRESS_BYTES ? preferredCoding(req.headers['accept-encoding']) : undefined;
    let body = answer.body;
    if (coding !== undefined) {
      const ready = answer.ready[coding];
      if (ready === undefined) {
        // Compressed once for everyone, in the background; this answer goes out as it is.
        deps.answers.encoded(answer, coding).catch(() => {});
        coding = undefined;
      } else body = ready;
    }
    const etag = codedTag(answer.etag, coding);
    const head: string[] = [...common, 'x-request-id', id];
    for (const name in limitHeaders) head.push(name, limitHeaders[name] as string);
    head.push('etag', etag, 'cache-control', `private, max-age=${answer.maxAge}`, 'vary', VARY);
    const held = req.headers['if-none-match'];
    if (held !== undefined && (noneMatch(held, etag) || noneMatch(held, answer.etag))) {
      res.writeHead(304, head).end();
      return 304;
    }
    head.push('content-type', answer.type, 'content-length', String(body.length));
    if (coding !== undefined) head.push('content-encoding', coding);
    res.writeHead(200, head).end(body);
    return 200;
  }

  const next = deps.next;
  return function listener(req: IncomingMessage, res: ServerResponse): void {
    if (req.method !== 'GET' || !req.url?.startsWith(PREFIX) || deps.closing()) {
      next(req, res);
      return;
    }
    let served: Maybe<boolean>;
    try {
      served = serve(req, res, performance.now());
    } catch (error) {
      served = Promise.reject(error);
    }
    if (served === true) return;
    if (served === false) {
      next(req, res);
      return;
    }
    served.then(
      (done) => {
        if (!done) next(req, res);
      },
      (error: unknown) => {
        deps.log.error({ err: error }, 'the fast path failed; the full path answers');
        if (!res.headersSent) next(req, res);
      },
    );
  };
}
