/**
 * The Redis side of a scaled-out deployment (docs/scale-out.md): shared rate-limit counters with a
 * fallback, and notices between instances. Two connections: one for commands (counters, publish,
 * ping), one the notice bus subscribes on.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { MemoryRateLimitStore } from '../memory/rate-limit-store.js';
import { type FallbackPolicy, FallbackRateLimitStore } from './fallback-rate-limit-store.js';
import { closeClient, RedisNoticeBus } from './notice-bus.js';
import { RedisRateLimitStore } from './rate-limit-store.js';

/** Reconnect in the background, quickly at first, then every 2 s, for as long as it takes. */
const reconnectDelay = (attempt: number): number => Math.min(attempt * 100, 2000);

/** The default of `PRICEPOINT_REDIS_TIMEOUT_MS`. */
export const DEFAULT_REDIS_TIMEOUT_MS = 200;

/**
 * Probes that may time out in a row on a connection that still says it is up before both
 * connections are made again (about 3 s at the default pace). A Redis that only paused (SIGSTOP)
 * would answer on the old connection once it goes on, but one behind a dead network path, or a NAT
 * or firewall that forgot the connection, never will: TCP keepalive takes minutes to tell. A new
 * connection costs nothing in the first case and is the only way out in the second.
 */
const SILENT_PROBES = 4;

/** PING on `commands`; after `SILENT_PROBES` silent ones in a row, both connections are made again. */
function probeRemakingSilent(commands: Redis, subscriber: Redis): () => Promise<void> {
  let silent = 0;
  return async () => {
    try {
      await commands.ping();
      silent = 0;
    } catch (error) {
      // Only a connection that claims to be up can be silently dead; one being made fails at once.
      if (commands.status === 'ready' && ++silent >= SILENT_PROBES) {
        silent = 0;
        commands.disconnect(true);
        subscriber.disconnect(true);
      }
      throw error;
    }
  };
}

/**
 * For the connection requests wait on: a command fails instead of waiting for Redis, so the
 * fallback answers at once. No offline queue (a command while disconnected fails immediately), no
 * re-sending after a reconnect (`maxRetriesPerRequest: 0`; the request has moved on), and a command
 * timeout for a Redis that accepts connections but does not answer. A command that times out may
 * still have run in Redis: a counted request that times out is counted there and, under the `local`
 * policy, locally too, so the timeout must be well above any stall the instance's own event loop
 * may have under load. No automatic pipelining: the rate-limit store already sends the requests of
 * one turn of the event loop in one script call (rate-limit-store.ts), and ioredis' pipelining
 * would wrap that one command in a pipeline of its own and hold it for another turn (bench/README.md
 * has the figures).
 */
export function redisCommandOptions(commandTimeoutMs = DEFAULT_REDIS_TIMEOUT_MS): RedisOptions {
  return {
    commandTimeout: commandTimeoutMs,
    enableAutoPipelining: false,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    connectTimeout: 2000,
    retryStrategy: reconnectDelay,
  };
}

/**
 * For the subscriber: it waits for Redis instead (SUBSCRIBE sits in the offline queue until the
 * connection is up), has no command timeout (that would fail a queued SUBSCRIBE), and subscribes
 * again after every reconnect.
 */
export function redisSubscriberOptions(): RedisOptions {
  return {
    maxRetriesPerRequest: null,
    enableOfflineQueue: true,
    autoResubscribe: true,
    connectTimeout: 2000,
    retryStrategy: reconnectDelay,
  };
}

export interface OpenRedisOptions {
  /** Put before every key and the channel name, so deployments can share a Redis (default `pp:`). */
  readonly prefix?: string;
  /** What rate limiting does while Redis is away. */
  readonly fallback: FallbackPolicy;
  /** Every decision made without Redis (count it; the error is the same for one outage). */
  readonly onFallback?: (decision: FallbackPolicy, error: unknown) => void;
  /**
   * Connection errors, every failed or timed-out rate-limit command and probe, and dropped notices:
   * for metrics and the log. Without it they are ignored.
   */
  readonly onError?: (error: Error) => void;
  /** How long a command may wait for Redis (`PRICEPOINT_REDIS_TIMEOUT_MS`, default 200 ms). */
  readonly commandTimeoutMs?: number;
  /** How often Redis is probed while it is away (default 500 ms). */
  readonly backoffMs?: number;
}

export interface RedisStores {
  readonly rateLimits: FallbackRateLimitStore;
  readonly notices: RedisNoticeBus;
  /**
   * Resolves once the command connection is up and notices are subscribed; never rejects. Until
   * then rate limiting answers by the fallback policy, so await this at start-up where that matters.
   */
  ready(): Promise<void>;
  /** Rejects when Redis does not answer within the command timeout (readiness). */
  ping(): Promise<void>;
  /** Closes both connections, so the process can exit. */
  close(): Promise<void>;
}

/** @example const redis = openRedis('redis://127.0.0.1:6379', { fallback: 'local' }) */
export function openRedis(url: string, options: OpenRedisOptions): RedisStores {
  const prefix = options.prefix ?? 'pp:';
  const onError = options.onError ?? (() => {});
  // Named after the prefix (a name holds no spaces), so `CLIENT LIST` and `MONITOR` tell a
  // deployment's connections apart.
  const name = prefix.replace(/\s/g, '_');
  const commands = new Redis(url, {
    ...redisCommandOptions(options.commandTimeoutMs),
    connectionName: `${name}commands`,
  });
  const subscriber = new Redis(url, { ...redisSubscriberOptions(), connectionName: `${name}notices` });
  // Without a listener ioredis prints every connection error; the fallback already reports them.
  commands.on('error', onError);
  subscriber.on('error', onError);

  const rateLimits = new FallbackRateLimitStore(
    new RedisRateLimitStore(commands, prefix),
    new MemoryRateLimitStore(),
    {
      policy: options.fallback,
      backoffMs: options.backoffMs,
      onFallback: options.onFallback,
      onError: (error) => onError(error instanceof Error ? error : new Error(String(error))),
      probe: probeRemakingSilent(commands, subscriber),
    },
  );
  const notices = new RedisNoticeBus(commands, subscriber, prefix, { onError });

  return {
    rateLimits,
    notices,
    async ready() {
      const connected =
        commands.status === 'ready' ? undefined : new Promise((resolve) => commands.once('ready', resolve));
      await Promise.all([connected, notices.ready()]);
    },
    async ping() {
      await commands.ping();
    },
    async close() {
      rateLimits.close();
      await Promise.all([notices.close(), closeClient(commands)]);
    },
  };
}
