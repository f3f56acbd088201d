/**
 * Home Assistant MQTT discovery (docs/mqtt.md "What Home Assistant shows"): one device per series,
 * a sensor per published value and a binary sensor per cheapest-hours flag, each config retained
 * under `{discoveryPrefix}/{component}/{node}/{object}/config`. What Home Assistant checks: prices
 * are `device_class: monetary`, which accepts only `state_class: total` (a measurement is refused
 * with a warning in its log), any unit, and "None" for no value; the level is an `enum` sensor with
 * its options; a sensor with `options` may have no unit or state class.
 */
import { LEVELS } from '../services/ranking.js';
import type { MqttConfig } from './mqtt-config.js';
import { TARIFF_PARTS } from './series-state.js';

/** What discovery needs to know of a series: its catalogue entry and what its prices are in. */
export interface DiscoveredSeries {
  readonly symbol: string;
  readonly name: string;
  readonly kind: string;
  readonly resolution: string;
  /** Of the published prices: the tariff's where one applies, else the series' own. */
  readonly currency: string;
  readonly unit: string;
  readonly tariff?: string | undefined;
}

/** A discovery config and the topic it is retained on. */
export interface DiscoveryMessage {
  readonly topic: string;
  readonly config: Readonly<Record<string, unknown>>;
}

/** Topic levels and ids allow only these; a symbol's `.` becomes `_`. */
function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9_-]/g, '_');
}

/** The topic Pricepoint says it is online or offline on (its last will). */
export function statusTopic(config: Pick<MqttConfig, 'topicPrefix'>): string {
  return `${config.topicPrefix}/status`;
}

/** The topic of one value of one series. */
export function stateTopic(config: Pick<MqttConfig, 'topicPrefix'>, symbol: string, name: string): string {
  return `${config.topicPrefix}/${symbol}/${name}`;
}

/**
 * The discovery configs of one series. The node id carries the topic prefix, so two deployments on
 * one broker never share an entity.
 * @example discoveryMessages(config, { symbol: 'NO1', name: 'Oslo', kind: 'electricity', resolution: 'PT15M', currency: 'EUR', unit: 'MWh' })
 */
export function discoveryMessages(config: MqttConfig, series: DiscoveredSeries): DiscoveryMessage[] {
  const node = `${slug(config.topicPrefix)}_${slug(series.symbol)}`;
  const common = {
    availability_topic: statusTopic(config),
    payload_available: 'online',
    payload_not_available: 'offline',
    device: {
      identifiers: [node],
      name: `${series.name} (${series.symbol})`,
      manufacturer: 'Pricepoint',
      model: `${series.kind} prices, ${series.resolution}`,
    },
    origin: { name: 'Pricepoint' },
  };
  const sensor = (object: string, fields: Record<string, unknown>): DiscoveryMessage => ({
    topic: `${config.discoveryPrefix}/sensor/${node}/${object}/config`,
    config: { ...fields, unique_id: `${node}_${object}`, ...common },
  });
  const money = {
    unit_of_measurement: `${series.currency}/${series.unit}`,
    device_class: 'monetary',
    state_class: 'total',
  };
  const messages = [
    sensor('price', {
      name: series.tariff === undefined ? 'Price' : 'Energy price',
      state_topic: stateTopic(config, series.symbol, 'price'),
      ...money,
      // Today's and tomorrow's prices as the sensor's attributes, for charts and templates.
      json_attributes_topic: stateTopic(config, series.symbol, 'prices'),
    }),
  ];
  if (series.tariff !== undefined) {
    const names = { fees: 'Fees', vat: 'VAT', total: 'Total price' } as const;
    for (const part of TARIFF_PARTS) {
      messages.push(
        sensor(part, { name: names[part], state_topic: stateTopic(config, series.symbol, part), ...money }),
      );
    }
  }
  messages.push(
    sensor('rank', {
      name: 'Rank today',
      state_topic: stateTopic(config, series.symbol, 'rank'),
      state_class: 'measurement',
      icon: 'mdi:podium',
    }),
    sensor('level', {
      name: 'Price level',
      state_topic: stateTopic(config, series.symbol, 'level'),
      device_class: 'enum',
      options: [...LEVELS],
    }),
  );
  for (const hours of config.cheapestHours) {
    const object = `cheapest_${hours}h`;
    messages.push({
      topic: `${config.discoveryPrefix}/binary_sensor/${node}/${object}/config`,
      config: {
        name: `In the cheapest ${hours} h today`,
        state_topic: stateTopic(config, series.symbol, `cheapest/${hours}`),
        payload_on: 'ON',
        payload_off: 'OFF',
        unique_id: `${node}_${object}`,
        icon: 'mdi:cash-clock',
        ...common,
      },
    });
  }
  return messages;
}
