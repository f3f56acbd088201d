/**
 * The header fields every answer carries, in one table for the full path (app.ts) and the fast
 * entry point (fast-path.ts): CORS (docs/api.md: keys travel in headers, never in cookies, so any
 * origin may read), nosniff, and HSTS over HTTPS.
 */
import { HSTS } from '../contract/problem.js';

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
  // A CSV answer's file name (caching.ts `csvAttachment`), for a page that saves what it fetched.
  'content-disposition',
] as const;

/**
 * Every answer's common fields, for a server that speaks HTTPS or plain HTTP.
 * @example reply.headers(commonHeaders(true))
 */
export function commonHeaders(https: boolean): Readonly<Record<string, string>> {
  return {
    'access-control-allow-origin': '*',
    'access-control-expose-headers': EXPOSED_HEADERS.join(', '),
    'x-content-type-options': 'nosniff',
    ...(https && { 'strict-transport-security': HSTS }),
  };
}
