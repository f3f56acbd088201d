/**
 * The one recorder of an answered request, for the full path (app.ts `onResponse`) and the fast
 * entry point (fast-path.ts): the metrics first, then the log line, through one logger. The URL is
 * masked and no header is logged.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { ErrorCode } from '../domain/errors/api-error.js';
import { maskKeysInUrl } from '../domain/keys/key-format.js';
import type { Metrics } from './metrics.js';
import { requestLineWriter } from './request-log.js';

/** What is known of a request once it is answered. */
export interface AnsweredRequest {
  readonly reqId: string;
  readonly method: string;
  /** The route template (`/api/v1/prices/:date`), or `unmatched`. */
  readonly route: string;
  /** The URL as the client sent it; masked before it is logged. */
  readonly url: string;
  readonly status: number;
  readonly elapsedMs: number;
  readonly keyId: string | null;
  readonly tier: string | null;
  readonly ip: string;
  /** The problem code answered, `null` for no error. */
  readonly problemCode: ErrorCode | null;
  /** Served by the fast entry point (counted apart as well). */
  readonly fast: boolean;
}

/** Label sets remembered at most: routes, methods, statuses and tiers are few, but bounded anyway. */
const MAX_LABEL_SETS = 4096;

/**
 * @example const record = createRequestRecorder(metrics, app.log); record({ reqId, method: 'GET', ... })
 */
export function createRequestRecorder(metrics: Metrics, log: FastifyBaseLogger) {
  const writeLine = requestLineWriter(log);
  // prom-client hashes a label set on every update; each set is looked up once instead.
  const counters = new Map<string, ReturnType<typeof metrics.requests.labels>>();
  const timers = new Map<string, ReturnType<typeof metrics.latency.labels>>();
  const fast = new Map<string, ReturnType<typeof metrics.fastAnswers.labels>>();
  function remembered<T>(map: Map<string, T>, id: string, make: () => T): T {
    let found = map.get(id);
    if (found === undefined) {
      if (map.size >= MAX_LABEL_SETS) map.clear();
      found = make();
      map.set(id, found);
    }
    return found;
  }

  return function record(r: AnsweredRequest): void {
    const tier = r.tier ?? 'none';
    const { route, method, status } = r;
    remembered(counters, `${route}\n${method}\n${status}\n${tier}`, () =>
      metrics.requests.labels({ route, method, status, tier }),
    ).inc();
    remembered(timers, `${route}\n${method}`, () => metrics.latency.labels({ route, method })).observe(
      r.elapsedMs / 1000,
    );
    if (r.fast) remembered(fast, route, () => metrics.fastAnswers.labels({ route })).inc();
    const code = r.problemCode;
    if (code === 'rate_limited') metrics.rateLimited.inc({ tier });
    else if (code !== null && (status === 401 || code === 'too_many_auth_failures')) {
      metrics.authFailures.inc({ code });
    }
    writeLine({
      reqId: r.reqId,
      method,
      url: maskKeysInUrl(r.url),
      status,
      latencyMs: Math.round(r.elapsedMs * 100) / 100,
      keyId: r.keyId,
      tier: r.tier,
      ip: r.ip,
    });
  };
}

export type RequestRecorder = ReturnType<typeof createRequestRecorder>;
