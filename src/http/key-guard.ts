/**
 * The `onRequest` hook of every keyed route: authenticate, then count against the tier's limits.
 * It runs before body parsing and validation, so an unauthenticated caller learns nothing else
 * and a refused request costs almost nothing.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors/api-error.js';
import type { Tier } from '../domain/limits/tiers.js';
import type { Authenticator, Credentials, KeyMemo } from '../services/authenticator.js';
import type { RateLimiter } from '../services/rate-limiter.js';
import { hasScope, type KeyRecord, type Scope } from '../stores/types.js';
import { rateLimitHeaders } from './rate-limit-headers.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified caller; set by the key guard on keyed routes, `null` elsewhere. */
    caller: { key: KeyRecord; tier: Tier } | null;
    /** Rate-limit headers for this request's answer, whatever its status. */
    limitHeaders: Record<string, string> | null;
    /** Rate-limit units the key guard took for this request (usage history); 0 when none. */
    unitsTaken: number;
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
 * key guard and the fast entry point.
 * @example scopeRefusal(key, 'read') // undefined for a read key
 */
export function scopeRefusal(key: KeyRecord, scope: Scope): ApiError | undefined {
  if (hasScope(key.scopes, scope)) return undefined;
  return new ApiError('insufficient_scope', `This needs a key with the ${scope} scope.`, {
    extra: { requiredScope: scope },
  });
}

/**
 * What a request presents to the authenticator: its key headers and query, and its client address
 * (`ip`, as Fastify's `trustProxy` works it out). `gatedLater` when the request is counted with its
 * address' failed-login budget as a gate (see `Credentials`). `headers`: the request's, when the
 * caller holds them already (each read of `raw.headers` goes through Node's getter).
 */
export function requestCredentials(
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
    memo: connectionMemo(raw.socket),
  };
}

/** The key memo of each connection (authenticator.ts `KeyMemo`): it goes with the connection. */
const memos = new WeakMap<object, KeyMemo>();

function connectionMemo(socket: object): KeyMemo {
  let memo = memos.get(socket);
  if (memo === undefined) {
    memo = { key: undefined, print: undefined, query: undefined };
    memos.set(socket, memo);
  }
  return memo;
}

/**
 * Verdicts of the key check for requests the fast entry point (fast-path.ts) authenticated and then
 * handed to Fastify: the guard awaits that verdict instead of authenticating again, so a request is
 * authenticated once, and a failed attempt counted once, whichever way it came in. The fast entry
 * point hands over only requests for the counted read routes, which it authenticates as the guard
 * would (`gatedLater`).
 */
const handedOver = new WeakMap<IncomingMessage, Promise<KeyRecord>>();

/** Leaves the verdict the fast entry point reached for `raw` to the guard of the route that answers it. */
export function handOverVerdict(raw: IncomingMessage, verdict: Promise<KeyRecord>): void {
  // A route without a guard (none can match what the fast path hands over) must not leave it unhandled.
  verdict.catch(() => {});
  handedOver.set(raw, verdict);
}

export function createKeyGuard(auth: Authenticator, limiter: RateLimiter) {
  return function keyGuard(options: KeyGuardOptions = {}) {
    return async function guard(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      const key = await (handedOver.get(request.raw) ??
        auth.authenticate(requestCredentials(request.raw, request.ip, options.count !== false)));
      request.caller = { key, tier: limiter.tierOf(key) };
      if (options.count !== false) {
        try {
          const weight = options.weigh === undefined ? 1 : await options.weigh(request);
          // The failed-login budget in the same store call: one Redis round trip per request.
          const taken = await limiter.take(key, request.ip, weight, auth.failureGate(request.ip));
          request.limitHeaders = rateLimitHeaders(taken.decision, taken.nowMs, taken.cost);
          request.unitsTaken = taken.cost;
        } catch (error) {
          const limits = error instanceof ApiError ? error.options.limits : undefined;
          if (limits) request.limitHeaders = rateLimitHeaders(limits.decision, limits.nowMs, limits.cost);
          throw error;
        }
        reply.headers(request.limitHeaders);
      }
      // Checked after counting: a refused scope is an authenticated request like any other.
      const refused = scopeRefusal(key, options.scope ?? 'read');
      if (refused !== undefined) throw refused;
    };
  };
}

export type KeyGuard = ReturnType<typeof createKeyGuard>;
