/**
 * How many heavy reads are built at once (docs/using-the-api.md "Rate limits", "Heavy reads in flight"): a read of
 * days that the answer cache does not hold and that converts, prices under a tariff, ranks or weighs
 * more than one unit. A client is a key, or a key and a client address group for tiers counted per
 * key and address (the shared demo key).
 *
 * At most `total` heavy reads are built at once on the instance, and at most `perClient` of one
 * client; a client's further reads wait their turn, up to `waiting` of them, and one beyond those is
 * refused with 429 `rate_limited` and `Retry-After: 1` (it took its units already, like any counted
 * request). Free turns go to the waiting clients in rotation, so many addresses of one key cannot
 * crowd out another key's heavy read for long. Cached answers and light reads never wait here, and
 * each heavy read lets other requests in between its turns (src/services/served-days.ts), so
 * however many units the clients spend, the event loop never holds more than `total` of them.
 *
 * Per instance, held by the app (../http/app.ts): only clients with a read under way have an entry,
 * so what it keeps is bounded by the requests the server holds.
 */
import { ApiError } from '../../domain/errors/api-error.js';

export interface HeavyReadLimits {
  /** Heavy reads built at once on this instance (at least 1). */
  readonly total: number;
  /** Heavy reads of one client built at once (at least 1). */
  readonly perClient: number;
  /** Heavy reads of one client that may wait for a turn beyond those. */
  readonly waiting: number;
}

interface Client {
  readonly id: string;
  running: number;
  readonly queue: (() => void)[];
}

export function createHeavyReads(limits: HeavyReadLimits) {
  const clients = new Map<string, Client>();
  /** Clients with reads waiting, in the order their next read gets a free turn. */
  const rotation: Client[] = [];
  let running = 0;

  const start = (client: Client) => {
    client.running++;
    running++;
  };

  /** Gives free turns to waiting reads, one client after the other. */
  function dispatch(): void {
    for (let i = 0; i < rotation.length && running < limits.total; ) {
      const client = rotation[i] as Client;
      if (client.running >= limits.perClient) {
        i++;
        continue;
      }
      start(client);
      (client.queue.shift() as () => void)();
      rotation.splice(i, 1);
      if (client.queue.length > 0) rotation.push(client);
    }
  }

  function release(client: Client): void {
    client.running--;
    running--;
    if (client.running === 0 && client.queue.length === 0) clients.delete(client.id);
    dispatch();
  }

  return {
    /**
     * Runs `build` for the client `id` in its turn; 429 when it already has `perClient` reads
     * running or `waiting` waiting, and `waiting` waiting. `who` names the client in the refusal.
     * @example await heavy.run('k_123', () => buildAnswer(), 'this key')
     */
    async run<T>(id: string, build: () => Promise<T>, who = 'this client'): Promise<T> {
      let client = clients.get(id);
      if (client === undefined) {
        client = { id, running: 0, queue: [] };
        clients.set(id, client);
      }
      if (client.queue.length === 0 && client.running < limits.perClient && running < limits.total) {
        start(client);
      } else if (client.queue.length < limits.waiting) {
        const queue = client.queue;
        if (queue.length === 0) rotation.push(client);
        await new Promise<void>((resolve) => queue.push(resolve));
      } else {
        throw new ApiError(
          'rate_limited',
          `Heavy reads in flight: ${who} has ${client.running} being built and ${client.queue.length} waiting; retry once one is answered.`,
          { retryAfterSeconds: 1, extra: { 'violated-policies': ['heavy-reads'] } },
        );
      }
      try {
        return await build();
      } finally {
        release(client);
      }
    },

    /** Clients with a heavy read built or waiting now. */
    get clients(): number {
      return clients.size;
    },
  };
}

export type HeavyReads = ReturnType<typeof createHeavyReads>;
