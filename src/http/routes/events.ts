/**
 * `GET /api/v1/events` (docs/events.md): the price events the key may read, as server-sent events.
 *
 * Each stream starts at the newest event, or after the one `Last-Event-ID` names if that is within
 * the resume window, and sends the events after its own cursor as its client takes them
 * (src/events/event-stream.ts): what a stream holds for its client is bounded, counted with its
 * connection's unsent bytes (client-groups.ts), and a client that stops reading is closed by the
 * idle deadline. Opening a stream counts as one request; a key holds at most its tier's `streams`
 * open on an instance, counted as the tier counts requests (per key, or per key and client address
 * group). On shutdown every stream gets a `retry:` hint and ends, so clients reconnect (to another
 * instance) where they left off.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../../domain/errors/api-error.js';
import { countedAs } from '../../domain/limits/tiers.js';
import { EventHub } from '../../events/event-hub.js';
import { EventStream } from '../../events/event-stream.js';
import {
  type EventStreamOptions,
  HEARTBEAT_MS,
  RESUME_WINDOW_MS,
  RETRY_MS,
} from '../../events/stream-limits.js';
import type { PriceService } from '../../services/price-service.js';
import type { EventLog } from '../../stores/event-types.js';
import { seqOfId } from '../../stores/sql/outbox.js';
import { parseReadQuery, ReadHeadersSchema, ReadQueryFields } from '../contract/read-query.js';
import { keyedErrors, RATE_LIMIT_HEADERS, REQUEST_ID_HEADER } from '../contract/schemas.js';
import type { Metrics } from '../metrics.js';
import type { KeyGuard } from '../pipeline/admit.js';

/** How long a shutdown waits for the streams' last chunks to reach their sockets. */
const SHUTDOWN_FLUSH_MS = 1_000;

export interface EventRouteDeps {
  readonly events: EventLog | undefined;
  readonly prices: PriceService;
  readonly keyGuard: KeyGuard;
  readonly clock: () => number;
  readonly metrics: Metrics;
  readonly options?: EventStreamOptions;
  /** Counts a stream's queued text with its connection's unsent bytes (../transport/client-groups.ts). */
  readonly countUnsent?: (response: FastifyReply['raw'], bytes: () => number) => void;
}

/** An open stream: the text it queues, and the answer whose socket holds what it wrote. */
interface OpenStream {
  readonly stream: EventStream;
  readonly raw: FastifyReply['raw'];
  /** Ends it with the shutdown hint; resolves once its last chunk reached the socket, or it closed. */
  readonly shutdown: () => Promise<void>;
}

/**
 * Where a stream starts: after the event `Last-Event-ID` names if the events after it are at most
 * 24 hours old, else at the newest event, with a note saying why.
 */
async function startOf(
  events: EventLog,
  header: string | undefined,
  now: number,
): Promise<{ after: number; note?: string }> {
  const latest = await events.latestSeq();
  if (header === undefined) return { after: latest };
  const last = seqOfId(header);
  if (last === undefined || last > latest) {
    return { after: latest, note: 'the Last-Event-ID is unknown here; starting from now' };
  }
  const next = (await events.after(last, 1))[0];
  if (next !== undefined && now - Date.parse(next.time) > RESUME_WINDOW_MS) {
    return {
      after: latest,
      note: 'the events after Last-Event-ID are older than 24 hours; starting from now',
    };
  }
  return { after: last };
}

export function eventRoutes(app: FastifyInstance, deps: EventRouteDeps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const heartbeatMs = deps.options?.heartbeatMs ?? HEARTBEAT_MS;
  /** Open streams by what the tier counts them by (`countedAs`). */
  const openPer = new Map<string, number>();
  const open = new Set<OpenStream>();
  const hub =
    deps.events &&
    new EventHub(deps.events, (error) => app.log.warn({ err: error }, 'reading the event log failed'));

  deps.metrics.observeEventStreams(() => {
    let unsent = 0;
    let largestUnsent = 0;
    for (const { stream, raw } of open) {
      // A closed connection holds nothing any more; its stream leaves `open` a moment later.
      if (raw.socket === null || raw.socket.destroyed) continue;
      const bytes = stream.readableLength + raw.writableLength;
      unsent += bytes;
      largestUnsent = Math.max(largestUnsent, bytes);
    }
    return { open: open.size, unsent, largestUnsent };
  });

  // preClose: Fastify waits for requests in flight before onClose, and a stream never finishes by
  // itself. Each stream is ended with its retry hint, and the close waits until its last chunk has
  // been handed to the socket (at most `SHUTDOWN_FLUSH_MS`): closing the connections earlier would
  // cut the answer short, and a client would see a broken response instead of a finished one.
  app.addHook('preClose', async () => {
    const ends = [...open].map(({ shutdown }) => shutdown());
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, SHUTDOWN_FLUSH_MS);
    });
    await Promise.race([Promise.all(ends), late]);
    clearTimeout(timer);
  });

  api.get(
    '/api/v1/events',
    {
      onRequest: deps.keyGuard(),
      schema: {
        operationId: 'streamEvents',
        summary: 'Price events as they happen',
        description:
          'Server-sent events: `day.published` when a day becomes complete, `day.revised` when a complete day changes (docs/events.md). Resume with `Last-Event-ID` within 24 hours.',
        tags: ['events'],
        querystring: Type.Object({ symbols: ReadQueryFields.symbols }, { additionalProperties: false }),
        headers: Type.Object({
          ...ReadHeadersSchema.properties,
          'last-event-id': Type.Optional(Type.String({ description: 'The last event id received.' })),
        }),
        response: {
          200: {
            description:
              'The stream: `retry:`, then events and heartbeat comments until either side closes it.',
            headers: { ...RATE_LIMIT_HEADERS, ...REQUEST_ID_HEADER },
            content: {
              'text/event-stream': {
                schema: {
                  type: 'string',
                  description: '`id:`, `event:` and `data:` (the event as JSON) per event.',
                },
              },
            },
          },
          ...keyedErrors(404),
        },
      },
    },
    async (request, reply) => {
      const events = deps.events;
      if (events === undefined || hub === undefined) {
        throw new ApiError('service_unavailable', 'This server keeps no event log.', {
          retryAfterSeconds: 60,
        });
      }
      const caller = request.caller!;
      const query = parseReadQuery(request.query);
      // Checks the symbols against the catalogue and the tier (404 unknown, 403 refused).
      const readable = await deps.prices.catalogue(caller.tier, query);
      const everything = query.symbols === undefined && caller.tier.kinds === null;
      const wanted = new Set(readable.map((s) => s.symbol));
      const counted = countedAs(caller.tier, caller.key.id, request.ip);
      const held = openPer.get(counted) ?? 0;
      const limit = caller.tier.streams;
      if (held >= limit) {
        const from = caller.tier.countPer === 'key+ip' ? ' from this address' : '';
        throw new ApiError('rate_limited', `This key already holds ${limit} open event streams${from}.`, {
          retryAfterSeconds: RETRY_MS / 1_000,
          extra: { 'violated-policies': ['streams'] },
        });
      }

      // Taken before any wait, so streams opened at once cannot pass the bound together.
      openPer.set(counted, held + 1);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        const left = (openPer.get(counted) ?? 1) - 1;
        if (left > 0) openPer.set(counted, left);
        else openPer.delete(counted);
      };
      let stream: EventStream;
      try {
        const { after, note } = await startOf(events, request.headers['last-event-id'], deps.clock());
        stream = await EventStream.open({
          log: events,
          hub,
          after,
          wants: (event) => everything || wanted.has(event.data.symbol),
          greeting: `retry: ${RETRY_MS}\n: ${note ?? 'connected'}\n\n`,
          heartbeatMs,
          onError: (error) => request.log.warn({ err: error }, 'reading the event log for a stream failed'),
        });
      } catch (error) {
        release();
        throw error;
      }
      const raw = reply.raw;
      const entry: OpenStream = {
        stream,
        raw,
        shutdown: () =>
          new Promise<void>((resolve) => {
            if (raw.writableFinished || raw.destroyed) resolve();
            raw.once('finish', resolve);
            raw.once('close', resolve);
            stream.finish(
              `retry: ${RETRY_MS}\n: the server is shutting down; reconnect with Last-Event-ID\n\n`,
            );
          }),
      };
      open.add(entry);
      // What the stream queues counts with its connection's unsent bytes, against its client's bound.
      deps.countUnsent?.(raw, () => stream.readableLength);
      const closed = () => {
        open.delete(entry);
        release();
        stream.destroy();
      };
      // The client may have gone while the stream was being opened.
      if (raw.destroyed) closed();
      else raw.once('close', closed);

      // The schema documents the stream as a string; Fastify sends a stream as it comes.
      return (
        (reply as FastifyReply)
          .header('content-type', 'text/event-stream; charset=utf-8')
          .header('cache-control', 'no-store')
          // nginx buffers proxied answers unless told not to (docs/operating.md "Running several instances").
          .header('x-accel-buffering', 'no')
          .send(stream)
      );
    },
  );
}
