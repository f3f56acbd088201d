/**
 * The headers step of the request pipeline (../README.md): the fields every answer carries, in one
 * table that the Fastify hooks, the fast entry and the raw problem answers all write. CORS
 * (docs/api.md): keys travel in headers, never in cookies, so any origin may read; the preflight
 * (answered by @fastify/cors with `CORS` below) allows the key headers.
 */
import type { FastifyCorsOptions } from '@fastify/cors';

/** Strict-Transport-Security of every answer over HTTPS: a year, this host only. */
export const HSTS = 'max-age=31536000';

/** Response headers a browser script may read (CORS): limits, validators and the request id. */
export const EXPOSED_HEADERS = [
  'etag',
  'ratelimit',
  'ratelimit-policy',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
  'x-request-id',
  'www-authenticate',
  // A CSV answer's file name (answer.ts `csvAttachment`), for a page that saves what it fetched.
  'content-disposition',
] as const;

/** The preflight: what @fastify/cors answers an `OPTIONS` request with. */
export const CORS = {
  origin: '*',
  methods: ['GET', 'HEAD', 'PUT', 'POST', 'PATCH', 'DELETE'],
  allowedHeaders: ['x-api-key', 'authorization', 'content-type', 'if-none-match', 'accept'],
  exposedHeaders: [...EXPOSED_HEADERS],
  maxAge: 7200,
  // Any OPTIONS request is answered as a preflight, never with a plain-text 400.
  strictPreflight: false,
} satisfies FastifyCorsOptions;

/**
 * Every answer's common fields, for a server that speaks HTTPS or plain HTTP.
 * @example reply.headers(commonHeaders(true))
 */
export function commonHeaders(https: boolean): Readonly<Record<string, string>> {
  return {
    'access-control-allow-origin': CORS.origin,
    'access-control-expose-headers': EXPOSED_HEADERS.join(', '),
    'x-content-type-options': 'nosniff',
    ...(https && { 'strict-transport-security': HSTS }),
  };
}
