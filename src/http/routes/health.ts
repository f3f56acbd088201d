/** Liveness and readiness: no key, not counted. */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors/api-error.js';
import type { Stores } from '../../stores/types.js';

export function healthRoutes(app: FastifyInstance, deps: { stores: Stores }): void {
  app.get('/healthz', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return { status: 'ok' };
  });

  app.get('/readyz', async (_request, reply) => {
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
    if (Object.values(checks).some((c) => c !== 'ok')) {
      throw new ApiError('service_unavailable', 'A store cannot be reached.', { extra: { checks } });
    }
    reply.header('cache-control', 'no-store');
    return { status: 'ready', checks };
  });
}
