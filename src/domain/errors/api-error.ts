/**
 * The closed set of error codes of DESIGN section 5. Services throw `ApiError`; one handler turns it
 * into an `application/problem+json` body (RFC 9457), so every error looks the same to a client.
 */
const CODES = {
  missing_api_key: { status: 401, title: 'API key missing' },
  invalid_api_key: { status: 401, title: 'Invalid API key' },
  conflicting_api_keys: { status: 401, title: 'Conflicting API keys' },
  api_key_in_query: { status: 401, title: 'API key in the query string' },
  insufficient_scope: { status: 403, title: 'Insufficient scope' },
  outside_tier_history: { status: 403, title: 'Outside the tier history' },
  rate_limited: { status: 429, title: 'Rate limit exceeded' },
  too_many_auth_failures: { status: 429, title: 'Too many failed authentications' },
  invalid_parameter: { status: 400, title: 'Invalid parameter' },
  unknown_series: { status: 404, title: 'Unknown series' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  not_acceptable: { status: 406, title: 'Not acceptable' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  invalid_prices: { status: 422, title: 'Invalid prices' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
  internal: { status: 500, title: 'Internal server error' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof CODES;
export const ERROR_CODES = Object.keys(CODES) as ErrorCode[];

export function errorStatus(code: ErrorCode): number {
  return CODES[code].status;
}

export function errorTitle(code: ErrorCode): string {
  return CODES[code].title;
}

/** Problem type URIs: the IANA registered type where one exists, our documented anchor otherwise. */
export function errorType(code: ErrorCode): string {
  if (code === 'rate_limited') return 'https://iana.org/assignments/http-problem-types#quota-exceeded';
  return `https://pricepoint.dev/problems#${code}`;
}

/**
 * A client-facing error. `detail` must never contain a key or internals; `extra` adds members to the
 * problem body (`violated-policies`, `parameter`, `errors`); `headers` go on the response.
 * @example throw new ApiError('invalid_parameter', 'tz must be an IANA time zone such as Europe/Oslo', { extra: { parameter: 'tz' } })
 */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly options: { extra?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.name = 'ApiError';
    this.status = errorStatus(code);
  }
}
