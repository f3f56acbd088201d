/**
 * Prices published to a real Mosquitto broker (docs/mqtt.md), read back by a subscriber as Home
 * Assistant would: every retained topic and discovery config, the values equal to the API's answer,
 * the republish at an interval boundary (time moved by hand, DST day included), the publish when a
 * day is uploaded through the API, reconnecting after the broker restarts, and one publisher among
 * instances sharing a lease.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { dayIntervals, formatInstant, localDate } from '../../src/domain/time/days.js';
import { type MqttConfig, parseMqtt } from '../../src/mqtt/mqtt-config.js';
import { type MqttClock, type MqttPublisher, startMqttPublisher } from '../../src/mqtt/mqtt-publisher.js';
import { createPriceService } from '../../src/services/price-service.js';
import { memoryLease } from '../../src/sources/source-lease.js';
import { sqliteLease } from '../../src/sources/sqlite-lease.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { describeOrSkip } from '../helpers/skip.js';
import { type Broker, mosquittoSkipReason, type Subscriber, startBroker, subscribe } from './broker.js';

/** The publisher's timers on the harness's fake clock: `moveTo` sets the time and fires what is due. */
class ManualClock implements MqttClock {
  private readonly timers = new Set<{ at: number; fire: () => void }>();
  constructor(private readonly harness: Harness) {}
  now = () => this.harness.clock.now;
  at(at: number, fire: () => void) {
    const timer = { at, fire };
    this.timers.add(timer);
    return { cancel: () => void this.timers.delete(timer) };
  }
  /** The earliest instant a timer waits for. */
  next(): number | undefined {
    return Math.min(...[...this.timers].map((t) => t.at));
  }
  moveTo(instant: number): void {
    this.harness.clock.now = instant;
    for (const timer of [...this.timers]) {
      if (timer.at > instant) continue;
      this.timers.delete(timer);
      timer.fire();
    }
  }
}

interface ApiPoint {
  start: string;
  end: string;
  price: number;
  fees?: number;
  vat?: number;
  total?: number;
  rank: number;
  level: string | null;
}

/** The API's answer for today of one series, with the tariff and ranks. */
async function apiToday(harness: Harness, symbol: string, tariff?: string): Promise<ApiPoint[]> {
  const query = `symbols=${symbol}&include=rank${tariff === undefined ? '' : `&tariff=${tariff}`}`;
  const response = await harness.app.inject({
    url: `/api/v1/prices/today?${query}`,
    headers: { 'x-api-key': harness.demoKey },
  });
  assert.equal(response.statusCode, 200, response.body);
  return response.json().series[0].prices as ApiPoint[];
}

function currentOf(points: readonly ApiPoint[], now: number): ApiPoint {
  const found = points.find((p) => Date.parse(p.start) <= now && now < Date.parse(p.end));
  assert.ok(found, 'the API has an interval that holds now');
  return found;
}

interface Setup {
  readonly harness: Harness;
  readonly clock: ManualClock;
  readonly config: MqttConfig;
  readonly publisher: MqttPublisher;
  readonly subscriber: Subscriber;
  readonly prefix: string;
  readonly discovery: string;
  close(): Promise<void>;
}

/** A harness on the development data set, a publisher of NO1 (with the household tariff) and DE-LU. */
async function setUp(
  broker: Broker,
  now: string,
  series: readonly unknown[] = [{ symbol: 'NO1', tariff: 'no1-household' }, 'de-lu'],
): Promise<Setup> {
  const harness = await createHarness({ now });
  const clock = new ManualClock(harness);
  const prefix = `pp-test-${randomUUID().slice(0, 8)}`;
  const discovery = `ha-test-${randomUUID().slice(0, 8)}`;
  const config = parseMqtt(
    {
      url: broker.url,
      topicPrefix: prefix,
      discoveryPrefix: discovery,
      series,
      cheapestHours: [1, 3],
    },
    {},
  ) as MqttConfig;
  const subscriber = await subscribe(broker.url, [prefix, discovery]);
  const prices = createPriceService({
    prices: harness.stores.prices,
    clock: harness.clock.read,
    fx: harness.config.fx,
    tariffs: harness.config.tariffs,
  });
  const publisher = startMqttPublisher(config, {
    prices,
    events: harness.stores.events,
    lease: memoryLease(),
    clock,
    reconnect: { baseMs: 20, maxMs: 200 },
  });
  return {
    harness,
    clock,
    config,
    publisher,
    subscriber,
    prefix,
    discovery,
    async close() {
      await publisher.close();
      await subscriber.close();
      await harness.close();
    },
  };
}

const parsed = (payload: string) => JSON.parse(payload) as Record<string, unknown>;

describeOrSkip('MQTT publishing to a real Mosquitto broker', { skip: mosquittoSkipReason() }, () => {
  let broker: Broker;
  before(async () => {
    broker = await startBroker();
  });
  after(async () => {
    await broker?.stop();
  });

  test('every retained topic holds what the API answers for the current interval', async () => {
    const s = await setUp(broker, '2026-11-22T10:15:03.120Z');
    try {
      const { subscriber: sub, prefix } = s;
      const doc = parsed(await sub.until(`${prefix}/NO1/prices`));
      await sub.until(`${prefix}/DE-LU/prices`);
      assert.equal(await sub.until(`${prefix}/status`), 'online');
      const api = await apiToday(s.harness, 'NO1', 'no1-household');
      const current = currentOf(api, s.harness.clock.now);
      // Under the tariff: NOK per kWh, with its parts; all exactly as the API answers.
      assert.equal(Number(sub.last.get(`${prefix}/NO1/price`)), current.price);
      assert.equal(Number(sub.last.get(`${prefix}/NO1/fees`)), current.fees);
      assert.equal(Number(sub.last.get(`${prefix}/NO1/vat`)), current.vat);
      assert.equal(Number(sub.last.get(`${prefix}/NO1/total`)), current.total);
      assert.equal(sub.last.get(`${prefix}/NO1/rank`), String(current.rank));
      assert.equal(sub.last.get(`${prefix}/NO1/level`), current.level);
      // Quarter hours: the cheapest hour is 4 intervals, the cheapest 3 hours 12.
      assert.equal(sub.last.get(`${prefix}/NO1/cheapest/1`), current.rank <= 4 ? 'ON' : 'OFF');
      assert.equal(sub.last.get(`${prefix}/NO1/cheapest/3`), current.rank <= 12 ? 'ON' : 'OFF');
      // Today and tomorrow as one document, today's intervals as the API has them.
      assert.equal(doc['currency'], 'NOK');
      assert.equal(doc['unit'], 'kWh');
      assert.equal(doc['tariff'], 'no1-household');
      const today = doc['today'] as { date: string; prices: ApiPoint[] };
      assert.equal(today.date, localDate(s.harness.clock.now, 'Europe/Oslo'));
      assert.deepEqual(today.prices, api);
      assert.deepEqual(doc['current'], current);
      const tomorrow = doc['tomorrow'] as { prices: ApiPoint[] };
      assert.equal(tomorrow.prices.length, 96, 'the development data set has tomorrow for NO1');
      // Without a tariff: the price in the series' own currency and unit, and no parts.
      const deLu = currentOf(await apiToday(s.harness, 'DE-LU'), s.harness.clock.now);
      assert.equal(Number(sub.last.get(`${prefix}/DE-LU/price`)), deLu.price);
      assert.equal(sub.last.has(`${prefix}/DE-LU/total`), false);
    } finally {
      await s.close();
    }
  });

  test('the discovery configs give Home Assistant one device per series with sensors it accepts', async () => {
    const s = await setUp(broker, '2026-11-22T10:15:03.120Z');
    try {
      const { subscriber: sub, prefix, discovery } = s;
      await sub.until(`${prefix}/DE-LU/prices`);
      await sub.until(`${prefix}/NO1/prices`);
      const node = (symbol: string) => `${prefix}_${symbol.toLowerCase()}`;
      const config = (component: string, symbol: string, object: string) =>
        sub.until(`${discovery}/${component}/${node(symbol)}/${object}/config`).then(parsed);
      const no1 = {
        price: await config('sensor', 'NO1', 'price'),
        fees: await config('sensor', 'NO1', 'fees'),
        vat: await config('sensor', 'NO1', 'vat'),
        total: await config('sensor', 'NO1', 'total'),
        rank: await config('sensor', 'NO1', 'rank'),
        level: await config('sensor', 'NO1', 'level'),
        cheapest1: await config('binary_sensor', 'NO1', 'cheapest_1h'),
        cheapest3: await config('binary_sensor', 'NO1', 'cheapest_3h'),
      };
      const deLuPrice = await config('sensor', 'DE-LU', 'price');
      const all = [...Object.values(no1), deLuPrice];
      // Each entity: a unique id, a state topic that is published, availability on the will's topic.
      assert.equal(new Set(all.map((c) => c['unique_id'])).size, all.length);
      for (const c of all) {
        assert.ok(sub.last.has(c['state_topic'] as string), `${c['state_topic']} is published`);
        assert.equal(c['availability_topic'], `${prefix}/status`);
        assert.equal(c['payload_available'], 'online');
        assert.equal(c['payload_not_available'], 'offline');
        assert.equal(c['value_template'], undefined, 'payloads are plain values');
      }
      // One device per series.
      const device = (c: Record<string, unknown>) =>
        (c['device'] as { identifiers: string[] }).identifiers[0];
      assert.equal(new Set(Object.values(no1).map(device)).size, 1);
      assert.notEqual(device(no1.price), device(deLuPrice));
      // Prices: monetary, whose only state class Home Assistant accepts is total, in currency per unit.
      for (const c of [no1.price, no1.fees, no1.vat, no1.total]) {
        assert.equal(c['unit_of_measurement'], 'NOK/kWh');
        assert.equal(c['device_class'], 'monetary');
        assert.equal(c['state_class'], 'total');
      }
      assert.equal(deLuPrice['unit_of_measurement'], 'EUR/MWh');
      assert.equal(no1.price['json_attributes_topic'], `${prefix}/NO1/prices`);
      assert.equal(no1.level['device_class'], 'enum');
      assert.deepEqual(no1.level['options'], [
        'very_cheap',
        'cheap',
        'normal',
        'expensive',
        'very_expensive',
      ]);
      assert.ok((no1.level['options'] as string[]).includes(sub.last.get(`${prefix}/NO1/level`) as string));
      assert.equal(no1.level['unit_of_measurement'], undefined, 'an enum sensor has no unit');
      assert.equal(no1.rank['state_class'], 'measurement');
      for (const flag of [no1.cheapest1, no1.cheapest3]) {
        assert.deepEqual([flag['payload_on'], flag['payload_off']], ['ON', 'OFF']);
        assert.ok(['ON', 'OFF'].includes(sub.last.get(flag['state_topic'] as string) as string));
      }
      assert.equal(sub.last.has(`${discovery}/sensor/${node('DE-LU')}/total/config`), false);
    } finally {
      await s.close();
    }
  });

  test('at the next interval boundary the current interval moves on', async () => {
    const s = await setUp(broker, '2026-11-22T10:15:03.120Z');
    try {
      const { subscriber: sub, prefix, clock } = s;
      await sub.until(`${prefix}/NO1/prices`);
      assert.equal(clock.next(), Date.parse('2026-11-22T10:30:00Z'), 'the end of the 11:15 quarter hour');
      clock.moveTo(Date.parse('2026-11-22T10:30:00Z'));
      const next = currentOf(await apiToday(s.harness, 'NO1', 'no1-household'), s.harness.clock.now);
      assert.equal(next.start, '2026-11-22T11:30:00+01:00');
      const doc = parsed(
        await sub.until(
          `${prefix}/NO1/prices`,
          (p) => (parsed(p)['current'] as ApiPoint).start === next.start,
        ),
      );
      assert.deepEqual(doc['current'], next);
      assert.equal(Number(sub.last.get(`${prefix}/NO1/total`)), next.total);
      assert.equal(sub.last.get(`${prefix}/NO1/rank`), String(next.rank));
    } finally {
      await s.close();
    }
  });

  test('on the night the clocks go back, the boundaries are the real intervals of the day', async () => {
    // 02:50 summer time in Oslo; the next quarter hour starts at 02:00 winter time, an hour "earlier".
    const s = await setUp(broker, '2026-10-25T00:50:00Z');
    try {
      const { subscriber: sub, prefix, clock } = s;
      await sub.until(`${prefix}/NO1/prices`);
      assert.equal(clock.next(), Date.parse('2026-10-25T01:00:00Z'));
      clock.moveTo(Date.parse('2026-10-25T01:00:00Z'));
      const doc = parsed(
        await sub.until(
          `${prefix}/NO1/prices`,
          (p) => (parsed(p)['current'] as ApiPoint | null)?.start === '2026-10-25T02:00:00+01:00',
        ),
      );
      assert.equal((doc['today'] as { prices: unknown[] }).prices.length, 100);
    } finally {
      await s.close();
    }
  });

  test('a day uploaded through the API is published at once', async () => {
    const s = await setUp(broker, '2026-11-22T10:15:03.120Z');
    try {
      const { subscriber: sub, prefix, harness } = s;
      await sub.until(`${prefix}/DE-LU/prices`);
      const { key } = await harness.createKey({ tier: 'pro', scopes: ['read', 'write'] });
      const date = localDate(harness.clock.now, 'Europe/Berlin');
      const points = dayIntervals(date, 'Europe/Berlin', 'PT15M').map(({ start }) => ({
        start: formatInstant(start, 'Europe/Berlin'),
        price: 55.5,
      }));
      const response = await harness.app.inject({
        method: 'PUT',
        url: '/api/v1/series/DE-LU/prices',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        payload: JSON.stringify(points),
      });
      assert.equal(response.statusCode, 200, response.body);
      // No time moved: the revised day's event alone brings it.
      assert.equal(await sub.until(`${prefix}/DE-LU/price`, (p) => p === '55.5'), '55.5');
      const doc = parsed(
        await sub.until(`${prefix}/DE-LU/prices`, (p) => (parsed(p)['current'] as ApiPoint).price === 55.5),
      );
      const today = doc['today'] as { prices: ApiPoint[] };
      assert.equal(today.prices.length, 96);
      assert.ok(today.prices.every((p) => p.price === 55.5 && p.rank === 1));
    } finally {
      await s.close();
    }
  });

  test('a day published for the first time through the API fills tomorrow', async () => {
    // EURNOK has no tomorrow until its rate is published: the upload makes the day complete.
    const s = await setUp(broker, '2026-11-22T10:15:03.120Z', ['EURNOK']);
    try {
      const { subscriber: sub, prefix, harness } = s;
      const before = parsed(await sub.until(`${prefix}/EURNOK/prices`));
      assert.deepEqual((before['tomorrow'] as { prices: unknown[] }).prices, []);
      const { key } = await harness.createKey({ tier: 'pro', scopes: ['read', 'write'] });
      const response = await harness.app.inject({
        method: 'PUT',
        url: '/api/v1/series/EURNOK/prices',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        payload: JSON.stringify([{ start: '2026-11-23T00:00:00+01:00', price: 11.5847 }]),
      });
      assert.equal(response.statusCode, 200, response.body);
      const doc = parsed(
        await sub.until(
          `${prefix}/EURNOK/prices`,
          (p) => (parsed(p)['tomorrow'] as { prices: unknown[] }).prices.length > 0,
        ),
      );
      assert.deepEqual(doc['tomorrow'], {
        date: '2026-11-23',
        complete: true,
        prices: [
          {
            start: '2026-11-23T00:00:00+01:00',
            end: '2026-11-24T00:00:00+01:00',
            price: 11.5847,
            rank: 1,
            // Against the mean of the 7 days before, which the development data keeps near this rate.
            level: 'normal',
          },
        ],
      });
    } finally {
      await s.close();
    }
  });

  test('after the broker restarts, the publisher reconnects and publishes everything again', async () => {
    const own = await startBroker();
    const s = await setUp(own, '2026-11-22T10:15:03.120Z');
    let restarted: Broker | undefined;
    try {
      await s.subscriber.until(`${s.prefix}/NO1/prices`);
      await own.stop();
      // A new broker on the same port, without the retained messages of the old one.
      restarted = await startBroker(own.port);
      const again = await subscribe(restarted.url, [s.prefix, s.discovery]);
      try {
        assert.equal(await again.until(`${s.prefix}/status`), 'online');
        await again.until(`${s.prefix}/NO1/total`);
        await again.until(`${s.discovery}/sensor/${s.prefix}_no1/price/config`);
      } finally {
        await again.close();
      }
    } finally {
      await s.publisher.close();
      await s.harness.close();
      await restarted?.stop();
    }
  });

  test('of two instances sharing the lease one publishes, and the other takes over when it stops', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pricepoint-mqtt-lease-'));
    const harness = await createHarness({ now: '2026-11-22T10:15:03.120Z' });
    const prefix = `pp-test-${randomUUID().slice(0, 8)}`;
    const config = parseMqtt(
      { url: broker.url, topicPrefix: prefix, series: ['DE-LU'], discovery: false },
      {},
    );
    assert.ok(config);
    const sub = await subscribe(broker.url, [prefix]);
    const prices = createPriceService({ prices: harness.stores.prices, clock: harness.clock.read });
    const connected = { a: 0, b: 0 };
    // Two instances: each its own connection to the one lease table, as two processes would have.
    const leases = {
      a: sqliteLease(join(dir, 'leases.db'), { ttlMs: 60_000 }),
      b: sqliteLease(join(dir, 'leases.db'), { ttlMs: 60_000 }),
    };
    const start = (name: 'a' | 'b') =>
      startMqttPublisher(config, {
        prices,
        lease: leases[name],
        clock: new ManualClock(harness),
        leaseEveryMs: 20,
        log: {
          info: (_fields, message) => {
            if (/connected/.test(message)) connected[name]++;
          },
          warn: () => {},
        },
      });
    const a = start('a');
    let b: MqttPublisher | undefined;
    try {
      await sub.until(`${prefix}/DE-LU/price`);
      b = start('b');
      assert.equal(connected.b, 0, 'b does not connect while a holds the lease');
      await a.close();
      await sub.until(`${prefix}/status`, (p) => p === 'online' && sub.all(`${prefix}/status`).length >= 3);
      assert.deepEqual(sub.all(`${prefix}/status`), ['online', 'offline', 'online']);
      assert.equal(connected.a, 1);
      assert.equal(connected.b, 1);
    } finally {
      await a.close();
      await b?.close();
      await leases.a.close();
      await leases.b.close();
      await sub.close();
      await harness.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
