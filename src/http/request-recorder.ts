/**
 * The one recorder of an answered request, for the full path (app.ts `onResponse`) and the fast
 * entry point (fast-path.ts): the metrics first, then the log line, through one logger. The URL is
 * masked and no header is logged.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { ErrorCode } from '../domain/errors/api-error.js';
import { maskKeysInUrl } from '../domain/keys/key-format.js';
import type { UsageCounter } from '../services/usage-history.js';
import type { CounterSlot, HistogramSlot } from './folded-metrics.js';
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
  /** Rate-limit units the request took: 0 when it was refused or not counted. */
  readonly units: number;
}

/**
 * `usage`: where keyed requests are counted per key and hour (docs/usage-history.md), if anywhere.
 * @example const record = createRequestRecorder(metrics, app.log); record({ reqId, method: 'GET', ... })
 */
export function createRequestRecorder(metrics: Metrics, log: FastifyBaseLogger, usage?: UsageCounter) {
  const writeLine = requestLineWriter(log);
  // The metric slots of each label set, found by plain lookups of the request's own values. Label
  // sets are few and bounded: route templates, the methods Node's parser knows, statuses, tiers.
  type Nested<V> = Map<string | number, V>;
  const counters: Nested<Nested<Nested<Nested<CounterSlot>>>> = new Map();
  const timers: Nested<Nested<HistogramSlot>> = new Map();
  const fast = new Map<string, CounterSlot>();

  /** The value under `key` in `map`, made by `make` the first time. */
  function kept<K, V>(map: Map<K, V>, key: K, make: () => V): V {
    const found = map.get(key);
    if (found !== undefined) return found;
    const made = make();
    map.set(key, made);
    return made;
  }
  const under = <V>(parent: Nested<Nested<V>>, key: string | number) => kept(parent, key, () => new Map());

  const counterOf = (route: string, method: string, status: number, tier: string): CounterSlot =>
    kept(under(under(under(counters, route), method), status), tier, () =>
      metrics.requests.slot({ route, method, status, tier }),
    );
  const timerOf = (route: string, method: string): HistogramSlot =>
    kept(under(timers, route), method, () => metrics.latency.slot({ route, method }));
  const fastOf = (route: string): CounterSlot => kept(fast, route, () => metrics.fastAnswers.slot({ route }));

  /** The slots of the label set recorded last: a busy client's requests mostly repeat it. */
  let last:
    | {
        route: string;
        method: string;
        status: number;
        tier: string;
        counter: CounterSlot;
        timer: HistogramSlot;
      }
    | undefined;

  /** The URL recorded last, masked: a busy client's next URL is mostly the same (compared, not searched). */
  let lastUrl = '';
  let lastMasked = '';

  return function record(r: AnsweredRequest): void {
    const tier = r.tier ?? 'none';
    const { route, method, status } = r;
    let slots = last;
    if (
      slots === undefined ||
      slots.route !== route ||
      slots.method !== method ||
      slots.status !== status ||
      slots.tier !== tier
    ) {
      slots = {
        route,
        method,
        status,
        tier,
        counter: counterOf(route, method, status, tier),
        timer: timerOf(route, method),
      };
      last = slots;
    }
    slots.counter.n += 1;
    metrics.latency.observe(slots.timer, r.elapsedMs / 1000);
    if (r.fast) fastOf(route).n += 1;
    if (usage !== undefined && r.keyId !== null) usage.count(r.keyId, status, r.units);
    const code = r.problemCode;
    if (code === 'rate_limited') metrics.rateLimited.inc({ tier });
    else if (code !== null && (status === 401 || code === 'too_many_auth_failures')) {
      metrics.authFailures.inc({ code });
    }
    if (r.url !== lastUrl) {
      lastMasked = maskKeysInUrl(r.url);
      lastUrl = r.url;
    }
    writeLine({
      reqId: r.reqId,
      method,
      url: lastMasked,
      status,
      latencyMs: Math.round(r.elapsedMs * 100) / 100,
      keyId: r.keyId,
      tier: r.tier,
      ip: r.ip,
    });
  };
}

export type RequestRecorder = ReturnType<typeof createRequestRecorder>;
