/** Liveness and readiness: no key, not counted. */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors/api-error.js';
import type { Stores } from '../../stores/types.js';
import { jsonAnswer, openErrors } from '../schemas.js';

const Check = Type.Union([Type.Literal('ok'), Type.Literal('unreachable')]);

export function healthRoutes(app: FastifyInstance, deps: { stores: Stores }): void {
  app.get(
    '/healthz',
    {
      schema: {
        summary: 'Liveness',
        description: 'The process is up and answering. It checks nothing else.',
        tags: ['meta'],
        security: [],
        response: {
          200: jsonAnswer('The process is alive.', Type.Object({ status: Type.Literal('ok') })),
          ...openErrors(500, 503),
        },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return { status: 'ok' };
    },
  );

  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness',
        description:
          'Every store answers. A 503 names the unreachable ones in `checks`; take the instance out of rotation. With Redis away, a 200 says `degraded` unless the fallback policy is `closed`.',
        tags: ['meta'],
        security: [],
        response: {
          200: jsonAnswer(
            'The instance can serve. `degraded`: Redis is away and rate limits follow the local or open fallback policy.',
            Type.Object({
              status: Type.Union([Type.Literal('ready'), Type.Literal('degraded')]),
              checks: Type.Object({ prices: Check, keys: Check, redis: Type.Optional(Check) }),
              fallback: Type.Optional(
                Type.Union([Type.Literal('local'), Type.Literal('open'), Type.Literal('closed')], {
                  description: 'What rate limits do while Redis is away.',
                }),
              ),
            }),
          ),
          ...openErrors(500, 503),
        },
      },
    },
    async (_request, reply) => {
      const checks: Record<string, 'ok' | 'unreachable'> = {};
      await Promise.all(
        (['prices', 'keys'] as const).map(async (name) => {
          try {
            await deps.stores[name].ping();
            checks[name] = 'ok';
          } catch {
            checks[name] = 'unreachable';
          }
        }),
      );
      const shared = deps.stores.shared;
      if (shared) {
        try {
          await shared.ping();
          checks.redis = shared.degraded() ? 'unreachable' : 'ok';
        } catch {
          checks.redis = 'unreachable';
        }
      }
      // Without Redis an instance still serves under the local or open policy: degraded, not down.
      const redisDown = checks.redis === 'unreachable';
      if (checks.prices !== 'ok' || checks.keys !== 'ok' || (redisDown && shared?.fallback === 'closed')) {
        throw new ApiError('service_unavailable', 'A store cannot be reached.', {
          extra: { checks, ...(shared && { fallback: shared.fallback }) },
        });
      }
      reply.header('cache-control', 'no-store');
      return {
        status: redisDown ? 'degraded' : 'ready',
        checks,
        ...(shared && { fallback: shared.fallback }),
      };
    },
  );
}
