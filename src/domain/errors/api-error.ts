import type { LimitReport } from '../limits/fixed-window.js';

/**
 * The closed set of error codes of docs/errors.md, each with its title. Services throw `ApiError`;
 * one handler in src/http/contract/problem.ts turns it into an `application/problem+json` body (RFC 9457)
 * with the HTTP status src/http/contract/error-status.ts gives each code, so every error looks the same to
 * a client and nothing here knows HTTP.
 */
const CODES = {
  missing_api_key: 'API key missing',
  invalid_api_key: 'Invalid API key',
  conflicting_api_keys: 'Conflicting API keys',
  api_key_in_query: 'API key in the query string',
  insufficient_scope: 'Insufficient scope',
  outside_tier_history: 'Outside the tier history',
  address_not_allowed: 'Address not allowed',
  self_rotation_not_allowed: 'Self rotation not allowed',
  rate_limited: 'Rate limit exceeded',
  too_many_auth_failures: 'Too many failed authentications',
  invalid_parameter: 'Invalid parameter',
  unknown_series: 'Unknown series',
  not_found: 'Not found',
  invitation_not_found: 'Invitation not found',
  invitation_expired: 'Invitation expired',
  invitation_used_up: 'Invitation used up',
  invitation_revoked: 'Invitation revoked',
  signup_closed: 'Sign-up closed',
  method_not_allowed: 'Method not allowed',
  not_acceptable: 'Not acceptable',
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  invalid_prices: 'Invalid prices',
  service_unavailable: 'Service unavailable',
  internal: 'Internal server error',
} as const satisfies Record<string, string>;

export type ErrorCode = keyof typeof CODES;
export const ERROR_CODES = Object.keys(CODES) as ErrorCode[];

export function errorTitle(code: ErrorCode): string {
  return CODES[code];
}

/** What an error may carry besides its code and detail; src/http/contract/problem.ts turns it into an answer. */
export interface ApiErrorOptions {
  /** Members added to the problem body (`violated-policies`, `parameter`, `errors`). */
  readonly extra?: Record<string, unknown>;
  /** When the client may try again, in whole seconds (a refusal by a budget or a store). */
  readonly retryAfterSeconds?: number;
  /** The rate-limit decision that refused the request, told to the client with the answer. */
  readonly limits?: LimitReport;
}

/**
 * A domain error with a client-facing code. `detail` must never contain a key or internals.
 * @example throw new ApiError('invalid_parameter', 'tz must be an IANA time zone such as Europe/Oslo', { extra: { parameter: 'tz' } })
 */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly options: ApiErrorOptions = {},
  ) {
    super(detail);
    this.name = 'ApiError';
  }
}
