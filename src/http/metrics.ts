/**
 * Prometheus metrics (DESIGN section 2, `GET /metrics`): one registry per app, so two apps in one
 * process (tests) never share counters. Labels are route templates, statuses, tier names, problem
 * codes and store names: never a key, a key id, a client address or a raw URL.
 */
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'pricepoint_' });
  const registers = [registry];
  return {
    registry,
    requests: new Counter({
      name: 'pricepoint_http_requests_total',
      help: 'Requests answered, by route template, method, status and tier (none: no valid key).',
      labelNames: ['route', 'method', 'status', 'tier'] as const,
      registers,
    }),
    latency: new Histogram({
      name: 'pricepoint_http_request_duration_seconds',
      help: 'Time from the request arriving to the answer being sent, by route template.',
      labelNames: ['route', 'method'] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    rateLimited: new Counter({
      name: 'pricepoint_rate_limit_rejections_total',
      help: 'Requests refused with 429 rate_limited, by tier.',
      labelNames: ['tier'] as const,
      registers,
    }),
    authFailures: new Counter({
      name: 'pricepoint_auth_failures_total',
      help: 'Failed authentications (401) and refusals for too many of them (429), by problem code.',
      labelNames: ['code'] as const,
      registers,
    }),
    storeErrors: new Counter({
      name: 'pricepoint_store_errors_total',
      help: 'Store operations that failed (database or Redis unreachable), by store.',
      labelNames: ['store'] as const,
      registers,
    }),
    fastAnswers: new Counter({
      name: 'pricepoint_fast_path_answers_total',
      help: 'Answers sent from the answer cache before the framework runs (issue 6), by route template.',
      labelNames: ['route'] as const,
      registers,
    }),
    connectionsRefused: new Counter({
      name: 'pricepoint_connections_refused_total',
      help: 'Connections closed on opening because their address already held PRICEPOINT_MAX_CONNECTIONS_PER_ADDRESS.',
      registers,
    }),
    fallbacks: new Counter({
      name: 'pricepoint_rate_limit_fallbacks_total',
      help: 'Rate-limit decisions taken without Redis, by the fallback policy that took them.',
      labelNames: ['policy'] as const,
      registers,
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
