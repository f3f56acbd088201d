/**
 * Prometheus metrics (`GET /metrics`, docs/api.md): one registry per app, so two apps in one
 * process (tests) never share counters. Labels are route templates, statuses, tier names, problem
 * codes and store names: never a key, a key id, a client address or a raw URL.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { tzSource } from '../domain/time/zone.js';

/** What the open event streams hold, for the metrics. */
export interface EventStreamsHeld {
  readonly open: number;
  /** Bytes written for the streams' clients and not yet taken, over all streams. */
  readonly unsent: number;
  /** The most one stream holds. */
  readonly largestUnsent: number;
}

/** The metrics every answered request adds to, by the request pipeline's record step. */
export interface RequestMetrics {
  /** One answer: counted by route template, method, status and tier; timed by route and method. */
  answered(route: string, method: string, status: number, tier: string, seconds: number, fast: boolean): void;
}

/** The request metrics' names, help and labels: one declaration for the plain and the folded kind. */
export const REQUEST_METRICS = {
  requests: {
    name: 'pricepoint_http_requests_total',
    help: 'Requests answered, by route template, method, status and tier (none: no valid key).',
    labelNames: ['route', 'method', 'status', 'tier'] as const,
  },
  latency: {
    name: 'pricepoint_http_request_duration_seconds',
    help: 'Time from the request arriving to the answer being sent, by route template.',
    labelNames: ['route', 'method'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  },
  fast: {
    name: 'pricepoint_fast_path_answers_total',
    help: 'Answers sent from the answer cache before the framework runs, by route template.',
    labelNames: ['route'] as const,
  },
};

/** The request metrics as prom-client keeps them: the reference the folded kind is held to. */
export function plainRequestMetrics(registers: Registry[]): RequestMetrics {
  const requests = new Counter({ ...REQUEST_METRICS.requests, registers });
  const latency = new Histogram({ ...REQUEST_METRICS.latency, registers });
  const fastAnswers = new Counter({ ...REQUEST_METRICS.fast, registers });
  return {
    answered(route, method, status, tier, seconds, fast) {
      requests.inc({ route, method, status, tier });
      latency.observe({ route, method }, seconds);
      if (fast) fastAnswers.inc({ route });
    },
  };
}

/**
 * `requestMetrics` builds the request metrics on the registry: `plainRequestMetrics`, or a faster kind
 * with the same exposition (../speed).
 */
export function createMetrics(
  requestMetrics: (registers: Registry[]) => RequestMetrics = plainRequestMetrics,
) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'pricepoint_' });
  const registers = [registry];
  // What the connection guard reports (src/http/transport/client-groups.ts); nothing until a server exists.
  let unsent = (): { total: number; largestGroup: number } => ({ total: 0, largestGroup: 0 });
  // What the event stream route reports (src/http/routes/events.ts); nothing until it exists.
  let streams = (): EventStreamsHeld => ({ open: 0, unsent: 0, largestUnsent: 0 });
  return {
    registry,
    requests: requestMetrics(registers),
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
    connectionsRefused: new Counter({
      name: 'pricepoint_connections_refused_total',
      help: 'Connections closed on opening because their address (IPv6: /64) already held PRICEPOINT_MAX_CONNECTIONS_PER_ADDRESS.',
      registers,
    }),
    connectionsClosedUnsent: new Counter({
      name: 'pricepoint_connections_closed_unsent_total',
      help: 'Connections closed because their address (IPv6: /64) held more unsent answer bytes than PRICEPOINT_MAX_UNSENT_BYTES_PER_ADDRESS.',
      registers,
    }),
    unsentBytes: new Gauge({
      name: 'pricepoint_unsent_answer_bytes',
      help: 'Bytes of answers written for clients and not yet taken by them: in all, and the most one address (IPv6: /64) holds.',
      labelNames: ['of'] as const,
      registers,
      collect() {
        const { total, largestGroup } = unsent();
        this.set({ of: 'all' }, total);
        this.set({ of: 'largest_address' }, largestGroup);
      },
    }),
    /** Where `unsentBytes` reads from: the server's connection guard, once it exists. */
    observeUnsentBytes(source: () => { total: number; largestGroup: number }) {
      unsent = source;
    },
    eventStreams: new Gauge({
      name: 'pricepoint_event_streams_open',
      help: 'Open GET /api/v1/events streams on this instance.',
      registers,
      collect() {
        this.set(streams().open);
      },
    }),
    eventStreamUnsent: new Gauge({
      name: 'pricepoint_event_stream_unsent_bytes',
      help: 'Bytes event streams hold that their clients have not taken yet (queued and in their sockets): in all, and the most one stream holds.',
      labelNames: ['of'] as const,
      registers,
      collect() {
        const { unsent, largestUnsent } = streams();
        this.set({ of: 'all' }, unsent);
        this.set({ of: 'largest_stream' }, largestUnsent);
      },
    }),
    /** Where the event stream gauges read from: the event route, once it exists. */
    observeEventStreams(source: () => EventStreamsHeld) {
      streams = source;
    },
    tzInfo: new Gauge({
      name: 'pricepoint_tz_info',
      help: 'The tz database release zone rules come from, and its source: setting (PRICEPOINT_TZDIR), system, shipped or icu. Always 1.',
      labelNames: ['release', 'source'] as const,
      registers,
      collect() {
        const { release, source } = tzSource();
        this.reset();
        this.set({ release, source }, 1);
      },
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
