/**
 * `GET /api/v1/usage` (docs/api.md): the calling key's tier, its limits and what is left. It is
 * keyed but not counted, so a client may ask as often as it likes, also when a limit is used up; its
 * rate-limit headers come from a peek and describe the counted endpoints.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { RateLimiter } from '../../services/rate-limiter.js';
import { jsonAnswer, RATE_LIMIT_HEADERS, uncountedErrors } from '../contract/schemas.js';
import type { KeyGuard } from '../pipeline/admit.js';
import { rateLimitHeaders } from '../pipeline/rate-limit-headers.js';

const UsageSchema = Type.Object({
  keyId: Type.String(),
  tier: Type.String(),
  limits: Type.Array(
    Type.Object({
      name: Type.String(),
      limit: Type.Integer(),
      windowSeconds: Type.Integer(),
      remaining: Type.Integer({ description: 'Requests left in the current window.' }),
      resetAt: Type.String({ format: 'date-time', description: 'When the current window ends, RFC 3339.' }),
    }),
  ),
  kinds: Type.Union([Type.Array(Type.String()), Type.Null()], {
    description: 'Series kinds the tier may read; null: every kind.',
  }),
  historyDays: Type.Union([Type.Integer(), Type.Null()], {
    description: 'How many days back the tier may read; null: unlimited.',
  }),
});
const NoQuery = Type.Object({}, { additionalProperties: false });

export function usageRoutes(
  app: FastifyInstance,
  deps: { limiter: RateLimiter; keyGuard: KeyGuard; clock: () => number },
): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  api.get(
    '/api/v1/usage',
    {
      onRequest: deps.keyGuard({ count: false }),
      schema: {
        operationId: 'getUsage',
        summary: 'Tier, limits and what is left',
        description:
          'Not counted against any limit. Its rate-limit headers describe the counted endpoints, without taking from them.',
        tags: ['usage'],
        querystring: NoQuery,
        response: {
          200: jsonAnswer("The calling key's tier and limits.", UsageSchema, RATE_LIMIT_HEADERS),
          ...uncountedErrors(),
        },
      },
    },
    async (request, reply) => {
      const { key, tier } = request.caller!;
      const now = deps.clock();
      const decision = await deps.limiter.peek(key, request.ip);
      // The same headers a counted request would carry, minus Retry-After: this answer is no refusal.
      const { 'retry-after': _retry, ...headers } = rateLimitHeaders(decision, now);
      request.limitHeaders = headers;
      reply.header('cache-control', 'no-store');
      return {
        keyId: key.id,
        tier: tier.name,
        limits: decision.states.map((s) => ({
          name: s.rule.name,
          limit: s.rule.limit,
          windowSeconds: s.rule.windowSeconds,
          remaining: s.remaining,
          resetAt: new Date(s.resetAtMs).toISOString(),
        })),
        kinds: tier.kinds === null ? null : [...tier.kinds],
        historyDays: tier.historyDays,
      };
    },
  );
}
