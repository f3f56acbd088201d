/**
 * The fast entry (./README.md): a repeated read under `/api/v1/prices` (a day, the range, `latest`,
 * `cheapest`) already answered in the answer cache is served straight from Node's request listener,
 * before Fastify builds its request and reply and runs its hooks.
 *
 * It runs the same pipeline steps as the Fastify hooks (src/http/README.md): admit (the same
 * credentials, authenticator, limiter and scope check), answer (the cached answer's fields, coding
 * and 304), headers (the one table) and record (the same recorder). It only ever serves the happy
 * case; anything else (no cached answer, a body not compressed yet, a refused key, scope or limit,
 * a store error, a HEAD or a shutdown) is handed to Fastify before a byte is written, with its key
 * check, so Fastify neither asks the key store again nor counts a failure twice.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
// The global `performance` is a getter on the global object, looked up again on every use even
// in optimised code; the module's binding is read like any import.
import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import type { LimitReport } from '../domain/limits/fixed-window.js';
import type { Admission } from '../http/pipeline/admit.js';
import { scopeRefusal } from '../http/pipeline/admit.js';
import { answerCoding, answerFields, answerStatus } from '../http/pipeline/answer.js';
import {
  type AnswerCache,
  answerKey,
  type CachedAnswer,
  type Coding,
} from '../http/pipeline/answer-cache.js';
import { RATE_LIMIT_FIELDS, rateLimitValues } from '../http/pipeline/rate-limit-headers.js';
import type { RequestRecorder } from '../http/pipeline/record.js';
import { clientAddress, type TrustFunction } from '../http/transport/trust.js';
import type { Authenticator } from '../services/authenticator.js';
import type { RateLimiter } from '../services/rate-limiter.js';
import type { KeyRecord } from '../stores/types.js';
import {
  checkFields,
  keptFieldsSymbol,
  type PreparedHead,
  preparedHead,
  trustedHeadWriter,
} from './trusted-head.js';

/** A cached answer found for a request, with its body in the client's coding, and the caller's tier. */
interface Found {
  readonly answer: CachedAnswer;
  readonly coding: Coding | undefined;
  readonly body: Buffer;
  readonly tier: string;
}

export interface FastEntryDeps {
  readonly admission: Admission;
  readonly auth: Authenticator;
  readonly limiter: RateLimiter;
  readonly answers: AnswerCache;
  readonly record: RequestRecorder;
  readonly log: FastifyBaseLogger;
  readonly clock: () => number;
  /** Headers every answer carries (src/http/pipeline/headers.ts), as the Fastify hooks set them. */
  readonly commonHeaders: Readonly<Record<string, string>>;
  /** The proxies whose `X-Forwarded-For` is believed, compiled once for Fastify and this entry. */
  readonly trust: TrustFunction | undefined;
  /** True once the server is closing: Fastify then answers 503. */
  readonly closing: () => boolean;
  /** Fastify's own listener, which answers everything the fast entry does not. */
  readonly next: (req: IncomingMessage, res: ServerResponse) => void;
}

/**
 * The URLs of the counted read routes the answer cache can hold (every route under /api/v1/prices):
 * a strict subset of what Fastify's router sends to them, so a request the fast entry
 * authenticates is one that Fastify would authenticate and count the same way.
 */
const SERVABLE = /^\/api\/v1\/prices(?:\/[0-9A-Za-z-]{1,32})?(?:\?|$)/;

/**
 * A request listener that serves what it can and passes everything else to `deps.next`.
 * @example https.createServer(tls, createFastEntry({ ...deps, next: fastifyListener }))
 */
export function createFastEntry(deps: FastEntryDeps) {
  const next = deps.next;
  const trusted = deps.trust;
  const common = Object.entries(deps.commonHeaders).flat();
  // Heads are written with fields checked once, not by Node on every request (trusted-head.ts): the
  // common table here, an answer's own fields when its head is prepared. The values given per
  // request are a UUID, digits and limit names the settings hold to `[a-z0-9_-]`.
  const writeHead = trustedHeadWriter(keptFieldsSymbol());
  checkFields(common);

  // The heads of each answer, prepared the first time each is written: in each coding, as a 200 or
  // a 304, and with or without rate-limit fields (a tier may have no limits).
  const heads = new WeakMap<CachedAnswer, (PreparedHead | undefined)[]>();
  const CODING_INDEX: Record<Coding, number> = { br: 1, gzip: 2 };
  const limitSlots = RATE_LIMIT_FIELDS.flatMap((name) => [name, '']);

  function headOf(
    answer: CachedAnswer,
    coding: Coding | undefined,
    body: Buffer,
    status: 200 | 304,
    limited: boolean,
  ): PreparedHead {
    let all = heads.get(answer);
    if (all === undefined) {
      all = [];
      heads.set(answer, all);
    }
    const index =
      (coding === undefined ? 0 : CODING_INDEX[coding]) * 4 + (status === 304 ? 2 : 0) + (limited ? 1 : 0);
    let head = all[index];
    if (head === undefined) {
      const own = answerFields(answer, coding, body, status);
      checkFields(own);
      const fields = [...common, 'x-request-id', '', ...(limited ? limitSlots : []), ...own];
      head = preparedHead(fields, limited ? ['x-request-id', ...RATE_LIMIT_FIELDS] : ['x-request-id']);
      all[index] = head;
    }
    return head;
  }

  /**
   * Serves the request if it can, else hands it to the full path untouched, with its key check. A
   * refusal on the way (a 401, a 429, a tier no longer configured, a store error) is the full
   * path's to answer, and to say why; so is any other error before the head is written, which the
   * full path meets again and reports. The promise never rejects.
   */
  async function serve(
    req: IncomingMessage,
    res: ServerResponse,
    headers: IncomingHttpHeaders,
    started: number,
  ): Promise<void> {
    let verdict: Promise<KeyRecord> | undefined;
    try {
      const ip = clientAddress(req, trusted);
      // Counted with the failed-login budget as its gate below, as the key guard counts it.
      verdict = deps.auth.authenticate(deps.admission.credentials(req, ip, true, headers));
      const key = await verdict;
      const found = cachedFor(req, headers, key);
      if (found !== undefined) {
        // The failed-login budget and the tier's limits, in one store call; a refusal takes nothing.
        const limits = await deps.limiter.take(key, ip, 1, deps.auth.failureGate(ip));
        if (!res.headersSent && !res.destroyed) write(req, res, headers, started, ip, key, found, limits);
        return;
      }
    } catch (error) {
      if (res.headersSent) {
        deps.log.error({ err: error }, 'the fast entry failed after writing its head');
        return;
      }
    }
    if (verdict !== undefined) deps.admission.handOver(req, verdict, started);
    next(req, res);
  }

  /** The cached answer to a request by `key`, with its body in the client's coding, if there is one. */
  function cachedFor(req: IncomingMessage, headers: IncomingHttpHeaders, key: KeyRecord): Found | undefined {
    if (scopeRefusal(key, 'read') !== undefined) return undefined;
    const tier = deps.limiter.tierOf(key).name;
    const answer = deps.answers.get(answerKey(tier, headers.accept, req.url as string), deps.clock());
    if (answer === undefined) return undefined;
    const coding = answerCoding(answer, headers['accept-encoding'], deps.answers);
    const body = coding === undefined ? answer.body : answer.ready[coding];
    if (body === undefined) {
      // Compressed once for everyone; the full path waits for it, as it would without this path.
      deps.answers.encoded(answer, coding as Coding).catch(() => {});
      return undefined;
    }
    return { answer, coding, body, tier };
  }

  /** Writes the answer found for a request whose limits took it. */
  function write(
    req: IncomingMessage,
    res: ServerResponse,
    headers: IncomingHttpHeaders,
    started: number,
    ip: string,
    key: KeyRecord,
    { answer, coding, body, tier }: Found,
    limits: LimitReport,
  ): void {
    const url = req.url as string;
    const id = randomUUID();
    const status = answerStatus(answer, coding, headers['if-none-match']);
    // A request on this path was allowed, so a tier with limits has one that binds and fills the slots.
    const limited = limits.decision.states.length > 0;
    const head = headOf(answer, coding, body, status, limited);
    const values = head.values;
    values[0] = id;
    if (limited) rateLimitValues(values, 1, limits.decision, limits.nowMs, limits.cost);
    writeHead(res, status, head);
    if (status === 304) res.end();
    else res.end(body);
    deps.record({
      reqId: id,
      method: 'GET',
      route: answer.route,
      url,
      status,
      elapsedMs: performance.now() - started,
      keyId: key.id,
      tier,
      ip,
      problemCode: null,
      fast: true,
      units: limits.cost,
      countedAt: limits.nowMs,
    });
  }

  return function listener(req: IncomingMessage, res: ServerResponse): void {
    const headers = req.headers;
    if (
      req.method !== 'GET' ||
      (headers['x-api-key'] === undefined && headers.authorization === undefined) ||
      !SERVABLE.test(req.url as string) ||
      deps.closing()
    ) {
      next(req, res);
      return;
    }
    void serve(req, res, headers, performance.now());
  };
}
