/**
 * When a server prunes old events (docs/events.md, "How long events are kept"); what is pruned and
 * how is the event log's (src/stores/sql/event-log.ts).
 */
import type { PruneOptions, PruneResult } from '../stores/event-types.js';

/** How often a server prunes. */
export const PRUNE_EVERY_MS = 60 * 60_000;
/** The first run after a start: not during the start itself. */
const FIRST_RUN_MS = 60_000;

/**
 * Prunes a minute after the start and then every `PRUNE_EVERY_MS`, beside serving; several instances
 * on one PostgreSQL may prune at once, harmlessly (a row is deleted once).
 * @example const pruning = startEventPruning((o) => log.prune(o), (e) => logger.warn(e)); await pruning.stop();
 */
export function startEventPruning(
  prune: (options: PruneOptions) => Promise<PruneResult>,
  onError: (error: unknown) => void,
): { stop(): Promise<void> } {
  let running: Promise<unknown> | undefined;
  const stopping = new AbortController();
  const run = () => {
    if (stopping.signal.aborted || running) return;
    running = prune({ signal: stopping.signal })
      .catch(onError)
      .finally(() => {
        running = undefined;
      });
  };
  const first = setTimeout(run, FIRST_RUN_MS);
  const every = setInterval(run, PRUNE_EVERY_MS);
  first.unref();
  every.unref();
  return {
    async stop() {
      stopping.abort();
      clearTimeout(first);
      clearInterval(every);
      await running;
    },
  };
}
