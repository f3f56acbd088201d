/**
 * The one switch (`PRICEPOINT_FAST_PATH`, ./README.md): every piece of Pricepoint that exists only for
 * speed, or the plain public path it stands in for. Off, the server runs plain pino, plain
 * prom-client and Node's public `writeHead` (Fastify's), and answers every
 * request through Fastify: the reference the parity test holds the pieces to.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Registry } from 'prom-client';
import { plainRequestMetrics, type RequestMetrics } from '../http/metrics.js';
import { type LineWriter, plainLineWriter } from '../http/pipeline/record.js';
import { createFastEntry, type FastEntryDeps } from './fast-entry.js';
import { foldedRequestMetrics, foldingProven } from './folded-metrics.js';
import { batchedDestination } from './log-destination.js';
import { requestLineWriter } from './log-line.js';

export interface Speed {
  readonly on: boolean;
  /** The request metrics: folded (./folded-metrics.ts, when proven here) or prom-client's own. */
  readonly requestMetrics: (registers: Registry[]) => RequestMetrics;
  /** The request line: written by hand (./log-line.ts) or by pino. */
  lineWriter(log: FastifyBaseLogger): LineWriter;
  /** Remember per connection the key its client sent last (src/http/pipeline/admit.ts). */
  readonly keyMemo: boolean;
  /** Where the server's log goes: batched (./log-destination.ts), or undefined for pino's own. */
  logDestination(): (DestinationStream & { close(): void }) | undefined;
  /** The fast entry in front of Fastify's listener, or undefined: Fastify answers everything. */
  fastEntry(deps: FastEntryDeps): FastEntryDeps['next'] | undefined;
}

/** The speed parts for the switch `on`. */
export async function speedOf(on: boolean): Promise<Speed> {
  if (!on) {
    return {
      on,
      requestMetrics: plainRequestMetrics,
      lineWriter: plainLineWriter,
      keyMemo: false,
      logDestination: () => undefined,
      fastEntry: () => undefined,
    };
  }
  const folded = await foldingProven();
  return {
    on,
    requestMetrics: folded ? foldedRequestMetrics : plainRequestMetrics,
    lineWriter: requestLineWriter,
    keyMemo: true,
    logDestination: batchedDestination,
    fastEntry: createFastEntry,
  };
}
