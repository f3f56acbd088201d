/**
 * The delivery worker (docs/webhooks.md): woken by the event log, it turns new events into
 * deliveries per endpoint (its cursor in the log), then sends what is due, signed per the Standard
 * Webhooks specification. It runs beside the server, so an import never waits for a receiver.
 * Failed sends are retried with exponential backoff and jitter for about 24 hours; the endpoint is
 * disabled when a delivery has failed `MAX_ATTEMPTS` times.
 *
 * Each endpoint has its share of the sends under way (./lanes.ts, ./limits.ts), so a receiver that
 * holds its requests only ever holds its own share; after sends in a row time out, its endpoint's
 * deliveries wait as a whole until the retry of the last one, and are probed one at a time.
 *
 * Idle when there is nothing to do: it wakes for new events (which is also how it notices an
 * endpoint registered on another instance: only events after it concern it), for deliveries made
 * due through this process's store (an endpoint enabled, a redelivery), and at the time the next
 * pending delivery falls due, which it asks the store after its sends have ended. No timer runs
 * while no delivery waits.
 */

import type { DeliveryRow, EndpointRow, EventLog, WebhookStore } from '../stores/event-types.js';
import { type Lane, Lanes } from './lanes.js';
import { FETCH_PER_ENDPOINT, MAX_ATTEMPTS, MAX_IN_FLIGHT, retryDelayMs } from './limits.js';
import { openSecret } from './secrets.js';
import type { SendOptions, SendOutcome } from './send.js';
import { newDelivery, sendSigned, wants } from './signed-delivery.js';

/** setTimeout's longest delay (about 24.8 days); a later due time is looked at again then. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;
/** After a pass or a look-up failed (the database away a moment), the worker tries again this soon. */
const AFTER_ERROR_MS = 5_000;
const BATCH = 200;
/** Delivery rows written in one transaction at most (events of a page times endpoints). */
const ENQUEUE_ROWS = 1_000;

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

/** Its sends end in time: it takes a backlog as it comes, rather than a fetch's worth at a time. */
function answers(lane: Lane): boolean {
  return lane.ended > 0 && lane.timeouts === 0;
}

function timerWake(ms: number, wake: () => void): () => void {
  const timer = setTimeout(wake, ms);
  timer.unref();
  return () => clearTimeout(timer);
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
  private readonly lanes = new Lanes();
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
    while (this.inFlight.size > 0 || this.planning || this.running) {
      await Promise.all([...this.inFlight, this.planning, this.running]);
    }
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

  /**
   * Wakes at `due` unless a wake-up is set sooner: a retry this process scheduled is sent on time
   * even while other sends are under way. A due time being asked may predate it: asked again.
   */
  private wakeBy(due: number): void {
    if (this.planning) this.replan = true;
    if (this.timer === undefined || this.timer.at > due) this.wakeAt(due);
  }

  private async pass(): Promise<void> {
    const { store, events } = this.deps;
    const enabled = (await store.endpoints()).filter((endpoint) => endpoint.enabled === 1);
    this.lanes.keepOnly(new Set(enabled.map((endpoint) => endpoint.id)));
    if (enabled.length === 0) {
      // Nothing can be due: no wake-up until an event, an enabling or a redelivery.
      this.wakeAt(undefined);
      return;
    }
    // The log is read once from the endpoint furthest behind, and each endpoint takes what lies past
    // its own cursor: one query a pass when nothing is new, however many endpoints there are.
    let from = Math.min(...enabled.map((endpoint) => endpoint.cursor));
    // Endpoints whose lane holds enough for now: their deliveries are written when it runs short, so
    // a receiver that has not answered yet costs a few rows, not one per event of a backlog. A lane
    // whose sends end in time takes the backlog as it comes.
    const full = new Set<string>();
    for (;;) {
      const batch = await events.after(from, BATCH);
      const last = batch.at(-1);
      if (last === undefined) break;
      // A few events at a time for every endpoint with room, each write one transaction, sent as soon
      // as written: the first sends wait for one small write, not for the whole fan-out of a backlog.
      for (let at = 0; at < batch.length; ) {
        const now = this.clock();
        const behind = enabled.filter(
          (endpoint) =>
            endpoint.cursor < (batch.at(-1) as (typeof batch)[number]).seq && !full.has(endpoint.id),
        );
        for (const endpoint of behind) {
          const lane = this.lanes.lane(endpoint);
          const enough = lane.unfetched || lane.queue.length + lane.inFlight >= FETCH_PER_ENDPOINT;
          if (!answers(lane) && enough) {
            full.add(endpoint.id);
            // More to write for it: once its lane runs short, it asks for a pass.
            lane.more = true;
          }
        }
        const writing = behind.filter((endpoint) => !full.has(endpoint.id));
        if (writing.length === 0) break;
        // While a lane that has not answered yet is among them, a slice is what one fetch takes.
        const untried = writing.some((endpoint) => !answers(this.lanes.lane(endpoint)));
        const most = Math.max(1, Math.floor(ENQUEUE_ROWS / writing.length));
        const slice = batch.slice(at, at + (untried ? Math.min(most, FETCH_PER_ENDPOINT) : most));
        at += slice.length;
        const end = (slice.at(-1) as (typeof batch)[number]).seq;
        const rows = writing.flatMap((endpoint) =>
          slice
            .filter((event) => event.seq > endpoint.cursor && wants(endpoint, event))
            .map((event): DeliveryRow => newDelivery(endpoint.id, event, now)),
        );
        await store.enqueue(
          writing.map((endpoint) => endpoint.id),
          end,
          rows,
        );
        for (const endpoint of writing) endpoint.cursor = Math.max(endpoint.cursor, end);
        // Rows its last fetch could not see: it fetches again once it runs short, before more are written.
        const got = new Set(rows.map((row) => row.endpoint_id));
        for (const endpoint of writing) {
          if (!got.has(endpoint.id)) continue;
          const lane = this.lanes.lane(endpoint);
          lane.unfetched = true;
          lane.more = true;
        }
        await this.startDue(enabled);
      }
      from = last.seq;
      if (batch.length < BATCH) break;
    }
    await this.startDue(enabled);
    // With sends under way, the next due time is asked once they have ended (their outcomes set it).
    if (this.inFlight.size === 0) this.plan();
  }

  /**
   * Fetches due rows for the lanes short of queued ones, a few each, and starts what their shares
   * allow. Rows are claimed (a lease) only as each is sent, so a later pass or another instance does
   * not send them again.
   */
  private async startDue(enabled: readonly EndpointRow[]): Promise<void> {
    const { store } = this.deps;
    const wanting = enabled.map((endpoint) => this.lanes.lane(endpoint)).filter((lane) => lane.wantsRows);
    if (wanting.length === 0) {
      this.dispatch();
      return;
    }
    const due = await store.due(
      this.clock(),
      wanting.map((lane) => lane.endpoint.id),
      FETCH_PER_ENDPOINT,
    );
    const dueOf = new Map<string, DeliveryRow[]>();
    for (const row of due) dueOf.set(row.endpoint_id, [...(dueOf.get(row.endpoint_id) ?? []), row]);
    for (const lane of wanting) lane.fill(dueOf.get(lane.endpoint.id) ?? [], FETCH_PER_ENDPOINT);
    this.dispatch();
  }

  /**
   * Starts queued deliveries, lanes taking turns, each within its share. Those started together are
   * claimed in one transaction; each is sent if this process won it.
   */
  private dispatch(): void {
    const started: { lane: Lane; row: DeliveryRow }[] = [];
    while (!this.stopped && this.inFlight.size + started.length < MAX_IN_FLIGHT) {
      const next = this.lanes.take();
      if (next === undefined) break;
      started.push(next);
    }
    if (started.length === 0) return;
    // Held while the sends run; should this process die, the lease ends and another one retries.
    const leaseUntil = this.clock() + this.deps.send.timeoutMs + 30_000;
    const claimed = this.deps.store
      .claim(
        started.map(({ row }) => row),
        leaseUntil,
      )
      .catch((error: unknown) => {
        this.deps.onError?.(error);
        return [];
      });
    started.forEach(({ lane, row }, i) => {
      this.track(
        lane,
        row,
        claimed.then((won) => won[i] === true),
      );
    });
  }

  private track(lane: Lane, row: DeliveryRow, claimed: Promise<boolean>): void {
    const tracked = this.attempt(lane, row, claimed)
      .catch((error: unknown) => this.deps.onError?.(error))
      .finally(() => {
        lane.finished(row);
        this.inFlight.delete(tracked);
        if (this.stopped) return;
        this.dispatch();
        // A pass fetches more for a lane running short, rather than a pass after every send.
        if (lane.more && lane.wantsRows) void this.wake();
        else if (this.inFlight.size === 0) this.plan();
      });
    this.inFlight.add(tracked);
  }

  private async attempt(lane: Lane, row: DeliveryRow, claimed: Promise<boolean>): Promise<void> {
    const { store } = this.deps;
    const now = this.clock();
    // Taken by another instance, or its endpoint disabled or removed since the row was fetched.
    if (!(await claimed)) return;
    const { endpoint } = lane;
    let outcome: SendOutcome;
    try {
      const secret = openSecret(endpoint.secret, this.deps.keySecret);
      // Signed at the wall clock's time: receivers check the timestamp against theirs.
      const at = new Date();
      outcome = await sendSigned(endpoint.url, secret, row.event_id, row.payload, at, this.deps.send);
    } catch (error) {
      outcome = { ok: false, status: null, latencyMs: 0, error: (error as Error).message };
    }
    lane.timeouts = outcome.timedOut ? lane.timeouts + 1 : 0;
    lane.ended = outcome.timedOut ? 0 : lane.ended + 1;
    const attempts = row.attempts + 1;
    const exhausted = !outcome.ok && attempts >= MAX_ATTEMPTS;
    const next = outcome.ok || exhausted ? null : this.clock() + retryDelayMs(attempts, this.deps.random);
    // A receiver that keeps not answering: its other deliveries wait for this one's retry.
    const holdUntil = next !== null && lane.held ? next : undefined;
    await store.record(
      row.endpoint_id,
      row.event_id,
      {
        state: outcome.ok ? 'delivered' : exhausted ? 'failed' : 'pending',
        attempts,
        next_attempt_at: next,
        last_attempt_at: now,
        last_status: outcome.status,
        last_latency_ms: outcome.latencyMs,
        last_error: outcome.error?.slice(0, 500) ?? null,
      },
      holdUntil,
    );
    if (holdUntil !== undefined) lane.drop();
    if (next !== null) this.wakeBy(next);
    if (exhausted) {
      await store.setEnabled(row.endpoint_id, false, `delivery ${row.event_id} failed ${attempts} times`);
    }
  }
}
