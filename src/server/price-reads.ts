/**
 * The price service as the server reads prices: built once for the event loop (./compose.ts) and
 * once in each build thread (./build-thread.ts), which loads this and not the whole app.
 */
import type { Config } from '../config/config.js';
import { createPriceService, type PriceService } from '../services/price-service.js';
import { type SourceIdentity, sourceTermsLookup } from '../sources/source-terms.js';
import type { PriceStore } from '../stores/types.js';

/** What the price service takes of the configuration: plain data, so a build thread gets a copy. */
export type PriceReadConfig = Pick<Config, 'readCacheMs' | 'fx' | 'tariffs'> & {
  readonly sources: readonly SourceIdentity[];
};

/** The price service over `prices`, with the configured caches, FX pairs, tariffs and upstream terms. */
export function priceServiceOf(
  config: PriceReadConfig,
  prices: PriceStore,
  clock: () => number,
): PriceService {
  return createPriceService({
    prices,
    clock,
    cache: { freshMs: config.readCacheMs, staleMs: 15 * 60_000, now: () => performance.now() },
    fx: config.fx,
    tariffs: config.tariffs,
    terms: sourceTermsLookup(config.sources),
  });
}
