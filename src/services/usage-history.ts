/**
 * Usage history (docs/usage-history.md): every counted request is added to its key's totals of the
 * current UTC hour in memory, and those totals are added to the store every few seconds and when
 * the app closes. The store only ever adds, so instances sum exactly; a crash loses what was counted
 * since the last flush.
 *
 * `count` runs for every keyed request: a Map lookup and integer adds, nothing allocated while a
 * key stays in its hour. A key's slot is zeroed in place when flushed and dropped after a flush
 * interval without requests, so memory follows the keys in use.
 */
import type { Span } from '../domain/time/days.js';
import { HOUR_MS } from '../domain/usage/usage-range.js';
import {
  NO_USAGE,
  type TierBucket,
  type UsageCounts,
  type UsageDay,
  type UsageHour,
  type UsageStore,
} from '../stores/usage.js';

/** What the request recorder needs: one call per answered keyed request. */
export interface UsageCounter {
  /**
   * Counts one request of `keyId` answered `status` that took `units` rate-limit units, in the hour
   * of `at` (when its limits were counted; now without it): an answer may be recorded a moment later.
   */
  count(keyId: string, status: number, units: number, at?: number): void;
}

/** The totals of one bucket of a read. */
export interface UsageBucket extends UsageCounts {
  readonly start: number;
  readonly end: number;
}

export interface UsageHistory extends UsageCounter {
  /** Adds what this instance counted since the last flush to the store; never rejects (see `onError`). */
  flush(): Promise<void>;
  /**
   * The totals of each bucket, of one key or of every key without `keyId`, with this instance's
   * counts flushed first. `buckets` lie back to back on whole UTC hours.
   */
  read(buckets: readonly Span[], keyId?: string): Promise<UsageBucket[]>;
  /**
   * The totals of each bucket per tier over every key of the tier (its current tier), with the number
   * of keys that made any request, this instance's counts flushed first; only buckets and tiers with
   * any. Buckets lie on whole UTC hours and may overlap.
   */
  tierBuckets(buckets: readonly Span[]): Promise<TierBucket[]>;
  /** Per key and UTC day with any usage in `from <= t < to` (the billing export). */
  keyDays(from: number, to: number): Promise<UsageDay[]>;
  /** Stops the timer and flushes once more (the app's onClose). */
  close(): Promise<void>;
}

export interface UsageHistoryDeps {
  readonly store: UsageStore;
  /** Epoch milliseconds; tests pass a fake clock. */
  readonly clock: () => number;
  /** How often counts are written (`PRICEPOINT_USAGE_FLUSH_SECONDS`). */
  readonly flushMs: number;
  /** Hours older than this are removed, about once an hour (`PRICEPOINT_USAGE_RETENTION_DAYS`). */
  readonly retentionDays: number;
  /** Told when a flush or a pruning failed; the counts are kept and written with the next flush. */
  readonly onError?: (error: unknown) => void;
}

/** One key's counts in one hour, mutated in place. */
interface Slot {
  readonly keyId: string;
  readonly hourStart: number;
  readonly hourEnd: number;
  requests: number;
  served: number;
  notModified: number;
  rateLimited: number;
  clientErrors: number;
  units: number;
}

const DAY_MS = 86_400_000;

/** @example const usage = createUsageHistory({ store: stores.usage, clock: Date.now, flushMs: 5000, retentionDays: 400 }) */
export function createUsageHistory(deps: UsageHistoryDeps): UsageHistory {
  const { store, clock } = deps;
  const slots = new Map<string, Slot>();
  /** Slots of hours that ended before their last flush. */
  let retired: Slot[] = [];
  /** Rows a failed flush kept for the next one. */
  let unwritten: UsageHour[] = [];
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();
  let prunedAt = Number.NEGATIVE_INFINITY;
  let closed = false;

  function open(keyId: string, now: number): Slot {
    const old = slots.get(keyId);
    if (old !== undefined && old.requests > 0) retired.push(old);
    const hourStart = Math.floor(now / HOUR_MS) * HOUR_MS;
    const slot: Slot = { keyId, hourStart, hourEnd: hourStart + HOUR_MS, ...NO_USAGE };
    slots.set(keyId, slot);
    if (timer === undefined && !closed) {
      timer = setInterval(() => void flush(), deps.flushMs);
      timer.unref();
    }
    return slot;
  }

  function count(keyId: string, status: number, units: number, at?: number): void {
    const now = at ?? clock();
    let slot = slots.get(keyId);
    if (slot === undefined || now >= slot.hourEnd || now < slot.hourStart) slot = open(keyId, now);
    slot.requests += 1;
    slot.units += units;
    if (status >= 200 && status < 300) slot.served += 1;
    else if (status === 304) slot.notModified += 1;
    else if (status === 429) slot.rateLimited += 1;
    else if (status >= 400 && status < 500) slot.clientErrors += 1;
  }

  /** Every count not written yet, as rows (one per key and hour), leaving the slots at zero. */
  function take(): UsageHour[] {
    const rows = new Map<string, UsageHour>();
    const add = (row: UsageHour) => {
      const id = `${row.keyId}\n${row.hourStart}`;
      const held = rows.get(id);
      rows.set(id, held === undefined ? row : sum(held, row));
    };
    for (const row of unwritten) add(row);
    unwritten = [];
    for (const slot of retired) add(rowOf(slot));
    retired = [];
    for (const [keyId, slot] of slots) {
      // Idle for a whole interval: let it go (a new request makes a new one).
      if (slot.requests === 0) slots.delete(keyId);
      else {
        add(rowOf(slot));
        slot.requests =
          slot.served =
          slot.notModified =
          slot.rateLimited =
          slot.clientErrors =
          slot.units =
            0;
      }
    }
    return [...rows.values()];
  }

  async function write(): Promise<void> {
    const rows = take();
    try {
      await store.add(rows);
    } catch (error) {
      // Kept whole: the store added all of them or none.
      unwritten = [...rows, ...unwritten];
      deps.onError?.(error);
    }
    const now = clock();
    if (now - prunedAt < HOUR_MS) return;
    prunedAt = now;
    try {
      await store.prune(now - deps.retentionDays * DAY_MS);
    } catch (error) {
      deps.onError?.(error);
    }
  }

  function flush(): Promise<void> {
    // One at a time, in order: a flush asked for during another runs after it.
    flushing = flushing.then(write);
    return flushing;
  }

  return {
    count,
    flush,
    async read(buckets, keyId) {
      const first = buckets[0];
      const last = buckets.at(-1);
      if (first === undefined || last === undefined) return [];
      await flush();
      const hours = await store.hours(first.start, last.end, keyId);
      let next = 0;
      return buckets.map(({ start, end }) => {
        let total: UsageCounts = NO_USAGE;
        for (let hour = hours[next]; hour !== undefined && hour.hourStart < end; hour = hours[++next]) {
          if (hour.hourStart >= start) total = sum(total, hour);
        }
        return { start, end, ...counts(total) };
      });
    },
    async tierBuckets(buckets) {
      if (buckets.length === 0) return [];
      await flush();
      return store.tierBuckets(buckets);
    },
    async keyDays(from, to) {
      await flush();
      return store.keyDays(from, to);
    },
    async close() {
      closed = true;
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      await flush();
    },
  };
}

function counts(c: UsageCounts): UsageCounts {
  const { requests, served, notModified, rateLimited, clientErrors, units } = c;
  return { requests, served, notModified, rateLimited, clientErrors, units };
}

function rowOf(slot: Slot): UsageHour {
  return { keyId: slot.keyId, hourStart: slot.hourStart, ...counts(slot) };
}

function sum<T extends UsageCounts>(a: T, b: UsageCounts): T {
  return {
    ...a,
    requests: a.requests + b.requests,
    served: a.served + b.served,
    notModified: a.notModified + b.notModified,
    rateLimited: a.rateLimited + b.rateLimited,
    clientErrors: a.clientErrors + b.clientErrors,
    units: a.units + b.units,
  };
}
