/**
 * What runs beside the server over the event log (../server/serve.ts): the webhook delivery worker,
 * when the stores keep both the event log and the webhook tables, and the pruning of old events
 * (../events/prune.ts), when the event log can prune.
 */
import type { Config } from '../config/config.js';
import { startEventPruning } from '../events/prune.js';
import type { Stores } from '../stores/types.js';
import { sendOptionsOf } from './service.js';
import { DeliveryWorker } from './worker.js';

export function startDeliveries(
  config: Config,
  stores: Pick<Stores, 'events' | 'webhooks'>,
  log: { error(fields: object, message: string): void },
): { stop(): Promise<void> } | undefined {
  const { events, webhooks } = stores;
  const prune = events?.prune?.bind(events);
  const pruning =
    prune &&
    startEventPruning(prune, (error) =>
      log.error({ err: error }, 'pruning old events failed; the next run retries'),
    );
  const worker =
    events && webhooks
      ? new DeliveryWorker({
          store: webhooks,
          events,
          keySecret: config.keySecret,
          send: sendOptionsOf(config),
          onError: (error) =>
            log.error({ err: error }, 'webhook deliveries: a pass failed; the worker tries again'),
        })
      : undefined;
  worker?.start();
  if (!pruning && !worker) return undefined;
  return {
    async stop() {
      await Promise.all([pruning?.stop(), worker?.stop()]);
    },
  };
}
