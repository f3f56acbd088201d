/**
 * Keeps one of Node's tick objects alive for the life of the process, so that `process.nextTick`
 * stays on V8's fast path (bench/README.md, "The nextTick lottery").
 *
 * Each `process.nextTick` call queues the literal
 * `{ [async_id_symbol]: id, [trigger_async_id_symbol]: trigger, callback, args }`. V8 defines the
 * properties of a literal with computed keys through a cache per property that knows one receiver
 * map or, from the second map on, any map (megamorphic), and it never goes back. The maps a tick
 * object passes through stay alive only while a tick object is alive. A full collection at a moment
 * when the tick queue is empty drops them; the next tick object is built on new maps, and every
 * cache that saw the old ones turns megamorphic for the life of the process. From then on each
 * `nextTick` defines its four properties in V8's runtime, several times slower, on every tick of every
 * answer (bench/README.md, "The nextTick lottery"). Whether a server process had that happen depended on
 * where its start-up's full collections fell.
 *
 * One tick object held holds its map and, through each map's pointer to the map it came from, the
 * maps before it. It is caught with the public `executionAsyncResource()`, which inside a tick's
 * callback is that tick's object. Nothing else is touched: if a Node version hands out another
 * resource there, holding it costs one object and changes nothing.
 */
import { executionAsyncResource } from 'node:async_hooks';

// Written once and never read: being referenced from here is all it is for.
// biome-ignore lint/correctness/noUnusedVariables: a holder, not a value to read
let held: object | undefined;

/**
 * Holds the object of the next tick. Call it first thing in a long-lived process.
 * @example await holdTickShape();
 */
export function holdTickShape(): Promise<void> {
  return new Promise((resolve) => {
    process.nextTick(() => {
      held ??= executionAsyncResource();
      resolve();
    });
  });
}
