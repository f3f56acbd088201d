/**
 * The boundary between the service and its databases (docs/scale-out.md): a store that fails (the
 * database is down, a lock is held too long) becomes a 503 `service_unavailable` for the client,
 * never a 500 or a 401, and is counted. The cause is logged by the caller's `onError`, never sent.
 * Calls a circuit breaker refused without asking the database (./circuit-breaker.ts) are 503s too,
 * but neither logged nor counted again.
 */
import { ApiError } from '../domain/errors/api-error.js';
import { CircuitOpenError } from './circuit-breaker.js';
import type { PriceStore, Stores } from './types.js';

export type StoreName = 'prices' | 'keys' | 'webhooks' | 'usage' | 'audit' | 'invitations';

function unavailable(cause: unknown): ApiError {
  if (cause instanceof ApiError) return cause;
  // SQLite's SQLITE_FULL, the file system's ENOSPC, PostgreSQL's disk_full: say so, since retrying
  // does not help until the operator frees space (docs/using-the-api.md "Errors").
  const code = (cause as { code?: unknown } | null)?.code;
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === '53100') {
    return new ApiError(
      'service_unavailable',
      "The database's disk is full: nothing was written. Reads go on; writes work again once space is freed.",
    );
  }
  return new ApiError(
    'service_unavailable',
    'A database cannot be reached just now; retry in a few seconds.',
  );
}

/** Every method of `target`, with failures turned into 503s; objects a method resolves to are guarded too. */
function guard<T extends object>(
  target: T,
  name: StoreName,
  onError: (store: StoreName, error: unknown) => void,
): T {
  return new Proxy(target, {
    get(object, property) {
      const value: unknown = Reflect.get(object, property);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const fail = (error: unknown): never => {
          // A call the circuit breaker refused was never sent: the failure that tripped it was
          // reported, and one report per outage says enough (a request rate of them would not).
          if (!(error instanceof ApiError) && !(error instanceof CircuitOpenError)) onError(name, error);
          throw unavailable(error);
        };
        let result: unknown;
        try {
          result = value.apply(object, args);
        } catch (error) {
          return fail(error);
        }
        if (!(result instanceof Promise)) return result;
        return result.then(
          (resolved: unknown) =>
            resolved !== null &&
            typeof resolved === 'object' &&
            !Array.isArray(resolved) &&
            'commit' in resolved
              ? guard(resolved, name, onError) // an import session
              : resolved,
          fail,
        );
      };
    },
  });
}

/**
 * The same stores, with price, key and webhook store failures answered as 503.
 * @example const stores = guardStores(opened, (store, error) => log.error({ err: error, store }))
 */
export function guardStores(stores: Stores, onError: (store: StoreName, error: unknown) => void): Stores {
  return {
    ...stores,
    prices: guard(stores.prices, 'prices', onError),
    keys: guard(stores.keys, 'keys', onError),
    ...(stores.webhooks && { webhooks: guard(stores.webhooks, 'webhooks', onError) }),
    ...(stores.usage && { usage: guard(stores.usage, 'usage', onError) }),
    ...(stores.audit && { audit: guard(stores.audit, 'audit', onError) }),
    ...(stores.invitations && { invitations: guard(stores.invitations, 'invitations', onError) }),
    close: () => stores.close(),
  };
}

/** The price store alone, guarded the same way (a build thread reads only prices). */
export function guardPrices(
  prices: PriceStore,
  onError: (store: StoreName, error: unknown) => void,
): PriceStore {
  return guard(prices, 'prices', onError);
}
