/**
 * The MQTT publisher of `pricepoint serve` (docs/mqtt.md), over the lease table the sources use
 * (docs/sources.md "Many instances"): in PostgreSQL for a deployment of many instances, in the
 * embedded database file otherwise.
 */
import type { Config } from '../config/config.js';
import { openLease } from '../sources/sources.js';
import { type MqttPublisher, type MqttPublisherDeps, startMqttPublisher } from './mqtt-publisher.js';

/**
 * Starts publishing when the config has `mqtt:`; undefined otherwise.
 * @example const mqtt = await startMqtt(config, { prices: services.prices, events: stores.events })
 */
export async function startMqtt(
  config: Pick<Config, 'mqtt' | 'databaseUrl' | 'databasePath'>,
  deps: Omit<MqttPublisherDeps, 'lease'>,
): Promise<MqttPublisher | undefined> {
  if (config.mqtt === undefined) return undefined;
  const lease = await openLease(config.databaseUrl, config.databasePath);
  const publisher = startMqttPublisher(config.mqtt, { ...deps, lease });
  return {
    async close() {
      try {
        await publisher.close();
      } finally {
        await lease.close();
      }
    },
  };
}
