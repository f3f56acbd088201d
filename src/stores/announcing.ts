/**
 * Price and series writes announced on the notice bus (docs/scale-out.md), whoever makes them: the
 * HTTP routes, `pricepoint import`, `series upsert` or the dev data. Every instance then drops
 * what it cached of those series, so an import through one is served by all within seconds.
 */
import type { NoticeBus, PriceStore, PriceWriteSession } from './types.js';

export function announceChanges(
  prices: PriceStore,
  notices: NoticeBus,
  onError: (error: unknown) => void = () => {},
): PriceStore {
  const announce = (symbols: Iterable<string>) => {
    const list = [...new Set(symbols)];
    // Best effort: a lost notice only delays the change until the caches' few seconds run out.
    if (list.length > 0) notices.publish({ kind: 'prices', symbols: list }).catch(onError);
  };
  return {
    listSeries: () => prices.listSeries(),
    getSeries: (symbol) => prices.getSeries(symbol),
    pricesBetween: (symbol, from, to) => prices.pricesBetween(symbol, from, to),
    latestPrice: (symbol, at, from) => prices.latestPrice(symbol, at, from),
    coverage: (symbol) => prices.coverage(symbol),
    ...(prices.dayProvenance && { dayProvenance: prices.dayProvenance.bind(prices) }),
    ping: () => prices.ping(),
    ...(prices.changeToken && { changeToken: () => (prices.changeToken as () => string)() }),
    async upsertSeries(series) {
      await prices.upsertSeries(series);
      announce([series.symbol]);
    },
    async upsertPrices(symbol, points) {
      const written = await prices.upsertPrices(symbol, points);
      announce([symbol]);
      return written;
    },
    async beginPriceWrites(options): Promise<PriceWriteSession> {
      const session = await prices.beginPriceWrites(options);
      const symbols = new Set<string>();
      return {
        async write(points) {
          for (const p of points) symbols.add(p.symbol);
          await session.write(points);
        },
        async commit() {
          await session.commit();
          announce(symbols);
        },
        rollback: () => session.rollback(),
      };
    },
  };
}
