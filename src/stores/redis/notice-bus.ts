/**
 * Notices between instances over Redis pub/sub (docs/scale-out.md), on the channel `${prefix}notices`.
 *
 * A connection that subscribes can do nothing else in RESP2, so the bus gets a subscriber connection
 * of its own beside the shared command connection it publishes on. ioredis subscribes again by
 * itself after a reconnect (`autoResubscribe`); notices sent while this instance was away are lost,
 * which `NoticeBus` allows (caches are bounded by their own lifetimes).
 *
 * The publishing instance hears its own notice at once, in process, and skips the echo that comes
 * back through Redis (each message names its origin): so its own caches follow its own changes even
 * while Redis is away. Messages are checked on receipt; anything malformed is dropped.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Notice, NoticeBus } from '../types.js';

export interface RedisNoticeBusOptions {
  /** Told about dropped messages and listener failures; never about the notices themselves. */
  readonly onError?: (error: Error) => void;
}

export class RedisNoticeBus implements NoticeBus {
  readonly channel: string;
  private readonly origin = randomUUID();
  private readonly listeners: ((notice: Notice) => void)[] = [];
  private readonly subscribed: Promise<void>;

  /**
   * @example new RedisNoticeBus(commands, new Redis(url, redisSubscriberOptions), 'pp:')
   * `publisher` should fail fast while Redis is away (no offline queue, a command timeout);
   * `subscriber` is taken over by the bus and should wait for Redis instead (offline queue on).
   */
  constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
    prefix: string,
    private readonly options: RedisNoticeBusOptions = {},
  ) {
    this.channel = `${prefix}notices`;
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.channel) this.receive(message);
    });
    // Waits in the subscriber's offline queue while Redis is away; resolves once subscribed.
    this.subscribed = this.subscriber.subscribe(this.channel).then(
      () => undefined,
      (error: unknown) => this.report(error),
    );
  }

  /** Resolves once the first subscription is in place: from then on, other instances are heard. */
  ready(): Promise<void> {
    return this.subscribed;
  }

  /** Tells this instance at once, then every other one through Redis; rejects fast if Redis is away. */
  async publish(notice: Notice): Promise<void> {
    this.deliver(notice);
    await this.publisher.publish(this.channel, JSON.stringify({ origin: this.origin, notice }));
  }

  subscribe(listener: (notice: Notice) => void): void {
    this.listeners.push(listener);
  }

  /** Stops listening and closes the subscriber connection (the publisher belongs to the caller). */
  async close(): Promise<void> {
    this.listeners.length = 0;
    await closeClient(this.subscriber);
  }

  private receive(message: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      this.report(new Error('dropped a notice that is not JSON'));
      return;
    }
    const envelope = parseEnvelope(parsed);
    if (envelope === undefined) this.report(new Error('dropped a malformed notice'));
    else if (envelope.origin !== this.origin) this.deliver(envelope.notice);
  }

  private deliver(notice: Notice): void {
    for (const listener of this.listeners) {
      try {
        listener(notice);
      } catch (error) {
        this.report(error);
      }
    }
  }

  private report(error: unknown): void {
    this.options.onError?.(error instanceof Error ? error : new Error(String(error)));
  }
}

/**
 * QUIT when connected (pending replies arrive first), else drop the socket and stop reconnecting:
 * QUIT on a connection that is away would wait in the offline queue, or fail, and keep the process up.
 */
export async function closeClient(client: Redis, graceMs = 500): Promise<void> {
  if (client.status === 'end') return;
  if (client.status === 'ready') {
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    // A hung Redis never answers QUIT: after the grace period the socket is dropped below.
    await Promise.race([client.quit().catch(() => undefined), grace]);
    clearTimeout(timer);
  }
  // Read again: QUIT above may have ended the connection meanwhile.
  if ((client.status as string) !== 'end') client.disconnect();
}

const isStringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

/** `{ origin, notice }` with a notice of a known kind, copied so nothing else rides along. */
export function parseEnvelope(value: unknown): { origin: string; notice: Notice } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { origin, notice } = value as Record<string, unknown>;
  if (typeof origin !== 'string' || typeof notice !== 'object' || notice === null) return undefined;
  const fields = notice as Record<string, unknown>;
  if (fields['kind'] === 'keys' && isStringList(fields['keyIds'])) {
    return { origin, notice: { kind: 'keys', keyIds: fields['keyIds'] } };
  }
  if (fields['kind'] === 'prices' && isStringList(fields['symbols'])) {
    return { origin, notice: { kind: 'prices', symbols: fields['symbols'] } };
  }
  return undefined;
}
