/** `GET /metrics` (docs/api.md): Prometheus text format, no key, not counted. */
import type { FastifyInstance } from 'fastify';
import { NO_STORE_HEADER, openErrors, REQUEST_ID_HEADER } from '../contract/schemas.js';
import type { Metrics } from '../metrics.js';

export function metricsRoutes(app: FastifyInstance, deps: { metrics: Metrics }): void {
  app.get(
    '/metrics',
    {
      schema: {
        operationId: 'getMetrics',
        summary: 'Prometheus metrics',
        description:
          'Requests by route, status and tier, a latency histogram, rate-limit rejections, failed authentications, store errors and rate-limit fallback decisions, plus process metrics. No key is needed: keep it off the public network.',
        tags: ['meta'],
        security: [],
        response: {
          200: {
            description: 'Prometheus text exposition format 0.0.4.',
            headers: { ...REQUEST_ID_HEADER, ...NO_STORE_HEADER },
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
          ...openErrors(500, 503),
        },
      },
    },
    async (_request, reply) => {
      const text = await deps.metrics.registry.metrics();
      return reply.header('cache-control', 'no-store').type(deps.metrics.registry.contentType).send(text);
    },
  );
}
