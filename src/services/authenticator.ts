/**
 * Who is calling (docs/keys-and-tiers.md). The key comes from `x-api-key` or `Authorization: Bearer`;
 * malformed, unknown, revoked and expired keys all get the same `invalid_api_key`, so an answer
 * never tells which, by its body or by its timing. Failed attempts are counted per client address
 * (./failure-budget.ts): a unit is reserved before each key lookup, so past the budget the answer
 * is 429 before any lookup, exactly, on every engine. Verified and refused keys are cached briefly,
 * so a revocation is seen within the cache time (under the 5 s promised in docs/keys-and-tiers.md) without a database
 * read per request. Last-used times are kept in memory and written in batches, so a request never
 * costs a database write.
 */

import { hash } from 'node:crypto';
import { boundedCache } from '../cache/bounded-cache.js';
import { ApiError } from '../domain/errors/api-error.js';
import { isWellFormedKey, keyHash, keyKind } from '../domain/keys/key-format.js';
import { allowedBy } from '../domain/net/allowed-addresses.js';
import type { KeyRecord, KeyStore, LimitGate, RateLimitStore } from '../stores/types.js';
import { createFailureBudget } from './failure-budget.js';

export interface Credentials {
  readonly apiKeyHeader: string | string[] | undefined;
  readonly authorization: string | undefined;
  /** The raw query string, without `?`. */
  readonly query: string;
  readonly ip: string;
  /**
   * The caller holds the request to `failureGate` in the store call that counts it, so a cached key
   * is not checked against the budget here: one rate-limit store call per request instead of two.
   */
  readonly gatedLater?: boolean;
  /** The caller's memory of the key its client sent last, when it keeps one (`KeyMemo`). */
  readonly memo?: KeyMemo;
}

/**
 * Where a caller remembers the fingerprint of the last key one client sent, so that the same key
 * sent again (every request on a keep-alive connection) is not hashed again: a SHA-256 call costs
 * more than the rest of the key check. It holds the key itself, so the
 * caller keeps it no longer than that client's connection, which holds the key's bytes anyway.
 * It also remembers the last query string found to hold no key, which is then not read again.
 */
export interface KeyMemo {
  key: string | undefined;
  print: string | undefined;
  query?: string | undefined;
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

const HOW = 'Send it in the x-api-key header or as Authorization: Bearer <key>.';
/** Verdicts kept at most in each cache (live keys, refused keys); past it the least recently used go. */
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
  return new ApiError(code, detail);
}

function keyInQuery(query: string): boolean {
  if (query === '') return false;
  // Every name of KEY_PARAMS holds `key` or `token`; without those, a key's prefix or a
  // percent-encoded byte, no parameter can carry a key (lowercased first, as names are compared).
  const lower = query.toLowerCase();
  if (!lower.includes('key') && !lower.includes('token') && !lower.includes('pp_') && !lower.includes('%')) {
    return false;
  }
  for (const [name, value] of new URLSearchParams(query)) {
    // A key pasted as a name (`?pp_live_...`) is as much in the URL as one given as a value.
    if (KEY_PARAMS.has(name.toLowerCase()) || KEY_LOOKING.test(name) || KEY_LOOKING.test(value)) return true;
  }
  return false;
}

/** What the verified-key cache is keyed by: the key's SHA-256, in one call. */
function fingerprint(key: string): string {
  return hash('sha256', key, 'base64');
}

/** The fingerprint of `key`, from `memo` when it is the key `memo` remembers; `memo` then remembers it. */
function fingerprintOf(key: string, memo: KeyMemo | undefined): string {
  if (memo === undefined) return fingerprint(key);
  if (memo.key !== key || memo.print === undefined) {
    const print = fingerprint(key);
    memo.key = key;
    memo.print = print;
    return print;
  }
  return memo.print;
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

/** The one key a request presents; else throws the 401 to answer. */
function requestedKey(credentials: Credentials): string {
  const { query, memo } = credentials;
  if (memo === undefined || memo.query !== query) {
    if (keyInQuery(query)) throw unauthorized('api_key_in_query');
    if (memo !== undefined) memo.query = query;
  }
  const key = presentedKey(credentials);
  if (key === undefined) throw unauthorized('missing_api_key');
  return key;
}

/** Throws the 401 of a key that is not worth looking up. */
function checkLookupWorthy(key: string, acceptDemoKeys: boolean): void {
  if (!isWellFormedKey(key)) throw unauthorized('invalid_api_key');
  if (!acceptDemoKeys && keyKind(key) === 'demo') throw unauthorized('invalid_api_key');
}

/** Who is calling: keys checked, verdicts cached briefly, failed attempts counted per address. */
export interface Authenticator {
  /**
   * The key record of a valid, live key used from an address it allows; throws an `ApiError`
   * otherwise (401, 429, or 403 `address_not_allowed`).
   */
  authenticate(credentials: Credentials): Promise<KeyRecord>;
  /** The failed-login budget of a client address: while it is used up, no key is accepted from it. */
  failureGate(ip: string): LimitGate;
  /**
   * Forgets every cached verdict, live and refused, e.g. after a local revocation or a key notice
   * from another instance (a key created meanwhile is then found at once).
   */
  forget(): void;
  /** Writes the last-used times collected so far (the timer does this every few seconds). */
  flushLastUsed(): Promise<void>;
  /** Stops the timer and writes what is left; call it before the key store closes. */
  close(): Promise<void>;
}

export function createAuthenticator(deps: AuthenticatorDeps): Authenticator {
  /** The allow-list test of each key record that has one, built once per record. */
  const allowLists = new WeakMap<KeyRecord, (address: string) => boolean>();

  /**
   * Refuses a live key used from an address its allow-list leaves out (docs/keys-and-tiers.md): here,
   * where every entry authenticates, so no path can skip it. The key is valid, so this is no failed
   * login: it takes nothing from the address' budget, and nothing from the key's limits either.
   */
  function checkAddress(record: KeyRecord, ip: string): void {
    const cidrs = record.allowedAddresses;
    if (cidrs == null) return;
    let allows = allowLists.get(record);
    if (allows === undefined) {
      allows = allowedBy(cidrs);
      allowLists.set(record, allows);
    }
    if (!allows(ip)) {
      throw new ApiError(
        'address_not_allowed',
        'This key may not be used from the address this request came from.',
      );
    }
  }

  const budget = createFailureBudget(deps.rateLimits, deps.failuresPerMinute);
  /** Keys found live in the last `cacheMs`, by fingerprint (and kept `STALE_MS` more for a store outage). */
  const cache = boundedCache<string, { record: KeyRecord; until: number }>({ maxEntries: CACHE_LIMIT });
  /**
   * Keys refused in the last `cacheMs`, by fingerprint, to the time they are refused until: unknown,
   * revoked and expired keys alike, so all three are answered the same way and equally fast
   * (docs/decisions.md). Entries come only with a unit of a failed-login budget, and the cache is bounded.
   */
  const refused = boundedCache<string, number>({ maxEntries: CACHE_LIMIT });
  /** Lookups in flight, by address group and fingerprint: a burst of one key shares one lookup. */
  const lookups = new Map<string, Promise<KeyRecord | undefined>>();
  /** Moves on with every `forget`, so a lookup that started before it does not fill the caches again. */
  let generation = 0;
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

  /** Keeps the outcome of a lookup for `cacheMs`: a live key in `cache`, anything else in `refused`. */
  function remember(print: string, record: KeyRecord | undefined, now: number): void {
    const until = now + deps.cacheMs;
    if (record !== undefined && isLive(record, now)) {
      refused.delete(print);
      cache.set(print, { record, until });
      return;
    }
    cache.delete(print);
    if (until <= now) return;
    refused.set(print, until);
  }

  /**
   * The stored record of a well-formed key. The lookup is by the key's hash (never the key); the
   * caches are keyed by its plain SHA-256, made in one call: an HMAC per request costs several times
   * as much, and a fingerprint held in this process' memory is never stored anywhere.
   */
  async function find(key: string, print: string, now: number): Promise<KeyRecord | undefined> {
    const started = generation;
    const stale = cache.get(print);
    let record: KeyRecord | undefined;
    try {
      record = await deps.keys.findByHash(keyHash(key, deps.keySecret));
    } catch (error) {
      // The key store is away (docs/scale-out.md): a key verified a little while ago keeps working,
      // since nothing can revoke it while the store is down; an unknown key gets the store's error.
      if (stale !== undefined && stale.until + STALE_MS > now) return stale.record;
      throw error;
    }
    if (generation === started) remember(print, record, now);
    return record;
  }

  /**
   * A key neither cache knows, checked with the store. The first request for it reserves a unit of
   * its address' failed-login budget before the store is asked, atomically in the rate-limit store:
   * so however many requests arrive at once, on however many instances, no more lookups than the
   * budget reach the store, and past the budget the answer is 429 before any lookup. A live key gives
   * its unit back (valid keys never use up the budget); any other outcome keeps it as its failure.
   * Requests from the same address that arrive while that lookup is in flight wait for it instead of
   * reserving units of their own, and pay their own failure if it fails.
   */
  async function verify(key: string, print: string, subject: string, now: number): Promise<KeyRecord> {
    const id = `${subject}\n${print}`;
    const shared = lookups.get(id);
    if (shared !== undefined) {
      const record = await shared; // the first request's 429 or store error is this one's too
      if (record !== undefined && isLive(record, now)) {
        await budget.check(subject, now);
        return record;
      }
      await budget.take(subject, now);
      throw unauthorized('invalid_api_key');
    }
    const reservation = budget.take(subject, now);
    const lookup = reservation.then(() => find(key, print, now));
    lookups.set(id, lookup);
    const done = () => {
      if (lookups.get(id) === lookup) lookups.delete(id);
    };
    lookup.then(done, done);
    const reserved = await reservation;
    let record: KeyRecord | undefined;
    try {
      record = await lookup;
    } catch (error) {
      // A store that is away (503) says nothing about the key: not a failure.
      await budget.giveBack(subject, reserved);
      throw error;
    }
    if (record !== undefined && isLive(record, now)) {
      await budget.giveBack(subject, reserved);
      return record;
    }
    throw unauthorized('invalid_api_key');
  }

  /**
   * Throws `error`, the 401 of a request whose key is missing or not worth looking up, after
   * counting it: a request without any key is a misconfigured client, not a guess, so it is not
   * counted, but it is refused like any other while the address is past its budget.
   */
  async function refuse(error: unknown, ip: string, now: number): Promise<never> {
    const subject = budget.subject(ip);
    if (error instanceof ApiError && error.code === 'missing_api_key') await budget.check(subject, now);
    else await budget.take(subject, now);
    throw error;
  }

  return {
    async authenticate(credentials: Credentials): Promise<KeyRecord> {
      const now = deps.clock();
      let key: string;
      try {
        key = requestedKey(credentials);
      } catch (error) {
        return refuse(error, credentials.ip, now);
      }
      const print = fingerprintOf(key, credentials.memo);
      const known = cache.get(print);
      if (known !== undefined && known.until > now) {
        if (isLive(known.record, now)) {
          // Only a key that passed `checkLookupWorthy` is ever cached: a hit needs no check again.
          if (credentials.gatedLater !== true) await budget.check(budget.subject(credentials.ip), now);
          checkAddress(known.record, credentials.ip);
          lastUsed.set(known.record.id, now);
          return known.record;
        }
        remember(print, known.record, now); // it expired while cached: refused from now on
      }
      try {
        checkLookupWorthy(key, deps.acceptDemoKeys);
      } catch (error) {
        return refuse(error, credentials.ip, now);
      }
      const subject = budget.subject(credentials.ip);
      if ((refused.get(print) ?? 0) > now) {
        await budget.take(subject, now);
        throw unauthorized('invalid_api_key');
      }
      const record = await verify(key, print, subject, now);
      checkAddress(record, credentials.ip);
      lastUsed.set(record.id, now);
      return record;
    },

    failureGate(ip: string): LimitGate {
      return budget.gate(ip);
    },

    forget(): void {
      cache.clear();
      refused.clear();
      generation += 1;
    },

    flushLastUsed,
    async close(): Promise<void> {
      clearInterval(flusher);
      await flushLastUsed();
    },
  };
}
