/** Liveness and readiness: no key, not counted. */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors/api-error.js';
import { tzSource } from '../../domain/time/zone.js';
import type { Stores } from '../../stores/types.js';
import { jsonAnswer, openErrors } from '../contract/schemas.js';

const Check = Type.Union([Type.Literal('ok'), Type.Literal('unreachable')]);

/**
 * Stores that can tell a full disk (SQLite, as opened by src/server/serve.ts) carry this: true from
 * a write that failed for lack of space until a price upload succeeds.
 */
export interface DiskReport {
  diskFull(): boolean;
}

export function healthRoutes(app: FastifyInstance, deps: { stores: Stores }): void {
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'getLiveness',
        summary: 'Liveness',
        description:
          'The process is up and answering. It checks nothing else, and says which tz database release its zone rules come from.',
        tags: ['meta'],
        security: [],
        response: {
          200: jsonAnswer(
            'The process is alive.',
            Type.Object({
              status: Type.Literal('ok'),
              tz: Type.Object(
                {
                  release: Type.String({
                    description: 'The IANA tz release, such as `2026f`, or `unknown`.',
                  }),
                  source: Type.Union(
                    [
                      Type.Literal('setting'),
                      Type.Literal('system'),
                      Type.Literal('shipped'),
                      Type.Literal('icu'),
                    ],
                    {
                      description:
                        "`setting`: the folder PRICEPOINT_TZDIR names; `system`: the operating system's zoneinfo; `shipped`: the copy in Pricepoint's tzdata/; `icu`: Node's own data.",
                    },
                  ),
                },
                { description: 'Where zone rules come from (docs/operating.md "Time zone data").' },
              ),
            }),
          ),
          ...openErrors(500, 503),
        },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      const { release, source } = tzSource();
      return { status: 'ok', tz: { release, source } };
    },
  );

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'getReadiness',
        summary: 'Readiness',
        description:
          "Every store answers. A 503 names the unreachable ones in `checks`; take the instance out of rotation. With Redis away, a 200 says `degraded` unless the fallback policy is `closed`. With the database's disk full (SQLite: `checks.disk` is `full`), a 200 says `degraded`: reads are served, writes answer 503 until space is freed.",
        tags: ['meta'],
        security: [],
        response: {
          200: jsonAnswer(
            'The instance can serve. `degraded`: Redis is away and rate limits follow the local or open fallback policy, or the disk is full and writes are refused.',
            Type.Object({
              status: Type.Union([Type.Literal('ready'), Type.Literal('degraded')]),
              checks: Type.Object({
                prices: Check,
                keys: Check,
                redis: Type.Optional(Check),
                disk: Type.Optional(
                  Type.Union([Type.Literal('ok'), Type.Literal('full')], {
                    description:
                      'SQLite only: `full` from a write that failed for lack of space until a write succeeds with more free space on the disk than at that failure.',
                  }),
                ),
              }),
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
      const checks: Record<string, 'ok' | 'unreachable' | 'full'> = {};
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
      const disk = deps.stores as Partial<DiskReport>;
      if (typeof disk.diskFull === 'function') checks.disk = disk.diskFull() ? 'full' : 'ok';
      // Without Redis an instance still serves under the local or open policy, and with a full disk
      // it still serves reads: degraded, not down (every instance shares the one database).
      const redisDown = checks.redis === 'unreachable';
      if (checks.prices !== 'ok' || checks.keys !== 'ok' || (redisDown && shared?.fallback === 'closed')) {
        throw new ApiError('service_unavailable', 'A store cannot be reached.', {
          extra: { checks, ...(shared && { fallback: shared.fallback }) },
        });
      }
      reply.header('cache-control', 'no-store');
      return {
        status: redisDown || checks.disk === 'full' ? 'degraded' : 'ready',
        checks,
        ...(shared && { fallback: shared.fallback }),
      };
    },
  );
}
