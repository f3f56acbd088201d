/**
 * Who is calling (DESIGN section 3). The key comes from `x-api-key` or `Authorization: Bearer`;
 * malformed, unknown, revoked and expired keys all get the same `invalid_api_key`, so an answer
 * never tells which. Failed attempts are counted per client address and, past the limit, refused
 * before any lookup. Verified keys are cached briefly, so a revocation is seen within the cache
 * time (under the 5 s DESIGN promises) without a database read per request. Last-used times are
 * kept in memory and written in batches, so a request never costs a database write.
 */

import { hash } from 'node:crypto';
import { ApiError } from '../domain/errors/api-error.js';
import { isWellFormedKey, keyHash, keyKind } from '../domain/keys/key-format.js';
import type { LimitRule } from '../domain/limits/tiers.js';
import { addressGroup } from '../domain/net/client-address.js';
import type { KeyRecord, KeyStore, LimitGate, RateLimitStore } from '../stores/types.js';

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
  /**
   * How often last-used times are written (default 5 s). They are collected in memory and written
   * in one batch, never once per request; `close()` writes what is left.
   */
  readonly lastUsedFlushMs?: number;
  /** Told when a batch of last-used times could not be written (it is kept for the next flush). */
  readonly onFlushError?: (error: unknown) => void;
}

const WWW_AUTHENTICATE = { 'www-authenticate': 'Bearer realm="pricepoint"' };
const HOW = 'Send it in the x-api-key header or as Authorization: Bearer <key>.';
const CACHE_LIMIT = 100_000;
/** How long a verified key stays usable past its cache time while the key store cannot be reached. */
const STALE_MS = 15 * 60_000;
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

/** Where failed logins from `ip` (and its neighbours) are counted. */
function failureSubject(ip: string): string {
  return `auth-failures:${addressGroup(ip)}`;
}

/** What the verified-key cache is keyed by: the key's SHA-256, in one call. */
function fingerprint(key: string): string {
  return hash('sha256', key, 'base64');
}

/** Neither revoked nor expired at `now`. */
function isLive(record: KeyRecord, now: number): boolean {
  return (
    (record.revokedAt === null || record.revokedAt > now) &&
    (record.expiresAt === null || record.expiresAt > now)
  );
}

/** The key a request presents, `undefined` when none, or the error to answer. */
function presentedKey(credentials: Pick<Credentials, 'apiKeyHeader' | 'authorization'>): string | undefined {
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
  let lastUsed = new Map<string, number>();
  let flushing: Promise<void> = Promise.resolve();

  /** Writes the collected last-used times in one batch; a failed batch is merged back for the next. */
  function flushLastUsed(): Promise<void> {
    flushing = flushing.then(async () => {
      if (lastUsed.size === 0) return;
      const batch = lastUsed;
      lastUsed = new Map();
      try {
        await deps.keys.recordLastUsed(batch);
      } catch (error) {
        for (const [id, at] of batch) lastUsed.set(id, Math.max(at, lastUsed.get(id) ?? at));
        try {
          deps.onFlushError?.(error);
        } catch {
          // A failing reporter must not stop later flushes.
        }
      }
    });
    return flushing;
  }
  const flusher = setInterval(() => void flushLastUsed(), deps.lastUsedFlushMs ?? 5_000);
  // Housekeeping must never keep a process alive.
  flusher.unref();

  /**
   * The record of a well-formed key, from the cache or the key store. The cache is keyed by the
   * key's plain SHA-256, made in one call: an HMAC per request costs several times as much, and a
   * fingerprint held in this process' memory is never stored anywhere.
   */
  async function lookup(key: string, now: number): Promise<KeyRecord | undefined> {
    const print = fingerprint(key);
    const hit = cache.get(print);
    if (hit !== undefined && hit.until > now) return hit.record;
    let record: KeyRecord | undefined;
    try {
      record = await deps.keys.findByHash(keyHash(key, deps.keySecret));
    } catch (error) {
      // The key store is away (DESIGN section 7): a key verified a little while ago keeps working,
      // since nothing can revoke it while the store is down; an unknown key gets the store's error.
      if (hit !== undefined && hit.until + STALE_MS > now) return hit.record;
      throw error;
    }
    if (record === undefined) {
      cache.delete(print);
      return undefined;
    }
    if (cache.size >= CACHE_LIMIT) cache = new Map();
    cache.set(print, { record, until: now + deps.cacheMs });
    return record;
  }

  return {
    /** The key record of a valid, live key; throws an `ApiError` (401 or 429) otherwise. */
    async authenticate(credentials: Credentials): Promise<KeyRecord> {
      const now = deps.clock();
      const subject = failureSubject(credentials.ip);
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
        const record = await lookup(key, now);
        if (record === undefined || !isLive(record, now)) {
          throw unauthorized('invalid_api_key');
        }
        lastUsed.set(record.id, now);
        return record;
      } catch (error) {
        // A request without any key is a misconfigured client, not a guess: it is not counted; nor
        // is a lookup that failed because a store is away (503), which says nothing about the key.
        if (error instanceof ApiError && error.status === 401 && error.code !== 'missing_api_key') {
          await deps.rateLimits.consume(subject, failureRule, now);
        }
        throw error;
      }
    },

    /**
     * The record of a key verified a moment ago, for the fast path: `undefined` unless the key is
     * cached and live. It counts nothing and throws nothing; whatever it cannot vouch for goes
     * through `authenticate`. The caller must still hold the request to `failureGate` (the fast
     * path does it in the same store call that counts the request) and then call `used`.
     */
    verifiedFromCache(
      credentials: Pick<Credentials, 'apiKeyHeader' | 'authorization'>,
    ): KeyRecord | undefined {
      let key: string | undefined;
      try {
        key = presentedKey(credentials);
      } catch {
        return undefined;
      }
      if (key === undefined) return undefined;
      const now = deps.clock();
      // Only a key `authenticate` verified is in the cache, so a hit is well formed (and a demo key
      // only where demo keys are accepted); the checksum is not worked out again.
      const hit = cache.get(fingerprint(key));
      if (hit === undefined || hit.until <= now || !isLive(hit.record, now)) return undefined;
      return hit.record;
    },

    /** The failed-login budget of a client address: while it is used up, no key is accepted from it. */
    failureGate(ip: string): LimitGate {
      return { subject: failureSubject(ip), limits: failureRule };
    },

    /** Notes that `record` was used just now (written with the next batch of last-used times). */
    used(record: KeyRecord): void {
      lastUsed.set(record.id, deps.clock());
    },

    /** Forgets cached keys, e.g. after a local revocation. */
    forget(): void {
      cache = new Map();
    },

    /** Writes the last-used times collected so far (the timer does this every few seconds). */
    flushLastUsed,

    /** Stops the timer and writes what is left; call it before the key store closes. */
    async close(): Promise<void> {
      clearInterval(flusher);
      await flushLastUsed();
    },
  };
}

export type Authenticator = ReturnType<typeof createAuthenticator>;
