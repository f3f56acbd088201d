/**
 * Schemas shared by many routes: the problem body, the headers every answer carries and the error
 * responses of each kind of route. Routes put them in their `schema.response`, so the same objects
 * document the API (OpenAPI, section 2 of DESIGN) and describe what the handlers send.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import { ERROR_CODES } from '../domain/errors/api-error.js';

/** RFC 9457 problem details with our `code` and request id; extra members depend on the code. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'A URI naming the kind of problem.' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String({ description: 'What went wrong, for a human; never contains a key.' }),
    instance: Type.String({ description: 'The path of the request.' }),
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
  { additionalProperties: true, description: 'application/problem+json (RFC 9457).' },
);

const header = (description: string, type: 'string' | 'integer' = 'string') => ({ type, description });

export const REQUEST_ID_HEADER = {
  'x-request-id': header('The id of this request in the server logs.'),
};

/** On every counted answer (DESIGN section 4): the limit closest to running out. */
export const RATE_LIMIT_HEADERS = {
  'ratelimit-policy': header('Every limit of the tier: "name";q=limit;w=window seconds.'),
  ratelimit: header('The limit closest to running out: "name";r=remaining;t=seconds to reset.'),
  'x-ratelimit-limit': header('The size of the limit closest to running out.', 'integer'),
  'x-ratelimit-remaining': header('Requests left in that window.', 'integer'),
  'x-ratelimit-reset': header('Unix epoch seconds when that window resets.', 'integer'),
};

export const CACHE_HEADERS = {
  etag: header('Identifies this answer; send it back in If-None-Match to get 304 when nothing changed.'),
  'cache-control': header('private, max-age=N: short for days that can still change, long for past days.'),
};

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'A parameter is unknown or malformed (invalid_parameter); `parameter` names it.',
  401: 'Missing, invalid or conflicting key, or a key in the query string.',
  403: 'The key may not do this (insufficient_scope) or read that far back (outside_tier_history).',
  404: 'An unknown series (unknown_series) or resource (not_found).',
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
const COUNTED_STATUSES = new Set([400, 403, 404, 406, 413, 415, 422]);

function extraHeaders(
  status: number,
  counted: boolean,
): Record<string, { type: string; description: string }> {
  if (status === 401) {
    return { 'www-authenticate': header('Bearer realm="pricepoint"'), ...REQUEST_ID_HEADER };
  }
  if (status === 429) {
    // rate_limited also carries the rate-limit headers; too_many_auth_failures (no key known) does not.
    return {
      'retry-after': header('Whole seconds to wait before retrying, at least 1.', 'integer'),
      ...REQUEST_ID_HEADER,
    };
  }
  const limits = counted && COUNTED_STATUSES.has(status) ? RATE_LIMIT_HEADERS : {};
  return { ...limits, ...REQUEST_ID_HEADER };
}

/**
 * One documented problem+json response. `counted`: the route takes from the tier's limits, so its
 * errors after authentication carry the rate-limit headers.
 */
export function problemResponse(status: number, counted = true) {
  return {
    description: ERROR_DESCRIPTIONS[status] ?? 'An error.',
    headers: extraHeaders(status, counted),
    content: { 'application/problem+json': { schema: ProblemSchema } },
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
 * @example response: { 200: jsonAnswer('The key.', KeyViewSchema) }
 */
export function jsonAnswer<T extends TSchema>(description: string, schema: T, headers: object = {}) {
  return { ...schema, description, headers: { ...REQUEST_ID_HEADER, ...headers } } as T;
}
