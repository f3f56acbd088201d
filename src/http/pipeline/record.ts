/**
 * The record step of the request pipeline (../README.md): one answered request, from either entry,
 * becomes its metrics and its one log line. The URL is masked and no header is logged.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { ErrorCode } from '../../domain/errors/api-error.js';
import { maskKeysInUrl } from '../../domain/keys/key-format.js';
import type { UsageCounter } from '../../services/usage-history.js';
import type { Metrics } from '../metrics.js';

/** What is known of a request once it is answered. */
export interface AnsweredRequest {
  readonly reqId: string;
  readonly method: string;
  /** The route template (`/api/v1/prices/:date`), or `unmatched`. */
  readonly route: string;
  /** The URL as the client sent it; masked before it is logged. */
  readonly url: string;
  readonly status: number;
  readonly elapsedMs: number;
  readonly keyId: string | null;
  readonly tier: string | null;
  readonly ip: string;
  /** The problem code answered, `null` for no error. */
  readonly problemCode: ErrorCode | null;
  /** Served by the fast entry (counted apart as well). */
  readonly fast: boolean;
  /** Rate-limit units the request took: 0 when it was refused or not counted. */
  readonly units: number;
  /** When its limits were counted (app-clock ms), if they were: its hour in the usage history. */
  readonly countedAt?: number | null;
}

/** What the log line says, in the order pino writes the fields. */
export interface RequestLine {
  readonly reqId: string;
  readonly method: string;
  readonly url: string;
  readonly status: number;
  readonly latencyMs: number;
  readonly keyId: string | null;
  readonly tier: string | null;
  readonly ip: string;
}

export type LineWriter = (line: RequestLine) => void;

/**
 * The line as pino writes it for `log.info(line, 'request')`: the reference. `reqId` comes first, so
 * the bytes are those of a child logger bound to it, without making a child per request.
 */
export function plainLineWriter(log: FastifyBaseLogger): LineWriter {
  return (line) => log.info(line, 'request');
}

export type RequestRecorder = (request: AnsweredRequest) => void;

/**
 * `usage`: where keyed requests are counted per key and hour (docs/usage-history.md), if anywhere.
 * @example const record = createRecorder(metrics, plainLineWriter(app.log)); record({ reqId, method: 'GET', ... })
 */
export function createRecorder(
  metrics: Metrics,
  writeLine: LineWriter,
  usage?: UsageCounter,
): RequestRecorder {
  return function record(r: AnsweredRequest): void {
    const tier = r.tier ?? 'none';
    metrics.requests.answered(r.route, r.method, r.status, tier, r.elapsedMs / 1000, r.fast);
    if (usage !== undefined && r.keyId !== null)
      usage.count(r.keyId, r.status, r.units, r.countedAt ?? undefined);
    const code = r.problemCode;
    if (code === 'rate_limited') metrics.rateLimited.inc({ tier });
    else if (code !== null && (r.status === 401 || code === 'too_many_auth_failures')) {
      metrics.authFailures.inc({ code });
    }
    writeLine({
      reqId: r.reqId,
      method: r.method,
      url: maskKeysInUrl(r.url),
      status: r.status,
      latencyMs: Math.round(r.elapsedMs * 100) / 100,
      keyId: r.keyId,
      tier: r.tier,
      ip: r.ip,
    });
  };
}
