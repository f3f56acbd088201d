/**
 * The admit step of every keyed request: authenticate, count against the tier's limits, check the
 * scope. On the Fastify path it is the route's `onRequest` hook, before body parsing and validation,
 * so an unauthenticated caller learns nothing else and a refused request costs almost nothing.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors/api-error.js';
import type { Tier } from '../../domain/limits/tiers.js';
import type { Authenticator, Credentials, KeyMemo } from '../../services/authenticator.js';
import type { RateLimiter } from '../../services/rate-limiter.js';
import { hasScope, type KeyRecord, type Scope } from '../../stores/types.js';
import { rateLimitHeaders } from './rate-limit-headers.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified caller; set by the key guard on keyed routes, `null` elsewhere. */
    caller: { key: KeyRecord; tier: Tier } | null;
    /** Rate-limit headers for this request's answer, whatever its status. */
    limitHeaders: Record<string, string> | null;
    /** Rate-limit units the key guard took for this request (usage history); 0 when none. */
    unitsTaken: number;
    /** When the key guard counted this request's limits (app-clock ms); `null` when it did not. */
    countedAt: number | null;
  }
}

export interface KeyGuardOptions {
  /** `false` for endpoints that are keyed but not counted (`/usage`). */
  readonly count?: boolean;
  /** The scope the route needs; `read` by default. */
  readonly scope?: Scope;
  /**
   * What the request weighs in rate-limit units (docs/using-the-api.md "Rate limits"), worked out from its URL
   * after authentication, so that it is counted in one step, all or nothing; 1 without it.
   */
  readonly weigh?: (request: FastifyRequest) => Promise<number>;
}

/**
 * The error of a key without `scope`, `undefined` for one that has it: the one scope check of the
 * admit step, on either entry.
 * @example scopeRefusal(key, 'read') // undefined for a read key
 */
export function scopeRefusal(key: KeyRecord, scope: Scope): ApiError | undefined {
  if (hasScope(key.scopes, scope)) return undefined;
  return new ApiError('insufficient_scope', `This needs a key with the ${scope} scope.`, {
    extra: { requiredScope: scope },
  });
}

/** How the admit step of one app works: made once by `buildApp`, never shared between apps. */
export interface AdmitOptions {
  /**
   * Remember per connection the key its client sent last, so that a key sent again is not hashed
   * again (authenticator.ts `KeyMemo`): on with the speed switch (../../speed/README.md).
   */
  readonly keyMemo: boolean;
}

/** A verdict the fast entry reached and left to the route's guard, with the instant the request came. */
interface HandedOver {
  readonly verdict: Promise<KeyRecord>;
  readonly arrived: number;
}

/**
 * The admit step of the request pipeline (../README.md): who calls (key), under which tier, whether
 * its limits allow it, whether its key has the scope. Both entries use one instance: the Fastify
 * hook of each keyed route (`guard`) and the fast entry (`credentials`, `handOver`).
 */
export interface Admission {
  /** The `onRequest` hook of a keyed route, made once per route. */
  readonly guard: KeyGuard;
  /**
   * What a request presents to the authenticator: its key headers and query, and its client address
   * `ip`. `gatedLater` when it is counted with its address' failed-login budget as a gate (see
   * `Credentials`). `headers`: the request's, when the caller holds them already.
   */
  credentials(
    raw: IncomingMessage,
    ip: string,
    gatedLater: boolean,
    headers?: IncomingHttpHeaders,
  ): Credentials;
  /**
   * Leaves the fast entry's key check of `raw` (and the instant, `performance.now()`, it arrived) to
   * the guard of the route that answers it: a request is authenticated once, and a failed attempt
   * counted once, whichever way it came in.
   */
  handOver(raw: IncomingMessage, verdict: Promise<KeyRecord>, arrived: number): void;
  /** When the fast entry handed `raw` over: the instant it arrived, so its latency counts from there. */
  arrivedAt(raw: IncomingMessage): number | undefined;
}

export type KeyGuard = (
  options?: KeyGuardOptions,
) => (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

export function createAdmission(auth: Authenticator, limiter: RateLimiter, options: AdmitOptions): Admission {
  const memos = new WeakMap<object, KeyMemo>();
  const handedOver = new WeakMap<IncomingMessage, HandedOver>();

  function memoOf(socket: object): KeyMemo {
    let memo = memos.get(socket);
    if (memo === undefined) {
      memo = { key: undefined, print: undefined, query: undefined };
      memos.set(socket, memo);
    }
    return memo;
  }

  function credentials(
    raw: IncomingMessage,
    ip: string,
    gatedLater: boolean,
    headers: IncomingHttpHeaders = raw.headers,
  ): Credentials {
    const url = raw.url ?? '';
    const mark = url.indexOf('?');
    return {
      apiKeyHeader: headers['x-api-key'],
      authorization: headers.authorization,
      query: mark < 0 ? '' : url.slice(mark + 1),
      ip,
      gatedLater,
      ...(options.keyMemo && { memo: memoOf(raw.socket) }),
    };
  }

  const guard: KeyGuard = (routeOptions = {}) =>
    async function admit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      const counted = routeOptions.count !== false;
      const key = await (handedOver.get(request.raw)?.verdict ??
        auth.authenticate(credentials(request.raw, request.ip, counted)));
      request.caller = { key, tier: limiter.tierOf(key) };
      if (counted) {
        try {
          const weight = routeOptions.weigh === undefined ? 1 : await routeOptions.weigh(request);
          // The failed-login budget in the same store call: one Redis round trip per request.
          const taken = await limiter.take(key, request.ip, weight, auth.failureGate(request.ip));
          request.limitHeaders = rateLimitHeaders(taken.decision, taken.nowMs, taken.cost);
          request.unitsTaken = taken.cost;
          request.countedAt = taken.nowMs;
        } catch (error) {
          const limits = error instanceof ApiError ? error.options.limits : undefined;
          if (limits) {
            request.limitHeaders = rateLimitHeaders(limits.decision, limits.nowMs, limits.cost);
            request.countedAt = limits.nowMs;
          }
          throw error;
        }
        reply.headers(request.limitHeaders);
      }
      // Checked after counting: a refused scope is an authenticated request like any other.
      const refused = scopeRefusal(key, routeOptions.scope ?? 'read');
      if (refused !== undefined) throw refused;
    };

  return {
    guard,
    credentials,
    handOver(raw, verdict, arrived) {
      // A route without a guard (none can match what the fast entry hands over) must not leave it unhandled.
      verdict.catch(() => {});
      handedOver.set(raw, { verdict, arrived });
    },
    arrivedAt: (raw) => handedOver.get(raw)?.arrived,
  };
}
