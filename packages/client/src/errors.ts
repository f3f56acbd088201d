/**
 * Typed errors: every non-2xx answer becomes a `PricepointError` carrying the RFC 9457 problem body
 * (docs/using-the-api.md "Errors"). A body that is no problem (a proxy's HTML page) still becomes one, with a code
 * derived from the status, so callers only ever handle one error type for HTTP answers.
 */

/**
 * The closed set of problem codes the API answers (docs/using-the-api.md "Errors").
 *
 * @example
 * function isAuthProblem(code: ProblemCode): boolean {
 *   return code === 'missing_api_key' || code === 'invalid_api_key';
 * }
 */
export type ProblemCode =
  | 'missing_api_key'
  | 'invalid_api_key'
  | 'conflicting_api_keys'
  | 'api_key_in_query'
  | 'insufficient_scope'
  | 'outside_tier_history'
  | 'rate_limited'
  | 'too_many_auth_failures'
  | 'invalid_parameter'
  | 'unknown_series'
  | 'not_found'
  | 'method_not_allowed'
  | 'not_acceptable'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'invalid_prices'
  | 'service_unavailable'
  | 'internal';

/**
 * Every problem code, for runtime checks.
 *
 * @example
 * PROBLEM_CODES.includes('rate_limited'); // true
 */
export const PROBLEM_CODES: readonly ProblemCode[] = [
  'missing_api_key',
  'invalid_api_key',
  'conflicting_api_keys',
  'api_key_in_query',
  'insufficient_scope',
  'outside_tier_history',
  'rate_limited',
  'too_many_auth_failures',
  'invalid_parameter',
  'unknown_series',
  'not_found',
  'method_not_allowed',
  'not_acceptable',
  'payload_too_large',
  'unsupported_media_type',
  'invalid_prices',
  'service_unavailable',
  'internal',
];

/**
 * An RFC 9457 problem body as the API sends it, with its extension members (`symbols` of an
 * `unknown_series`, `parameter` of an `invalid_parameter`, `violated-policies` of a `rate_limited`).
 *
 * @example
 * const problem: Problem = { type: 'about:blank', title: 'Not Found', status: 404, code: 'not_found' };
 */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  code: ProblemCode;
  requestId?: string;
  [member: string]: unknown;
}

/**
 * An error answer of the API.
 *
 * @example
 * try {
 *   await client.today({ symbols: ['NOPE'] });
 * } catch (error) {
 *   if (error instanceof PricepointError && error.code === 'unknown_series') {
 *     console.log(error.problem['symbols'], error.requestId);
 *   } else throw error;
 * }
 */
export class PricepointError extends Error {
  override readonly name = 'PricepointError';
  /** The HTTP status. */
  readonly status: number;
  /** The problem `code`. */
  readonly code: ProblemCode;
  /** The whole problem body (synthesised when the server sent none). */
  readonly problem: Problem;
  /** The server's request id (from the body, else the `x-request-id` header), for support. */
  readonly requestId: string | undefined;
  /** For 429 (and a 503 that says so): the `Retry-After` in whole seconds. */
  readonly retryAfterSeconds: number | undefined;

  constructor(problem: Problem, options: { requestId?: string; retryAfterSeconds?: number } = {}) {
    super(problem.detail ?? problem.title);
    this.status = problem.status;
    this.code = problem.code;
    this.problem = problem;
    this.requestId = problem.requestId ?? options.requestId;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** The code for a status when the body names none. */
function codeForStatus(status: number): ProblemCode {
  switch (status) {
    case 400:
      return 'invalid_parameter';
    case 401:
      return 'invalid_api_key';
    case 403:
      return 'insufficient_scope';
    case 404:
      return 'not_found';
    case 405:
      return 'method_not_allowed';
    case 406:
      return 'not_acceptable';
    case 413:
      return 'payload_too_large';
    case 415:
      return 'unsupported_media_type';
    case 422:
      return 'invalid_prices';
    case 429:
      return 'rate_limited';
    case 502:
    case 503:
    case 504:
      return 'service_unavailable';
    default:
      return 'internal';
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Turns an error answer's status and body text into a problem. A JSON body with the RFC 9457 fields
 * is kept whole; anything else gives a synthesised problem whose detail is the start of the body.
 */
export function toProblem(status: number, statusText: string, body: string): Problem {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  if (isRecord(parsed) && typeof parsed['code'] === 'string') {
    const code = parsed['code'];
    return {
      ...parsed,
      type: typeof parsed['type'] === 'string' ? parsed['type'] : 'about:blank',
      title: typeof parsed['title'] === 'string' ? parsed['title'] : statusText || `HTTP ${status}`,
      status: typeof parsed['status'] === 'number' ? parsed['status'] : status,
      code: (PROBLEM_CODES as readonly string[]).includes(code)
        ? (code as ProblemCode)
        : codeForStatus(status),
    };
  }
  const detail = body.trim().slice(0, 200);
  return {
    type: 'about:blank',
    title: statusText || `HTTP ${status}`,
    status,
    code: codeForStatus(status),
    ...(detail !== '' && { detail }),
  };
}
