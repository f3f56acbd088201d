/**
 * The delivery worker (docs/webhooks.md): woken by the event log, it turns new events into
 * deliveries per endpoint (its cursor in the log), then sends what is due, signed per the Standard
 * Webhooks specification. It runs beside the server, so an import never waits for a receiver.
 * Failed sends are retried with exponential backoff and jitter for about 24 hours; the endpoint is
 * disabled when a delivery has failed `MAX_ATTEMPTS` times.
 *
 * Idle when there is nothing to do: it wakes for new events (which is also how it notices an
 * endpoint registered on another instance: only events after it concern it), for deliveries made
 * due through this process's store (an endpoint enabled, a redelivery), and at the time the next
 * pending delivery falls due, which it asks the store after its sends have ended. No timer runs
 * while no delivery waits.
 */
import { Webhook } from 'standardwebhooks';
import type { EventLog, PriceEvent } from '../events/types.js';
import { openSecret } from './secrets.js';
import { type SendOptions, type SendOutcome, send } from './send.js';
import type { DeliveryRow, EndpointRow, WebhookStore } from './store.js';

/**
 * Seconds before each retry: growing about fourfold, capped at 6 hours. With the first attempt, 11
 * attempts over about 20 hours (16 to 24 with the jitter).
 */
export const RETRY_DELAYS_S = [5, 30, 120, 600, 1800, 3600, 7200, 14_400, 21_600, 21_600] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_S.length + 1;
/** setTimeout's longest delay (about 24.8 days); a later due time is looked at again then. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;
/** After a pass or a look-up failed (the database away a moment), the worker tries again this soon. */
const AFTER_ERROR_MS = 5_000;
const BATCH = 200;
/** Sends under way at once, over every endpoint; a slow receiver holds one of them, not the worker. */
const MAX_IN_FLIGHT = 100;

export interface WorkerDeps {
  readonly store: WebhookStore;
  readonly events: EventLog;
  readonly keySecret: string | undefined;
  readonly send: SendOptions;
  readonly clock?: () => number;
  readonly random?: () => number;
  readonly onError?: (error: unknown) => void;
  /**
   * Calls `wake` after `ms`; returns what cancels it. Default: an unref'd setTimeout. Tests pass
   * their own, to see when the worker asks to be woken and to wake it then.
   */
  readonly wakeAfter?: (ms: number, wake: () => void) => () => void;
}

function timerWake(ms: number, wake: () => void): () => void {
  const timer = setTimeout(wake, ms);
  timer.unref();
  return () => clearTimeout(timer);
}

/** The retry delay after `attempts` failed attempts, ±20% so that many endpoints do not retry in step. */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const base = RETRY_DELAYS_S[Math.min(attempts, RETRY_DELAYS_S.length) - 1] ?? RETRY_DELAYS_S[0];
  return Math.round(base * 1000 * (0.8 + 0.4 * random()));
}

/** The body a receiver gets: the event as DESIGN's contract and docs/events.md show it. */
export function payloadOf(event: Pick<PriceEvent, 'id' | 'type' | 'time' | 'data'>): string {
  return JSON.stringify({ id: event.id, type: event.type, time: event.time, data: event.data });
}

/** Signs and sends one body; the headers are the Standard Webhooks ones. */
export async function sendSigned(
  url: string,
  secret: string,
  id: string,
  body: string,
  at: Date,
  options: SendOptions,
): Promise<SendOutcome> {
  const signature = new Webhook(secret).sign(id, at, body);
  const headers = {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
    'user-agent': 'pricepoint-webhooks',
  };
  return send(url, headers, body, options);
}

export function wants(endpoint: EndpointRow, event: PriceEvent): boolean {
  const types = JSON.parse(endpoint.events) as string[];
  const symbols = endpoint.symbols === null ? null : (JSON.parse(endpoint.symbols) as string[]);
  return types.includes(event.type) && (symbols === null || symbols.includes(event.data.symbol));
}

export class DeliveryWorker {
  private readonly clock: () => number;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** The wake-up at the next due time: when, and what cancels it. */
  private timer: { at: number; cancel: () => void } | undefined;
  private readonly unsubscribe: (() => void)[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  /** The last pass found more due deliveries than it had room to send: take more as sends end. */
  private more = false;
  private planning: Promise<void> | undefined;
  private replan = false;
  /** When the last pass or look-up failed; undefined once a pass succeeds. */
  private failedAt: number | undefined;

  constructor(private readonly deps: WorkerDeps) {
    this.clock = deps.clock ?? Date.now;
  }

  start(): void {
    this.unsubscribe.push(
      this.deps.events.onAppended(() => void this.wake()),
      this.deps.store.onDue(() => void this.wake()),
    );
    void this.wake();
  }

  /**
   * Runs one pass now (or once more after the running one). A pass only starts sends, so a slow
   * receiver never delays another endpoint's deliveries; the promise resolves once the sends under
   * way have ended too (for tests and for stopping).
   */
  wake(): Promise<void> {
    if (this.stopped) return this.settled();
    if (this.running) {
      this.again = true;
      return this.running.then(() => this.settled());
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.pass();
          this.failedAt = undefined;
        } catch (error) {
          this.deps.onError?.(error);
          this.failedAt = this.clock();
          this.wakeAt(undefined);
        }
      } while (this.again && !this.stopped);
      this.running = undefined;
    })();
    return this.running.then(() => this.settled());
  }

  private async settled(): Promise<void> {
    while (this.inFlight.size > 0 || this.planning) await Promise.all([...this.inFlight, this.planning]);
  }

  /** Stops waking, and waits for the sends under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
    this.timer?.cancel();
    this.timer = undefined;
    await this.running;
    await this.settled();
  }

  /**
   * Asks the store when the next delivery falls due, and sets the one wake-up for then (or none).
   * Asked again while an answer is awaited, it asks once more after it: that answer may predate the
   * outcomes that asked.
   */
  private plan(): void {
    if (this.stopped) return;
    if (this.planning) {
      this.replan = true;
      return;
    }
    this.planning = (async () => {
      try {
        do {
          this.replan = false;
          this.wakeAt(await this.deps.store.nextDue());
        } while (this.replan && !this.stopped);
      } catch (error) {
        this.deps.onError?.(error);
        this.failedAt ??= this.clock();
        this.wakeAt(undefined);
      } finally {
        this.planning = undefined;
      }
    })();
  }

  /**
   * Wakes at `due` (epoch ms) instead of the wake-up set before; undefined: at none. After a failed
   * pass or look-up, no later than `AFTER_ERROR_MS` after it, until a pass succeeds: what the failed
   * one did not do (new events, due deliveries) is not lost until the next event.
   */
  private wakeAt(due: number | undefined): void {
    if (this.stopped) return;
    this.timer?.cancel();
    this.timer = undefined;
    const retry = this.failedAt === undefined ? undefined : this.failedAt + AFTER_ERROR_MS;
    const at = due === undefined || (retry !== undefined && retry < due) ? retry : due;
    if (at === undefined) return;
    // A millisecond past the due time, so the pass it starts finds the delivery due.
    const ms = Math.min(Math.max(at - this.clock(), 0) + 1, LONGEST_TIMER_MS);
    const wakeAfter = this.deps.wakeAfter ?? timerWake;
    const timer = {
      at,
      cancel: wakeAfter(ms, () => {
        if (this.timer === timer) this.timer = undefined;
        void this.wake();
      }),
    };
    this.timer = timer;
  }

  private async pass(): Promise<void> {
    const { store, events } = this.deps;
    const enabled = (await store.endpoints()).filter((endpoint) => endpoint.enabled === 1);
    if (enabled.length === 0) {
      // Nothing can be due: no wake-up until an event, an enabling or a redelivery.
      this.wakeAt(undefined);
      return;
    }
    // The log is read once from the endpoint furthest behind, and each endpoint takes what lies past
    // its own cursor: one query a pass when nothing is new, however many endpoints there are.
    let from = Math.min(...enabled.map((endpoint) => endpoint.cursor));
    for (;;) {
      const batch = await events.after(from, BATCH);
      const last = batch.at(-1);
      if (last === undefined) break;
      const now = this.clock();
      for (const endpoint of enabled) {
        if (last.seq <= endpoint.cursor) continue;
        const rows: DeliveryRow[] = batch
          .filter((event) => event.seq > endpoint.cursor && wants(endpoint, event))
          .map((event) => ({
            endpoint_id: endpoint.id,
            event_id: event.id,
            event_seq: event.seq,
            payload: payloadOf(event),
            state: 'pending',
            attempts: 0,
            next_attempt_at: now,
            last_attempt_at: null,
            last_status: null,
            last_latency_ms: null,
            last_error: null,
          }));
        await store.enqueue(endpoint.id, last.seq, rows);
        endpoint.cursor = last.seq;
      }
      from = last.seq;
      if (batch.length < BATCH) break;
    }
    const room = Math.min(50, MAX_IN_FLIGHT - this.inFlight.size);
    if (room <= 0) {
      this.more = true;
      return;
    }
    // Due rows are claimed before they are sent (a lease), so a later pass does not take them again.
    const due = await store.due(this.clock(), room);
    this.more = due.length === room;
    for (const row of due) {
      this.track(this.attempt(row).catch((error: unknown) => this.deps.onError?.(error)));
    }
    // With sends under way, the next due time is asked once they have ended (their outcomes set it).
    if (this.inFlight.size === 0) this.plan();
  }

  private track(work: Promise<void>): void {
    const tracked = work.finally(() => {
      this.inFlight.delete(tracked);
      if (this.stopped) return;
      // More were due than there was room for: one pass refills once half the sends have ended,
      // rather than a pass (and its queries) after every send.
      if (this.more) {
        if (this.inFlight.size <= MAX_IN_FLIGHT / 2) void this.wake();
      } else if (this.inFlight.size === 0) this.plan();
    });
    this.inFlight.add(tracked);
  }

  private async attempt(row: DeliveryRow): Promise<void> {
    const { store } = this.deps;
    const now = this.clock();
    // Held while the send runs; should this process die, the lease ends and another one retries.
    if (!(await store.claim(row, now + this.deps.send.timeoutMs + 30_000))) return;
    const endpoint = await store.endpoint(row.endpoint_id);
    if (endpoint === undefined) return;
    let outcome: SendOutcome;
    try {
      const secret = openSecret(endpoint.secret, this.deps.keySecret);
      // Signed at the wall clock's time: receivers check the timestamp against theirs.
      const at = new Date();
      outcome = await sendSigned(endpoint.url, secret, row.event_id, row.payload, at, this.deps.send);
    } catch (error) {
      outcome = { ok: false, status: null, latencyMs: 0, error: (error as Error).message };
    }
    const attempts = row.attempts + 1;
    const exhausted = !outcome.ok && attempts >= MAX_ATTEMPTS;
    await store.record(row.endpoint_id, row.event_id, {
      state: outcome.ok ? 'delivered' : exhausted ? 'failed' : 'pending',
      attempts,
      next_attempt_at:
        outcome.ok || exhausted ? null : this.clock() + retryDelayMs(attempts, this.deps.random),
      last_attempt_at: now,
      last_status: outcome.status,
      last_latency_ms: outcome.latencyMs,
      last_error: outcome.error?.slice(0, 500) ?? null,
    });
    if (exhausted) {
      await store.setEnabled(row.endpoint_id, false, `delivery ${row.event_id} failed ${attempts} times`);
    }
  }
}
