/**
 * The fast entry point of the API (docs/api.md, bench/README.md): a repeated read of a day that is
 * already answered in the answer cache, by a key that is already verified, is served straight from
 * the Node request listener, before Fastify builds its request and reply and runs its hooks.
 *
 * It restates none of the full path: it makes the same key, query-key and scope checks
 * (authenticator.ts, key-guard.ts), counts through the same limiter, writes the same header table
 * (response-headers.ts) and the same answer (caching.ts `answerHead`), and records the request
 * through the same recorder (request-recorder.ts). A parity test (test/http/fast-path-parity.test.ts)
 * proves both paths answer and log alike; `PRICEPOINT_FAST_PATH=false` switches this one off.
 *
 * It only ever serves the happy case. Anything else (no cached answer, a body not compressed yet, a
 * key not in the cache or without the scope, a refused limit, a store error, a HEAD or a shutdown)
 * is handed to Fastify before a byte is written, and nothing was counted: a refusal takes no units
 * and the key check counts no failure here.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyBaseLogger } from 'fastify';
import type { LimitReport } from '../domain/limits/fixed-window.js';
import type { Authenticator } from '../services/authenticator.js';
import type { RateLimiter } from '../services/rate-limiter.js';
import { andThen, type Maybe } from '../stores/maybe.js';
import type { KeyRecord } from '../stores/types.js';
import { type AnswerCache, answerKey } from './answer-cache.js';
import { answerCoding, answerHead } from './caching.js';
import { scopeRefusal } from './key-guard.js';
import { addRateLimitFields } from './rate-limit-headers.js';
import type { RequestRecorder } from './request-recorder.js';

export interface FastPathDeps {
  readonly auth: Authenticator;
  readonly limiter: RateLimiter;
  readonly answers: AnswerCache;
  readonly record: RequestRecorder;
  readonly log: FastifyBaseLogger;
  readonly clock: () => number;
  /** Headers every answer carries (response-headers.ts), as the full path sets them. */
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
    const url = req.url as string;
    const mark = url.indexOf('?');
    const query = mark < 0 ? '' : url.slice(mark + 1);
    const key = deps.auth.verifiedFromCache({ apiKeyHeader: apiKey, authorization, query });
    if (key === undefined || scopeRefusal(key, 'read') !== undefined) return false;
    const tier = deps.limiter.tierOf(key);
    const answer = deps.answers.get(answerKey(tier.name, headers.accept, url), deps.clock());
    if (answer === undefined) return false;
    const coding = answerCoding(answer, headers['accept-encoding']);
    const body = coding === undefined ? answer.body : answer.ready[coding];
    if (coding !== undefined && body === undefined) {
      // Compressed once for everyone; the full path waits for it, as it would without this path.
      deps.answers.encoded(answer, coding).catch(() => {});
      return false;
    }
    const ip = clientAddress(req);
    // The failed-login budget and the tier's limits, in one store call.
    return andThen(counted(key, ip), (limits) => {
      if (limits === undefined) return false;
      deps.auth.used(key);
      if (res.headersSent || res.destroyed) return true;
      const id = randomUUID();
      const head = answerHead(answer, coding, body as Buffer, headers['if-none-match']);
      const fields: string[] = [...common, 'x-request-id', id];
      addRateLimitFields(fields, limits.decision, limits.nowMs, limits.cost);
      for (const field of head.fields) fields.push(field);
      res.writeHead(head.status, fields);
      if (head.body === undefined) res.end();
      else res.end(head.body);
      deps.record({
        reqId: id,
        method: 'GET',
        route: answer.route,
        url,
        status: head.status,
        elapsedMs: performance.now() - started,
        keyId: key.id,
        tier: tier.name,
        ip,
        problemCode: null,
        fast: true,
      });
      return true;
    });
  }

  /**
   * Takes one unit of every limit if the address is within its failed-login budget: the decision,
   * or `undefined` when refused or the store failed.
   */
  function counted(key: KeyRecord, ip: string): Maybe<LimitReport | undefined> {
    try {
      const taken = deps.limiter.takeIfAllowed(key, ip, deps.auth.failureGate(ip));
      return taken instanceof Promise ? taken.catch(() => undefined) : taken;
    } catch {
      return undefined; // the full path answers it, and says why
    }
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
    } catch {
      served = false; // a check that throws (a tier no longer configured): the full path says why
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
