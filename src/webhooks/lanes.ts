/**
 * The delivery worker's share-out of sends between endpoints (docs/webhooks.md, "Endpoints that do
 * not answer"): each endpoint has a lane with the due deliveries fetched for it, and starts at most
 * its share of sends; lanes take turns (round robin), so one endpoint's backlog never goes first
 * because it is long. Memory only; what is due stays in the store.
 */

import type { DeliveryRow, EndpointRow } from '../stores/event-types.js';
import { HOLD_AFTER_TIMEOUTS, SENDS_PER_ENDPOINT } from './limits.js';

export class Lane {
  /** Sends of this lane under way. */
  inFlight = 0;
  /** Due deliveries fetched, not started yet, in the store's order. */
  readonly queue: DeliveryRow[] = [];
  /** Event ids queued or being sent: a later fetch that returns them again adds them once. */
  readonly taken = new Set<string>();
  /** The last fetch returned all it asked for, or rows were written since: more may be due. */
  more = false;
  /** Rows were written for it that no fetch has seen yet: no more are written until one has. */
  unfetched = false;
  /** Sends in a row that got no answer within the timeout. */
  timeouts = 0;
  /** Sends in a row that ended (answered or refused) within the timeout. */
  ended = 0;

  /** The endpoint as the last pass read it (its URL and secret never change; its state is checked by each claim). */
  constructor(public endpoint: EndpointRow) {}

  /**
   * Sends it may have under way. A lane starts with one and takes one more for each send that ended
   * in time, up to its share, and is back to one after a timeout: a receiver that hangs holds one
   * request, not its whole share, before it has ever answered as after.
   */
  get cap(): number {
    return this.timeouts > 0 ? 1 : Math.min(SENDS_PER_ENDPOINT, 1 + this.ended);
  }

  /** Too few queued to keep its share busy: the next pass fetches for it. */
  get wantsRows(): boolean {
    return this.queue.length < SENDS_PER_ENDPOINT;
  }

  /** Held as a whole after sends in a row timed out. */
  get held(): boolean {
    return this.timeouts >= HOLD_AFTER_TIMEOUTS;
  }

  /** Adds fetched due rows it does not hold yet; `asked`: how many the fetch asked for. */
  fill(rows: readonly DeliveryRow[], asked: number): void {
    for (const row of rows) {
      if (this.taken.has(row.event_id)) continue;
      this.taken.add(row.event_id);
      this.queue.push(row);
    }
    this.more = rows.length >= asked;
    if (!this.more) this.unfetched = false;
  }

  /** Forgets what is queued (the store moved it, or the endpoint went); sends under way go on. */
  drop(): void {
    for (const row of this.queue.splice(0)) this.taken.delete(row.event_id);
    this.more = false;
  }

  finished(row: DeliveryRow): void {
    this.inFlight -= 1;
    this.taken.delete(row.event_id);
  }
}

export class Lanes {
  private readonly byId = new Map<string, Lane>();
  private order: Lane[] = [];
  private turn = 0;

  /** The endpoint's lane, made on first use. */
  lane(endpoint: EndpointRow): Lane {
    let lane = this.byId.get(endpoint.id);
    if (lane === undefined) {
      lane = new Lane(endpoint);
      this.byId.set(endpoint.id, lane);
      this.order.push(lane);
    }
    lane.endpoint = endpoint;
    return lane;
  }

  /** Keeps the lanes of `endpointIds`; the others lose what they queued, and go once idle. */
  keepOnly(endpointIds: ReadonlySet<string>): void {
    for (const lane of this.order) {
      if (endpointIds.has(lane.endpoint.id)) continue;
      lane.drop();
      if (lane.inFlight === 0) this.byId.delete(lane.endpoint.id);
    }
    this.order = this.order.filter((lane) => this.byId.has(lane.endpoint.id));
    this.turn %= Math.max(this.order.length, 1);
  }

  /** The next delivery to start, from the next lane in turn that has one and room for it. */
  take(): { lane: Lane; row: DeliveryRow } | undefined {
    const count = this.order.length;
    for (let step = 0; step < count; step += 1) {
      const lane = this.order[(this.turn + step) % count];
      if (lane === undefined || lane.inFlight >= lane.cap) continue;
      const row = lane.queue.shift();
      if (row === undefined) continue;
      lane.inFlight += 1;
      this.turn = (this.turn + step + 1) % count;
      return { lane, row };
    }
    return undefined;
  }
}
