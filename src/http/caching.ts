/**
 * HTTP caching of read answers (DESIGN section 2): a strong ETag derived from what the answer says
 * (not from when it was generated), 304 for a matching `If-None-Match`, and `Cache-Control` that
 * is short while the data can still change and long once it cannot.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

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
