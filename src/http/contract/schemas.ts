/**
 * Schemas shared by many routes: the problem body, the headers every answer carries and the error
 * responses of each kind of route. Routes put them in their `schema.response`, so the same objects
 * document the API (OpenAPI, docs/api.md) and describe what the handlers send.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import { ERROR_CODES } from '../../domain/errors/api-error.js';

/**
 * RFC 9457 problem details with our `code` and request id; extra members depend on the code.
 * Registered once (`app.addSchema`, by its `$id`) and referenced from every error response through
 * `ProblemRef`, so the OpenAPI document holds it once under `components/schemas`.
 */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({
      format: 'uri-reference',
      description: 'A URI naming the kind of problem, relative to this server: /docs#problem-CODE.',
    }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String({ description: 'What went wrong, for a human; never contains a key.' }),
    instance: Type.Optional(
      Type.String({
        description: 'The path of the request; absent when the request could not be read as HTTP.',
      }),
    ),
    code: Type.Union(
      ERROR_CODES.map((c) => Type.Literal(c)),
      { description: 'One of a closed set of codes; branch on this, not on the text.' },
    ),
    requestId: Type.String({ description: 'The id of this request in the server logs (x-request-id).' }),
    parameter: Type.Optional(Type.String({ description: 'invalid_parameter: the parameter at fault.' })),
    symbols: Type.Optional(
      Type.Array(Type.String(), {
        description: 'unknown_series, insufficient_scope, outside_tier_history: the symbols at fault.',
      }),
    ),
    'violated-policies': Type.Optional(
      Type.Array(Type.String(), { description: 'rate_limited: the limits that are used up.' }),
    ),
    requiredScope: Type.Optional(Type.String({ description: 'insufficient_scope: the scope needed.' })),
    errorCount: Type.Optional(Type.Integer({ description: 'invalid_prices: how many rows are bad.' })),
    errors: Type.Optional(
      Type.Array(
        Type.Union([
          Type.Object({ line: Type.Integer(), reason: Type.String() }),
          Type.Object({ field: Type.String(), detail: Type.String() }),
        ]),
        {
          description:
            'invalid_prices: the bad rows by line (the first 100 when there are more). invalid_parameter from a body: every bad field.',
        },
      ),
    ),
    checks: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description: 'service_unavailable from /readyz: each store, ok or unreachable.',
      }),
    ),
  },
  { $id: 'Problem', additionalProperties: true, description: 'application/problem+json (RFC 9457).' },
);
const ProblemRef = Type.Ref(ProblemSchema);

/**
 * A documented response header: `type` of its value, its name under `components/headers` (where the
 * OpenAPI document describes it once, see docs.ts) and whether every such answer carries it.
 */
export interface HeaderDoc {
  readonly type: 'string' | 'integer';
  readonly description: string;
  readonly component: string;
  /**
   * `true`: every answer of this status carries it. @fastify/swagger copies the whole definition
   * into the header's `schema`; docs.ts lifts this flag onto the Header Object, where OpenAPI wants it.
   */
  readonly required?: true;
}
export type HeaderDocs = Readonly<Record<string, HeaderDoc>>;

const header = (
  component: string,
  description: string,
  type: 'string' | 'integer' = 'string',
): HeaderDoc => ({
  type,
  description,
  component,
  required: true,
});

/**
 * The same headers, but only on some answers of a status: `when` says which, `suffix` names the
 * variant under `components/headers`.
 */
function sometimes(headers: HeaderDocs, when: string, suffix: string): HeaderDocs {
  return Object.fromEntries(
    Object.entries(headers).map(([name, { type, description, component }]) => [
      name,
      { type, description: `${description} ${when}`, component: `${component}${suffix}` },
    ]),
  );
}

export const REQUEST_ID_HEADER: HeaderDocs = {
  'x-request-id': header('XRequestId', 'The id of this request in the server logs.'),
};

/** On every counted answer (docs/keys-and-tiers.md): the limit closest to running out. */
export const RATE_LIMIT_HEADERS: HeaderDocs = {
  'ratelimit-policy': header('RateLimitPolicy', 'Every limit of the tier: "name";q=limit;w=window seconds.'),
  ratelimit: header('RateLimit', 'The limit closest to running out: "name";r=remaining;t=seconds to reset.'),
  'x-ratelimit-limit': header('XRateLimitLimit', 'The size of the limit closest to running out.', 'integer'),
  'x-ratelimit-remaining': header('XRateLimitRemaining', 'Requests left in that window.', 'integer'),
  'x-ratelimit-reset': header('XRateLimitReset', 'Unix epoch seconds when that window resets.', 'integer'),
};

/** On every cacheable read answer, 200 and 304 (src/http/pipeline/answer.ts); compression only on a 200. */
export const CACHE_HEADERS: HeaderDocs = {
  etag: header(
    'ETag',
    'Identifies this answer; send it back in If-None-Match to get 304 when nothing changed.',
  ),
  'cache-control': header(
    'CacheControlPrivate',
    'private, max-age=N: short for days that can still change, long for past days.',
  ),
  vary: header(
    'Vary',
    'The request headers that shape this answer: Accept (the format), the key headers (the tier) and, where answers are compressed, Accept-Encoding.',
  ),
  'content-encoding': {
    type: 'string',
    component: 'ContentEncoding',
    description: 'br or gzip: the body is compressed, as Accept-Encoding allowed. Absent: not compressed.',
  },
  'content-disposition': {
    type: 'string',
    component: 'ContentDisposition',
    description:
      'CSV answers only: attachment; filename="prices-2026-11-24.csv" (a range: prices-FIRST_LAST.csv; the catalogue: series.csv).',
  },
};

/** An answer that must not be stored anywhere (keys, usage, health, metrics). */
export const NO_STORE_HEADER: HeaderDocs = {
  'cache-control': header('CacheControlNoStore', 'no-store: the answer must not be reused.'),
};

/** Every problem+json answer (problem.ts): an error is never cached. */
const PROBLEM_HEADERS: HeaderDocs = {
  'cache-control': header('CacheControlError', 'no-store: an error must not be reused.'),
  ...REQUEST_ID_HEADER,
};

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'A parameter is unknown or malformed (invalid_parameter); `parameter` names it.',
  401: 'Missing, invalid or conflicting key, or a key in the query string.',
  403: 'The key may not do this (insufficient_scope), read that far back (outside_tier_history), be used from this address (address_not_allowed) or rotate itself (self_rotation_not_allowed), or open sign-up is off (signup_closed).',
  404: 'An unknown series (unknown_series), resource (not_found) or invitation token (invitation_not_found).',
  410: 'The invitation can no longer be claimed: expired (invitation_expired), used up (invitation_used_up) or revoked (invitation_revoked).',
  405: 'The path exists, but not for this method (method_not_allowed); `Allow` lists the methods.',
  406: 'The Accept header allows none of the media types this endpoint answers.',
  413: 'The body is larger than allowed.',
  415: 'The body has a media type this endpoint does not take.',
  422: 'Some rows of the body are invalid (invalid_prices); every bad row is named. Nothing was written.',
  429: 'A limit of the tier is used up (rate_limited), or too many failed authentications came from this address.',
  500: 'Something failed inside the server; the body says nothing more. Quote the requestId.',
  503: 'A store is unreachable or the server is shutting down; retry with backoff.',
};

/**
 * Statuses answered only after the key guard counted the request, so they always carry the
 * rate-limit headers. A 500 or 503 may come before counting (shutting down, tier not configured).
 */
// 403 is not among them: address_not_allowed refuses before anything is counted.
const COUNTED_STATUSES = new Set([400, 404, 406, 413, 415, 422]);

function extraHeaders(status: number, counted: boolean): HeaderDocs {
  if (status === 401) {
    // Authentication fails before anything is counted: never rate-limit headers.
    return { 'www-authenticate': header('WWWAuthenticate', 'Bearer realm="pricepoint"'), ...PROBLEM_HEADERS };
  }
  if (status === 405) {
    return { allow: header('Allow', 'The methods this path answers, e.g. GET, HEAD.'), ...PROBLEM_HEADERS };
  }
  if (status === 429) {
    return {
      'retry-after': header('RetryAfter', 'Whole seconds to wait before retrying, at least 1.', 'integer'),
      // rate_limited carries the rate-limit headers; too_many_auth_failures (no key known) does not.
      ...(counted && sometimes(RATE_LIMIT_HEADERS, 'Only on rate_limited.', 'OnRateLimited')),
      ...PROBLEM_HEADERS,
    };
  }
  if (!counted) return PROBLEM_HEADERS;
  const limits = COUNTED_STATUSES.has(status)
    ? RATE_LIMIT_HEADERS
    : sometimes(RATE_LIMIT_HEADERS, 'Only when the request was counted before it failed.', 'IfCounted');
  return { ...limits, ...PROBLEM_HEADERS };
}

/**
 * One documented problem+json response. `counted`: the route takes from the tier's limits, so its
 * errors after authentication carry the rate-limit headers.
 */
export function problemResponse(status: number, counted = true) {
  return {
    description: ERROR_DESCRIPTIONS[status] ?? 'An error.',
    headers: extraHeaders(status, counted),
    content: { 'application/problem+json': { schema: ProblemRef } },
  };
}

/** Statuses every keyed route can answer: authentication, limits, bad parameters and failures. */
const KEYED_ERRORS = [400, 401, 403, 429, 500, 503] as const;

/**
 * The error responses of a keyed route, plus any route-specific statuses.
 * @example schema: { response: { 200: ..., ...keyedErrors(404, 406) } }
 */
export function keyedErrors(...more: number[]): Record<number, ReturnType<typeof problemResponse>> {
  const statuses = [...new Set([...KEYED_ERRORS, ...more])].sort((a, b) => a - b);
  return Object.fromEntries(statuses.map((s) => [s, problemResponse(s)]));
}

/**
 * The error responses of a keyed route that is not counted (`/usage`): its errors carry no
 * rate-limit headers.
 */
export function uncountedErrors(...more: number[]): Record<number, ReturnType<typeof problemResponse>> {
  const statuses = [...new Set([...KEYED_ERRORS, ...more])].sort((a, b) => a - b);
  return Object.fromEntries(statuses.map((s) => [s, problemResponse(s, false)]));
}

/** Error responses of a route that needs no key. */
export function openErrors(...statuses: number[]): Record<number, ReturnType<typeof problemResponse>> {
  return Object.fromEntries(statuses.map((s) => [s, problemResponse(s, false)]));
}

/**
 * A documented JSON answer with its headers. The schema decides what is sent for object payloads.
 * `Cache-Control` is listed as optional: the routes that must not be cached (keys, usage, health)
 * send no-store, the write answers send none.
 * @example response: { 200: jsonAnswer('The key.', KeyViewSchema) }
 */
export function jsonAnswer<T extends TSchema>(description: string, schema: T, headers: HeaderDocs = {}) {
  const noStore = sometimes(NO_STORE_HEADER, 'Only on answers about keys, usage and health.', 'Sometimes');
  return { ...schema, description, headers: { ...noStore, ...REQUEST_ID_HEADER, ...headers } } as T;
}
