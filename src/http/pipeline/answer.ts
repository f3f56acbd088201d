/**
 * HTTP caching of read answers (docs/api.md): a strong ETag derived from what the answer says
 * (not from when it was generated), 304 for a matching `If-None-Match`, and `Cache-Control` that
 * is short while the data can still change and long once it cannot.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
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
 * `Content-Disposition` for a CSV answer, so that a browser or `curl -OJ` saves it under a name that
 * says what it holds: `prices-2026-11-24.csv`, `prices-2026-11-01_2026-11-30.csv` for several days,
 * `series.csv`. `name` and `dates` are symbols and `YYYY-MM-DD` dates: nothing that needs quoting.
 * @example csvAttachment('prices', ['2026-11-24']) // 'attachment; filename="prices-2026-11-24.csv"'
 */
export function csvAttachment(name: string, dates: readonly string[] = []): string {
  const sorted = [...new Set(dates)].sort();
  const first = sorted[0];
  const last = sorted.at(-1);
  const span = first === undefined ? '' : first === last ? `-${first}` : `-${first}_${last}`;
  return `attachment; filename="${name}${span}.csv"`;
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
    readonly disposition?: string;
    readonly body: () => string;
  },
): FastifyReply {
  reply
    .header('etag', answer.etag)
    .header('cache-control', `private, max-age=${answer.maxAge}`)
    .header('vary', 'accept, x-api-key, authorization');
  if (noneMatch(request.headers['if-none-match'], answer.etag)) return reply.code(304).send();
  if (answer.disposition !== undefined) reply.header('content-disposition', answer.disposition);
  return reply.type(answer.type).send(answer.body());
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

/** The content coding of `answer` for a client that sent `acceptEncoding`; none for a small body. */
export function answerCoding(
  answer: CachedAnswer,
  acceptEncoding: string | undefined,
  cache: AnswerCache,
): Coding | undefined {
  return answer.body.length >= MIN_COMPRESS_BYTES ? cache.coding(acceptEncoding) : undefined;
}

/** What goes on the wire for a finished answer: status, header fields (name, value, ...) and body. */
export interface AnswerHead {
  readonly status: 200 | 304;
  readonly fields: string[];
  readonly body: Buffer | undefined;
}

/**
 * 304 when `If-None-Match` names `answer`, in this coding or as identity, else 200.
 * @example answerStatus(answer, 'br', '"abc-br"') // 304 for an answer tagged "abc"
 */
export function answerStatus(
  answer: CachedAnswer,
  coding: Coding | undefined,
  ifNoneMatch: string | undefined,
): 200 | 304 {
  if (ifNoneMatch === undefined) return 200;
  const held = noneMatch(ifNoneMatch, codedTag(answer.etag, coding)) || noneMatch(ifNoneMatch, answer.etag);
  return held ? 304 : 200;
}

/**
 * The fields of a finished answer in `coding` (`body`: those bytes) with `status`: its own ETag,
 * its caching, and for a 200 what the body is.
 */
export function answerFields(
  answer: CachedAnswer,
  coding: Coding | undefined,
  body: Buffer,
  status: 200 | 304,
): string[] {
  const etag = codedTag(answer.etag, coding);
  const fields = ['etag', etag, 'cache-control', `private, max-age=${answer.maxAge}`, 'vary', VARY];
  if (status === 304) return fields;
  fields.push('content-type', answer.type, 'content-length', String(body.length));
  if (answer.disposition !== undefined) fields.push('content-disposition', answer.disposition);
  if (coding !== undefined) fields.push('content-encoding', coding);
  return fields;
}

/**
 * The one writer of a finished answer, for the full path (`sendAnswer`) and the fast entry point
 * (../../speed/fast-entry.ts, which keeps each head it writes): 304 without a body when `If-None-Match` names it
 * (`answerStatus`), else the body in `coding` (`body`: those bytes, made by `AnswerCache.encoded`)
 * with its own ETag.
 * @example answerHead(answer, undefined, answer.body, request.headers['if-none-match'])
 */
export function answerHead(
  answer: CachedAnswer,
  coding: Coding | undefined,
  body: Buffer,
  ifNoneMatch: string | undefined,
): AnswerHead {
  const status = answerStatus(answer, coding, ifNoneMatch);
  return {
    status,
    fields: answerFields(answer, coding, body, status),
    body: status === 304 ? undefined : body,
  };
}

/**
 * Sends a finished answer through Fastify: 304 when the client holds it, else its bytes, compressed
 * when the client takes Brotli or gzip and the body is large enough to gain from it (compressed
 * once, here, for every later request).
 */
export async function sendAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  cache: AnswerCache,
  answer: CachedAnswer,
): Promise<FastifyReply> {
  const coding = answerCoding(answer, request.headers['accept-encoding'], cache);
  const held = request.headers['if-none-match'];
  const ready = coding === undefined ? answer.body : answer.ready[coding];
  let head = answerHead(answer, coding, ready ?? answer.body, held);
  // A 304 needs no body: compress only for an answer that sends one.
  if (head.status === 200 && coding !== undefined && ready === undefined) {
    head = answerHead(answer, coding, await cache.encoded(answer, coding), held);
  }
  const fields = head.fields;
  for (let i = 0; i < fields.length; i += 2) reply.header(fields[i] as string, fields[i + 1] as string);
  reply.code(head.status);
  return head.body === undefined ? reply.send() : reply.send(head.body);
}
