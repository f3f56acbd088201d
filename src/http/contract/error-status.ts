/**
 * The HTTP status of each error code (docs/errors.md): the one place that maps what went wrong,
 * as services say it, to HTTP. src/http/contract/problem.ts answers with it.
 */
import type { ErrorCode } from '../../domain/errors/api-error.js';

const STATUS: Readonly<Record<ErrorCode, number>> = {
  missing_api_key: 401,
  invalid_api_key: 401,
  conflicting_api_keys: 401,
  api_key_in_query: 401,
  insufficient_scope: 403,
  outside_tier_history: 403,
  address_not_allowed: 403,
  self_rotation_not_allowed: 403,
  rate_limited: 429,
  too_many_auth_failures: 429,
  invalid_parameter: 400,
  unknown_series: 404,
  not_found: 404,
  invitation_not_found: 404,
  invitation_expired: 410,
  invitation_used_up: 410,
  invitation_revoked: 410,
  signup_closed: 403,
  method_not_allowed: 405,
  not_acceptable: 406,
  payload_too_large: 413,
  unsupported_media_type: 415,
  invalid_prices: 422,
  service_unavailable: 503,
  internal: 500,
};

/** @example errorStatus('unknown_series') // 404 */
export function errorStatus(code: ErrorCode): number {
  return STATUS[code];
}
