/**
 * HTTP caching of read answers (DESIGN section 2): a strong ETag derived from what the answer says
 * (not from when it was generated), 304 for a matching `If-None-Match`, and `Cache-Control` that
 * is short while the data can still change and long once it cannot.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import Negotiator from 'negotiator';
import { type AnswerCache, type CachedAnswer, type Coding, MIN_COMPRESS_BYTES } from './answer-cache.js';

/** Seconds a client may reuse an answer holding today, tomorrow, the latest price or the catalogue. */
export const SHORT_MAX_AGE = 60;
/** Seconds a client may reuse an answer holding only days that have ended (corrections are rare). */
export const LONG_MAX_AGE = 86_400;

/**
 * A strong entity tag for an answer's content. Everything that shapes the bytes (format, media type)
 * goes into `content`, so two answers share a tag only when their bodies say the same.
 * @example entityTag('json', seriesJson) // '"mVd7…"'
 */
export function entityTag(...content: readonly string[]): string {
  const hash = createHash('sha256');
  for (const part of content) hash.update(part).update('\0');
  return `"${hash.digest('base64url').slice(0, 27)}"`;
}

/**
 * Whether `If-None-Match` names `etag`, compared weakly as RFC 9110 section 13.1.2 asks (a `W/`
 * prefix is ignored), or is `*`.
 * @example noneMatch('W/"a", "b"', '"b"') // true
 */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const wanted = header.trim();
  if (wanted === '*') return true;
  return wanted.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/**
 * Sends a read answer with its validators: 304 without a body when the client holds it already.
 * `Vary` names the headers that change the answer: the format, and the key, whose tier decides
 * which series a caller sees.
 */
export function sendCacheable(
  request: FastifyRequest,
  reply: FastifyReply,
  answer: {
    readonly etag: string;
    readonly maxAge: number;
    readonly type: string;
    readonly body: () => string;
  },
): FastifyReply {
  reply
    .header('etag', answer.etag)
    .header('cache-control', `private, max-age=${answer.maxAge}`)
    .header('vary', 'accept, x-api-key, authorization');
  if (noneMatch(request.headers['if-none-match'], answer.etag)) return reply.code(304).send();
  return reply.type(answer.type).send(answer.body());
}

const CODINGS: readonly string[] = ['br', 'gzip', 'identity'];
// Clients send a handful of distinct Accept-Encoding values; each is negotiated once.
const codingOf = new Map<string, Coding | undefined>();

/**
 * The content coding to answer in for an `Accept-Encoding` header: Brotli, then gzip, else none.
 * @example preferredCoding('gzip, deflate, br') // 'br'
 */
export function preferredCoding(header: string | undefined): Coding | undefined {
  if (header === undefined || header === '') return undefined;
  let coding = codingOf.get(header);
  if (coding === undefined && !codingOf.has(header)) {
    // Ties in q go to the server's order (Brotli first); @types/negotiator lacks the option.
    const negotiator = new Negotiator({ headers: { 'accept-encoding': header } }) as unknown as {
      encoding(available: string[], options: { preferred: string[] }): string | undefined;
    };
    const best = negotiator.encoding([...CODINGS], { preferred: [...CODINGS] });
    coding = best === 'br' || best === 'gzip' ? best : undefined;
    if (codingOf.size >= 256) codingOf.clear();
    codingOf.set(header, coding);
  }
  return coding;
}

/** What read answers vary by: the format, the coding, and the key, whose tier decides what is read. */
export const VARY = 'accept, accept-encoding, x-api-key, authorization';

/**
 * The ETag of an answer's body in `coding`: a compressed body is another representation, so it
 * gets its own strong tag (RFC 9110 section 8.8.3).
 * @example codedTag('"abc"', 'br') // '"abc-br"'
 */
export function codedTag(etag: string, coding: Coding | undefined): string {
  return coding === undefined ? etag : `${etag.slice(0, -1)}-${coding}"`;
}

/**
 * Sends a finished answer: 304 when the client holds it, else its bytes, compressed when the client
 * takes Brotli or gzip and the body is large enough to gain from it.
 */
export async function sendAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  cache: AnswerCache,
  answer: CachedAnswer,
): Promise<FastifyReply> {
  const coding =
    answer.body.length >= MIN_COMPRESS_BYTES
      ? preferredCoding(request.headers['accept-encoding'])
      : undefined;
  const etag = codedTag(answer.etag, coding);
  reply
    .header('etag', etag)
    .header('cache-control', `private, max-age=${answer.maxAge}`)
    .header('vary', VARY);
  const held = request.headers['if-none-match'];
  if (held !== undefined && (noneMatch(held, etag) || noneMatch(held, answer.etag))) {
    return reply.code(304).send();
  }
  reply.type(answer.type);
  if (coding === undefined) return reply.send(answer.body);
  const body = await cache.encoded(answer, coding);
  return reply.header('content-encoding', coding).send(body);
}
