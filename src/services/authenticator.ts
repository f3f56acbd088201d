/**
 * Who is calling (DESIGN section 3). The key comes from `x-api-key` or `Authorization: Bearer`;
 * malformed, unknown, revoked and expired keys all get the same `invalid_api_key`, so an answer
 * never tells which. Failed attempts are counted per client address and, past the limit, refused
 * before any lookup. Verified keys are cached briefly, so a revocation is seen within the cache
 * time (under the 5 s DESIGN promises) without a database read per request.
 */
import { ApiError } from '../domain/errors/api-error.js';
import { isWellFormedKey, keyHash, keyKind } from '../domain/keys/key-format.js';
import type { LimitRule } from '../domain/limits/tiers.js';
import { addressGroup } from '../domain/net/client-address.js';
import type { KeyRecord, KeyStore, RateLimitStore } from '../stores/types.js';

export interface Credentials {
  readonly apiKeyHeader: string | string[] | undefined;
  readonly authorization: string | undefined;
  /** The raw query string, without `?`. */
  readonly query: string;
  readonly ip: string;
}

export interface AuthenticatorDeps {
  readonly keys: KeyStore;
  readonly rateLimits: RateLimitStore;
  readonly clock: () => number;
  readonly keySecret: string | undefined;
  readonly cacheMs: number;
  readonly failuresPerMinute: number;
  /**
   * Demo keys work only while the development data set is served: a data folder once started
   * with it keeps the documented demo key, which a production start must not accept.
   */
  readonly acceptDemoKeys: boolean;
}

const WWW_AUTHENTICATE = { 'www-authenticate': 'Bearer realm="pricepoint"' };
const HOW = 'Send it in the x-api-key header or as Authorization: Bearer <key>.';
const CACHE_LIMIT = 100_000;
/** Query parameter names that clients use for keys; any name or value that looks like a key counts too. */
const KEY_PARAMS = new Set(['api_key', 'apikey', 'api-key', 'x-api-key', 'key', 'token', 'access_token']);
const KEY_LOOKING = /pp_(live|test|demo)_/;

function unauthorized(
  code: 'missing_api_key' | 'invalid_api_key' | 'conflicting_api_keys' | 'api_key_in_query',
) {
  const detail = {
    missing_api_key: `This endpoint needs an API key. ${HOW}`,
    invalid_api_key: 'The API key is not valid.',
    conflicting_api_keys: 'The x-api-key and Authorization headers carry different keys; send one key.',
    api_key_in_query: `API keys are not accepted in the query string, where they end up in logs. ${HOW}`,
  }[code];
  return new ApiError(code, detail, { headers: WWW_AUTHENTICATE });
}

function keyInQuery(query: string): boolean {
  if (query === '') return false;
  for (const [name, value] of new URLSearchParams(query)) {
    // A key pasted as a name (`?pp_live_...`) is as much in the URL as one given as a value.
    if (KEY_PARAMS.has(name.toLowerCase()) || KEY_LOOKING.test(name) || KEY_LOOKING.test(value)) return true;
  }
  return false;
}

/** The key a request presents, `undefined` when none, or the error to answer. */
function presentedKey(credentials: Credentials): string | undefined {
  const header = credentials.apiKeyHeader;
  if (Array.isArray(header)) throw unauthorized('invalid_api_key');
  const fromHeader = header?.trim() || undefined;
  let fromBearer: string | undefined;
  const authorization = credentials.authorization?.trim();
  if (authorization) {
    const match = /^bearer[ \t]+(\S+)$/i.exec(authorization);
    if (match) fromBearer = match[1];
    else if (fromHeader === undefined) throw unauthorized('invalid_api_key');
  }
  if (fromHeader !== undefined && fromBearer !== undefined && fromHeader !== fromBearer) {
    throw unauthorized('conflicting_api_keys');
  }
  return fromHeader ?? fromBearer;
}

export function createAuthenticator(deps: AuthenticatorDeps) {
  const failureRule: LimitRule[] = [
    { name: 'auth-failures', limit: deps.failuresPerMinute, windowSeconds: 60 },
  ];
  let cache = new Map<string, { record: KeyRecord; until: number }>();

  async function lookup(hash: string, now: number): Promise<KeyRecord | undefined> {
    const hit = cache.get(hash);
    if (hit !== undefined && hit.until > now) return hit.record;
    const record = await deps.keys.findByHash(hash);
    if (record === undefined) {
      cache.delete(hash);
      return undefined;
    }
    if (cache.size >= CACHE_LIMIT) cache = new Map();
    cache.set(hash, { record, until: now + deps.cacheMs });
    return record;
  }

  return {
    /** The key record of a valid, live key; throws an `ApiError` (401 or 429) otherwise. */
    async authenticate(credentials: Credentials): Promise<KeyRecord> {
      const now = deps.clock();
      const subject = `auth-failures:${addressGroup(credentials.ip)}`;
      const budget = await deps.rateLimits.peek(subject, failureRule, now);
      if (!budget.allowed) {
        const reset = budget.states[0]?.resetAtMs ?? now + 60_000;
        const seconds = Math.max(1, Math.ceil((reset - now) / 1000));
        throw new ApiError(
          'too_many_auth_failures',
          `Too many failed authentications from this address; try again in ${seconds} s.`,
          { headers: { 'retry-after': String(seconds) } },
        );
      }
      try {
        if (keyInQuery(credentials.query)) throw unauthorized('api_key_in_query');
        const key = presentedKey(credentials);
        if (key === undefined) throw unauthorized('missing_api_key');
        if (!isWellFormedKey(key)) throw unauthorized('invalid_api_key');
        if (!deps.acceptDemoKeys && keyKind(key) === 'demo') throw unauthorized('invalid_api_key');
        const record = await lookup(keyHash(key, deps.keySecret), now);
        if (
          record === undefined ||
          (record.revokedAt !== null && record.revokedAt <= now) ||
          (record.expiresAt !== null && record.expiresAt <= now)
        ) {
          throw unauthorized('invalid_api_key');
        }
        return record;
      } catch (error) {
        // A request without any key is a misconfigured client, not a guess: it is not counted.
        if (error instanceof ApiError && error.code !== 'missing_api_key') {
          await deps.rateLimits.consume(subject, failureRule, now);
        }
        throw error;
      }
    },

    /** Forgets cached keys, e.g. after a local revocation. */
    forget(): void {
      cache = new Map();
    },
  };
}

export type Authenticator = ReturnType<typeof createAuthenticator>;
