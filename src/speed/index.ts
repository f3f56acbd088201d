/**
 * The one switch (`PRICEPOINT_FAST_PATH`, ./README.md): every piece of Pricepoint that exists only for
 * speed, or the plain public path it stands in for. Off, the server runs plain pino, plain
 * prom-client, Node's public `writeHead` (Fastify's) and `crypto.randomUUID`, and answers every
 * request through Fastify: the reference the parity test holds the pieces to.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Registry } from 'prom-client';
import { maskKeysInUrl } from '../domain/keys/key-format.js';
import { plainRequestMetrics, type RequestMetrics } from '../http/metrics.js';
import { type LineWriter, plainLineWriter } from '../http/pipeline/record.js';
import { createFastEntry, type FastEntryDeps } from './fast-entry.js';
import { foldedRequestMetrics, foldingProven } from './folded-metrics.js';
import { batchedDestination } from './log-destination.js';
import { requestLineWriter } from './log-line.js';
import { createRequestIds } from './request-id.js';

export interface Speed {
  readonly on: boolean;
  /** Request ids (`X-Request-Id`, log lines): ./request-id.ts, or `randomUUID`. */
  readonly requestId: () => string;
  /** The request metrics: folded (./folded-metrics.ts, when proven here) or prom-client's own. */
  readonly requestMetrics: (registers: Registry[]) => RequestMetrics;
  /** The request line: written by hand (./log-line.ts) or by pino. */
  lineWriter(log: FastifyBaseLogger): LineWriter;
  /** Masks keys in a URL; on, the URL masked last is remembered (a client repeats its URL). */
  readonly mask: (url: string) => string;
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
      requestId: randomUUID,
      requestMetrics: plainRequestMetrics,
      lineWriter: plainLineWriter,
      mask: maskKeysInUrl,
      keyMemo: false,
      logDestination: () => undefined,
      fastEntry: () => undefined,
    };
  }
  const folded = await foldingProven();
  const ids = createRequestIds();
  return {
    on,
    requestId: () => ids.next(),
    requestMetrics: folded ? foldedRequestMetrics : plainRequestMetrics,
    lineWriter: (log) => requestLineWriter(log, ids.lastBytes),
    mask: lastMasked(),
    keyMemo: true,
    logDestination: batchedDestination,
    fastEntry: createFastEntry,
  };
}

/** `maskKeysInUrl` with the URL masked last kept: a busy client's next URL is mostly the same. */
function lastMasked(): (url: string) => string {
  let lastUrl = '';
  let lastMasked = '';
  return (url) => {
    if (url !== lastUrl) {
      lastMasked = maskKeysInUrl(url);
      lastUrl = url;
    }
    return lastMasked;
  };
}
