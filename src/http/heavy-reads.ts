/**
 * How many heavy reads one client may have built at once (README "Rate limits", "Heavy reads in
 * flight"): a read of days that the answer cache does not hold and that converts, prices under a
 * tariff, ranks or weighs more than one unit. A client is a key, or a key and a client address
 * group for tiers counted per key and address (the shared demo key). Its first `inFlight` heavy
 * reads are built at once; up to `waiting` more wait their turn, in order; one beyond those is
 * refused with 429 `rate_limited` and `Retry-After: 1`, having taken its units already like any
 * request that was counted. So however many units a client may spend, it keeps at most `inFlight`
 * reads' work on the event loop and the database at once, and every other client's requests, light
 * or heavy, are served between them. Cached answers and light reads never wait here.
 *
 * Per instance, held by the app (../http/app.ts): only clients with a read under way have an entry,
 * so what it keeps is bounded by the requests the server holds.
 */
import { ApiError } from '../domain/errors/api-error.js';

export interface HeavyReadLimits {
  /** Heavy reads of one client built at once (at least 1). */
  readonly inFlight: number;
  /** Heavy reads of one client that may wait for a turn beyond those. */
  readonly waiting: number;
}

interface Client {
  running: number;
  readonly queue: (() => void)[];
}

export function createHeavyReads(limits: HeavyReadLimits) {
  const clients = new Map<string, Client>();

  /** Hands the slot of a finished read to the next waiting one, or frees it. */
  function release(id: string, client: Client): void {
    const next = client.queue.shift();
    if (next !== undefined) {
      next();
      return;
    }
    client.running--;
    if (client.running === 0) clients.delete(id);
  }

  return {
    /**
     * Runs `build` for the client `id` when it has a free slot, after the reads it has waiting
     * before; 429 when it already has `inFlight` running and `waiting` waiting. `who` names the
     * client in the refusal.
     * @example await heavy.run('k_123', () => buildAnswer(), 'this key')
     */
    async run<T>(id: string, build: () => Promise<T>, who = 'this client'): Promise<T> {
      let client = clients.get(id);
      if (client === undefined) {
        client = { running: 0, queue: [] };
        clients.set(id, client);
      }
      if (client.running < limits.inFlight) client.running++;
      else if (client.queue.length < limits.waiting) {
        const queue = client.queue;
        await new Promise<void>((resolve) => queue.push(resolve));
      } else {
        throw new ApiError(
          'rate_limited',
          `Heavy reads in flight: ${who} has ${limits.inFlight} being built and ${limits.waiting} waiting; retry once one is answered.`,
          { retryAfterSeconds: 1, extra: { 'violated-policies': ['heavy-reads'] } },
        );
      }
      try {
        return await build();
      } finally {
        release(id, client);
      }
    },

    /** Clients with a heavy read built or waiting now. */
    get clients(): number {
      return clients.size;
    },
  };
}

export type HeavyReads = ReturnType<typeof createHeavyReads>;
