/**
 * The `onRequest` hook of every keyed route: authenticate, then count against the tier's limits.
 * It runs before body parsing and validation, so an unauthenticated caller learns nothing else
 * and a refused request costs almost nothing.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors/api-error.js';
import type { Tier } from '../domain/limits/tiers.js';
import type { Authenticator } from '../services/authenticator.js';
import type { RateLimiter } from '../services/rate-limiter.js';
import { hasScope, type KeyRecord, type Scope } from '../stores/types.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified caller; set by the key guard on keyed routes, `null` elsewhere. */
    caller: { key: KeyRecord; tier: Tier } | null;
    /** Rate-limit headers for this request's answer, whatever its status. */
    limitHeaders: Record<string, string> | null;
  }
}

export interface KeyGuardOptions {
  /** `false` for endpoints that are keyed but not counted (`/usage`). */
  readonly count?: boolean;
  /** The scope the route needs; `read` by default. */
  readonly scope?: Scope;
}

export function createKeyGuard(auth: Authenticator, limiter: RateLimiter) {
  return function keyGuard(options: KeyGuardOptions = {}) {
    return async function guard(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
      const key = await auth.authenticate({
        apiKeyHeader: request.headers['x-api-key'],
        authorization: request.headers.authorization,
        query,
        ip: request.ip,
      });
      request.caller = { key, tier: limiter.tierOf(key) };
      if (options.count !== false) {
        try {
          request.limitHeaders = await limiter.take(key, request.ip);
        } catch (error) {
          const headers = (error as { options?: { headers?: Record<string, string> } }).options?.headers;
          if (headers) request.limitHeaders = headers;
          throw error;
        }
        reply.headers(request.limitHeaders);
      }
      // Checked after counting: a refused scope is an authenticated request like any other.
      const scope = options.scope ?? 'read';
      if (!hasScope(key.scopes, scope)) {
        throw new ApiError('insufficient_scope', `This needs a key with the ${scope} scope.`, {
          extra: { requiredScope: scope },
        });
      }
    };
  };
}

export type KeyGuard = ReturnType<typeof createKeyGuard>;
