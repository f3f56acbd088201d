/**
 * `GET /api/v1/usage` (docs/api.md): the calling key's tier, its limits and what is left, and its
 * expiry with a warning as it nears. Never the owner fields: those are the operator's. It is
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

/** How long before its expiry `/usage` warns of it: two weeks, time enough to get a new key. */
export const EXPIRY_WARNING_DAYS = 14;
const DAY_MS = 86_400_000;

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
  ownLimits: Type.Boolean({ description: "The limits are the key's own, not its tier's." }),
  selfRotate: Type.Boolean({
    description: 'The key may rotate itself with POST /api/v1/key/rotate (its tier allows it).',
  }),
  expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the key stops working; null: never.',
  }),
  expiryWarning: Type.Union([Type.String(), Type.Null()], {
    description: `Set from ${EXPIRY_WARNING_DAYS} days before the key expires: when, and what to do.`,
  }),
});

/**
 * The warning of a key that expires within `EXPIRY_WARNING_DAYS`, or `null`.
 * @example expiryWarning(now + 3 * 86_400_000, now) // 'This key expires at …, in 3 days: …'
 */
export function expiryWarning(expiresAt: number | null, now: number): string | null {
  if (expiresAt === null || expiresAt - now > EXPIRY_WARNING_DAYS * DAY_MS) return null;
  const days = Math.ceil((expiresAt - now) / DAY_MS);
  const when = days <= 1 ? 'within a day' : `in ${days} days`;
  return `This key expires at ${new Date(expiresAt).toISOString()}, ${when}: ask the operator for a new key before then.`;
}
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
        ownLimits: key.limits != null,
        selfRotate: tier.selfRotate === true,
        expiresAt: key.expiresAt === null ? null : new Date(key.expiresAt).toISOString(),
        expiryWarning: expiryWarning(key.expiresAt, now),
      };
    },
  );
}
