/**
 * Starting the delivery worker beside the server (../server/serve.ts): only when the stores keep
 * both the event log and the webhook tables.
 */
import type { Config } from '../config/config.js';
import type { Stores } from '../stores/types.js';
import { sendOptionsOf } from './service.js';
import { DeliveryWorker } from './worker.js';

export function startDeliveries(
  config: Config,
  stores: Pick<Stores, 'events' | 'webhooks'>,
  log: { error(fields: object, message: string): void },
): { stop(): Promise<void> } | undefined {
  if (!stores.events || !stores.webhooks) return undefined;
  const worker = new DeliveryWorker({
    store: stores.webhooks,
    events: stores.events,
    keySecret: config.keySecret,
    send: sendOptionsOf(config),
    onError: (error) => log.error({ err: error }, 'webhook deliveries: a pass failed; the next one retries'),
  });
  worker.start();
  return worker;
}
