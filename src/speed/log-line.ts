/**
 * The one log line per request (the pipeline's record step, src/http/pipeline/record.ts): the line
 * `plainLineWriter` has pino write for `log.info(line, 'request')`, made here as one template string
 * and handed to pino's own destination, through pino's exported but internal symbols. pino's general
 * serialiser walks the object and checks every value, a large share of a cached answer's cost
 * (bench/README.md). Where pino is set up in a way this does not copy (its own time or message key,
 * a mixin, a multistream), the line goes through pino itself.
 */
import type { FastifyBaseLogger } from 'fastify';
import { type Logger, stdTimeFunctions, symbols } from 'pino';
import { type LineWriter, plainLineWriter, type RequestLine } from '../http/pipeline/record.js';

interface Destination {
  write(line: string): unknown;
}

/**
 * A writer of request lines for `log`, as `log.info(line, 'request')` would write them.
 * @example const write = requestLineWriter(app.log); write({ reqId, method: 'GET', ... })
 */
export function requestLineWriter(log: FastifyBaseLogger): LineWriter {
  // Fastify's logger is a pino logger unless one of another kind was passed in.
  const pinoLog = log as unknown as Partial<Logger>;
  const internals = log as unknown as Record<symbol, unknown>;
  const stream = internals[symbols.streamSym] as Destination | undefined;
  const bindings = internals[symbols.chindingsSym];
  const info = pinoLog.levels?.values.info;
  const enabled = pinoLog.isLevelEnabled?.bind(log);
  const viaPino = plainLineWriter(log);
  if (
    stream === undefined ||
    typeof stream.write !== 'function' ||
    typeof bindings !== 'string' ||
    info === undefined ||
    enabled === undefined ||
    internals[symbols.messageKeySym] !== 'msg' ||
    internals[symbols.timeSym] !== stdTimeFunctions.epochTime ||
    internals[symbols.mixinSym] !== undefined ||
    (stream as unknown as Record<symbol, unknown>)[symbols.needsMetadataGsym] === true
  ) {
    return viaPino;
  }
  const head = `{"level":${info},"time":`;
  const asText = (line: RequestLine) =>
    `${head}${epochText(Date.now())}${bindings},"reqId":${quoted(line.reqId)},"method":${quoted(line.method)},` +
    `"url":${quoted(line.url)},"status":${line.status},"latencyMs":${hundredths(line.latencyMs)},` +
    `"keyId":${quotedOrNull(line.keyId)},"tier":${quotedOrNull(line.tier)},"ip":${quoted(line.ip)},` +
    `"msg":"request"}\n`;
  return (line) => {
    if (enabled('info')) stream.write(asText(line));
  };
}

/**
 * `JSON.stringify(value)` of a string, in a loop over its characters where none needs escaping.
 * A call of `JSON.stringify` costs ten times the loop over a request's URL or id.
 * @example quoted('/api/v1/prices/today') // '"/api/v1/prices/today"'
 */
export function quoted(value: string): string {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    // Control characters, `"` and `\\` are escaped, and so is a lone surrogate: the slow way.
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(value);
  }
  return `"${value}"`;
}

/** `.01` to `.99` by hundredths, without trailing zeros; none for whole numbers. */
const FRACTIONS = Array.from({ length: 100 }, (_, i) =>
  i === 0 ? '' : `.${String(i).padStart(2, '0').replace(/0$/, '')}`,
);

/**
 * `String(value)` of a number of milliseconds rounded to hundredths, built from whole numbers: a
 * double's shortest text costs V8 more than the rest of the line's numbers together. Anything else
 * (not a whole number of hundredths, or too large to be one exactly) takes `String`.
 * @example hundredths(0.42) // '0.42'
 */
export function hundredths(value: number): string {
  const n = Math.round(value * 100);
  if (n < 0 || n > 0x7fffffff || n / 100 !== value) return String(value);
  const fraction = n % 100;
  return `${(n - fraction) / 100}${FRACTIONS[fraction]}`;
}

/**
 * `String(ms)` of a time in epoch milliseconds, built from two whole numbers V8 holds as small
 * integers: a number past 2^31 takes its slow path for doubles.
 * @example epochText(1764028800123) // '1764028800123'
 */
export function epochText(ms: number): string {
  if (!(ms >= 1_000_000 && ms <= Number.MAX_SAFE_INTEGER && Number.isInteger(ms))) return String(ms);
  const high = Math.floor(ms / 1_000_000);
  return `${high}${String(ms - high * 1_000_000 + 1_000_000).slice(1)}`;
}

const quotedOrNull = (value: string | null): string => (value === null ? 'null' : quoted(value));
