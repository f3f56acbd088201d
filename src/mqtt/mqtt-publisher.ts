/**
 * Publishing prices to an MQTT broker (docs/mqtt.md): retained state per series and Home Assistant
 * discovery configs, sent at connect, when a day of a published series is published or revised (the
 * event log), and at each interval boundary of the series. One instance publishes: the one holding
 * the `mqtt` lease in the table the sources use, so a deployment of many instances sends each
 * message once; the others wait to take over when the holder's lease runs out.
 */
import { randomUUID } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import { ApiError } from '../domain/errors/api-error.js';
import type { Tier } from '../domain/limits/tiers.js';
import { EventHub } from '../events/event-hub.js';
import type { PriceService } from '../services/price-service.js';
import type { SourceLease } from '../sources/source-lease.js';
import type { EventLog } from '../stores/event-types.js';
import { discoveryMessages, stateTopic, statusTopic } from './discovery.js';
import type { MqttConfig, MqttSeries } from './mqtt-config.js';
import { nextBoundary, seriesMessages } from './series-state.js';

/** The lease's name: not a valid source name (`:`), so it never collides with one. */
export const MQTT_LEASE = 'mqtt:publisher';

/** What the publisher reads prices as: every kind, every day (its reference days included). */
const PUBLISHER_TIER: Tier = {
  name: 'mqtt',
  limits: [],
  countPer: 'key',
  kinds: null,
  historyDays: null,
  streams: 1,
};

/** A series the catalogue does not have yet (a source creates it on its first run) is looked for again this often. */
const UNKNOWN_SERIES_RETRY_MS = 15 * 60_000;

function lossSignal(): { promise: Promise<void>; settle: () => void } {
  let settle = () => {};
  const promise = new Promise<void>((resolve) => {
    settle = resolve;
  });
  return { promise, settle };
}

/** How long each step of closing may wait for the broker. */
const SHUTDOWN_STEP_MS = 2_000;

/** Whether `work` settled within `ms` (its failure counts as settled). */
async function withinMs(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Time as the publisher sees it; tests move it by hand, so no test waits for an interval to end. */
export interface MqttClock {
  now(): number;
  /** Calls `fire` at the instant `at` (epoch ms). */
  at(at: number, fire: () => void): { cancel(): void };
}

/** The process's clock and timers; a far instant is reached in steps of at most a day. */
export function systemClock(): MqttClock {
  return {
    now: Date.now,
    at(at, fire) {
      let timer: NodeJS.Timeout;
      const arm = () => {
        const wait = at - Date.now();
        timer = setTimeout(wait > 86_400_000 ? arm : fire, Math.max(0, Math.min(wait, 86_400_000)));
        timer.unref();
      };
      arm();
      return { cancel: () => clearTimeout(timer) };
    },
  };
}

export interface MqttLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface MqttPublisherDeps {
  readonly prices: Pick<PriceService, 'range' | 'forget'>;
  /** The price events (docs/events.md); absent on stores that keep none. */
  readonly events?: EventLog | undefined;
  readonly lease: SourceLease;
  readonly clock?: MqttClock;
  readonly log?: MqttLog;
  /** The reconnect backoff: from `baseMs`, doubled per failed attempt, at most `maxMs`. */
  readonly reconnect?: { readonly baseMs?: number; readonly maxMs?: number };
  /** How often the lease is renewed, or asked for while another instance holds it. */
  readonly leaseEveryMs?: number;
}

export interface MqttPublisher {
  /** Publishes "offline", gives up the lease and disconnects. */
  close(): Promise<void>;
}

/**
 * Starts publishing `config`'s series once this instance holds the lease.
 * @example const publisher = startMqttPublisher(config.mqtt, { prices: services.prices, lease: memoryLease() })
 */
export function startMqttPublisher(config: MqttConfig, deps: MqttPublisherDeps): MqttPublisher {
  const clock = deps.clock ?? systemClock();
  const log = deps.log;
  const baseMs = deps.reconnect?.baseMs ?? 1_000;
  const maxMs = deps.reconnect?.maxMs ?? 60_000;
  const leaseEveryMs = deps.leaseEveryMs ?? Math.max(1_000, Math.floor(deps.lease.ttlMs / 3));
  let client: MqttClient | undefined;
  let closing = false;
  let failures = 0;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let leaseTimer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  const boundaries = new Map<string, { cancel(): void }>();
  /** Per series, the publish under way: the next waits for it, so messages never overtake. */
  const queues = new Map<string, Promise<void>>();
  /** Discovery configs as last sent on this connection: unchanged ones are not sent again. */
  let sentDiscovery = new Map<string, string>();
  /** Per series, the last failure logged: a failure that repeats at every wake is logged once. */
  const lastErrors = new Map<string, string>();

  /** Settles when the current connection is lost: a message in flight then never hears back. */
  let connectionLost: { promise: Promise<void>; settle: () => void } = lossSignal();

  /** Sends while connected; settles when acknowledged or when the connection is lost. */
  function publish(topic: string, payload: string): Promise<unknown> {
    const c = client;
    if (c === undefined || !c.connected) return Promise.resolve();
    return Promise.race([c.publishAsync(topic, payload, { qos: 1, retain: true }), connectionLost.promise]);
  }

  /** Reads the series now and sends its state (and its discovery configs where they changed). */
  async function publishSeries(series: MqttSeries): Promise<void> {
    const now = clock.now();
    let scheduled = false;
    try {
      const answer = await deps.prices.range(
        PUBLISHER_TIER,
        {
          symbols: [series.symbol],
          rank: true,
          ...(series.tariff !== undefined && { tariff: series.tariff }),
        },
        { offset: 0 },
        { offset: 1 },
      );
      const today = answer.series[0];
      if (today === undefined) return;
      // Set before anything is sent: whoever sees this state can count on the next one coming.
      if (client !== undefined) schedule(series, nextBoundary(now, today.timezone, today.resolution));
      scheduled = true;
      if (config.discovery) {
        for (const { topic, config: body } of discoveryMessages(config, today)) {
          const payload = JSON.stringify(body);
          if (sentDiscovery.get(topic) === payload) continue;
          await publish(topic, payload);
          if (client?.connected) sentDiscovery.set(topic, payload);
        }
      }
      await Promise.all(
        seriesMessages(answer.series, now, config.cheapestHours).map(({ topic, payload }) =>
          publish(stateTopic(config, series.symbol, topic), payload),
        ),
      );
      lastErrors.delete(series.symbol);
    } catch (error) {
      // A series not in the catalogue yet, a tariff that does not apply to it, a refused message:
      // each said once, and tried again at the next boundary (or soon, where there is none yet).
      const message = error instanceof ApiError ? error.message : (error as Error).message;
      if (lastErrors.get(series.symbol) !== message) {
        log?.warn({ symbol: series.symbol, err: error }, `MQTT: ${series.symbol}: ${message}`);
      }
      lastErrors.set(series.symbol, message);
      if (client !== undefined && !scheduled) schedule(series, now + UNKNOWN_SERIES_RETRY_MS);
    }
  }

  function schedule(series: MqttSeries, at: number): void {
    boundaries.get(series.symbol)?.cancel();
    boundaries.set(
      series.symbol,
      clock.at(at, () => void refresh(series)),
    );
  }

  function refresh(series: MqttSeries): Promise<void> {
    const next = (queues.get(series.symbol) ?? Promise.resolve()).then(() => publishSeries(series));
    queues.set(series.symbol, next);
    return next;
  }

  async function publishAll(): Promise<void> {
    await publish(statusTopic(config), 'online');
    await Promise.all(config.series.map(refresh));
  }

  function connect(): void {
    const { username, password } = config.credentials();
    const c = mqtt.connect(config.url, {
      clientId: `pricepoint-${randomUUID().slice(0, 8)}`,
      clean: true,
      // Reconnects are the publisher's (`reconnectSoon`): MQTT.js's own retry keeps one fixed period.
      reconnectPeriod: 0,
      connectTimeout: 10_000,
      ...(username !== undefined && { username }),
      ...(password !== undefined && { password }),
      will: { topic: statusTopic(config), payload: Buffer.from('offline'), qos: 1, retain: true },
    });
    client = c;
    c.on('connect', () => {
      connectionLost = lossSignal();
      failures = 0;
      sentDiscovery = new Map();
      log?.info({ broker: redacted(config.url) }, 'MQTT: connected; publishing');
      publishAll().catch((error: unknown) => log?.warn({ err: error }, 'MQTT: publishing failed'));
    });
    c.on('error', (error) => {
      if (failures <= 1) log?.warn({ err: error, broker: redacted(config.url) }, `MQTT: ${error.message}`);
    });
    c.on('close', () => {
      connectionLost.settle();
      reconnectSoon(c);
    });
    if (deps.events !== undefined && unsubscribe === undefined) {
      const hub = new EventHub(deps.events, (error) =>
        log?.warn({ err: error }, 'MQTT: reading price events failed'),
      );
      const wanted = new Map(config.series.map((s) => [s.symbol, s]));
      hub
        .subscribe((events) => {
          const touched = new Set(events.map((e) => e.data.symbol).filter((s) => wanted.has(s)));
          if (touched.size === 0) return;
          // Another instance may have written them: read past the read cache.
          deps.prices.forget([...touched]);
          for (const symbol of touched) void refresh(wanted.get(symbol) as MqttSeries);
        })
        .then(
          (stop) => {
            if (closing || client === undefined) stop();
            else unsubscribe = stop;
          },
          (error: unknown) => log?.warn({ err: error }, 'MQTT: reading price events failed'),
        );
    }
  }

  /** After a lost connection: the library's reconnect, after a doubling pause with jitter, bounded. */
  function reconnectSoon(c: MqttClient): void {
    if (closing || client !== c || reconnectTimer !== undefined) return;
    failures++;
    const ceiling = Math.min(maxMs, baseMs * 2 ** (failures - 1));
    const wait = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      if (!closing && client === c) c.reconnect();
    }, wait);
    reconnectTimer.unref();
  }

  /** Stops publishing on this instance (the lease is lost, or the server closes). */
  async function disconnect(sayOffline: boolean): Promise<void> {
    const c = client;
    client = undefined;
    clearTimeout(reconnectTimer);
    reconnectTimer = undefined;
    for (const timer of boundaries.values()) timer.cancel();
    boundaries.clear();
    unsubscribe?.();
    unsubscribe = undefined;
    if (c === undefined) return;
    // Bounded: with the broker away a message waits for its acknowledgement for ever, and a
    // shutdown must not. A clean DISCONNECT keeps the will unsent (another instance may be online).
    await withinMs(Promise.allSettled(queues.values()), SHUTDOWN_STEP_MS);
    if (sayOffline && c.connected) {
      await withinMs(
        c.publishAsync(statusTopic(config), 'offline', { qos: 1, retain: true }),
        SHUTDOWN_STEP_MS,
      );
    }
    const ended = await withinMs(c.endAsync(!c.connected), SHUTDOWN_STEP_MS);
    if (!ended) await c.endAsync(true).catch(() => {});
  }

  async function holdLease(): Promise<void> {
    let held = false;
    try {
      held = await deps.lease.claim(MQTT_LEASE, undefined);
    } catch (error) {
      log?.warn({ err: error }, 'MQTT: the lease could not be claimed; trying again');
    }
    if (closing) return;
    if (held && client === undefined) connect();
    // Another instance holds it now: it publishes, and a second "offline" would contradict it.
    if (!held && client !== undefined) await disconnect(false);
    if (closing) return;
    leaseTimer = setTimeout(() => void holdLease(), leaseEveryMs);
    leaseTimer.unref();
  }

  void holdLease();

  return {
    async close() {
      closing = true;
      clearTimeout(leaseTimer);
      const held = client !== undefined;
      await disconnect(true);
      if (held) await deps.lease.release(MQTT_LEASE).catch(() => {});
    },
  };
}

/** The broker's URL as logged: its scheme, host and port (it never holds credentials; see mqtt-config.ts). */
function redacted(url: string): string {
  const { protocol, host } = new URL(url);
  return `${protocol}//${host}`;
}
