/**
 * `GET /api/v1/events` (docs/events.md): the price events the key may read, as server-sent events.
 *
 * Each stream starts at the newest event, or after the one `Last-Event-ID` names if that is within
 * the resume window, and reads the event log from its own cursor whenever the log says something
 * was appended (on this instance or another). Opening a stream counts as one request; a key holds
 * at most its tier's number of open streams on an instance. On shutdown every stream gets a
 * `retry:` hint and ends, so clients reconnect (to another instance) where they left off.
 */
import { PassThrough } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../../domain/errors/api-error.js';
import { EventHub } from '../../events/event-hub.js';
import { seqOfId } from '../../events/outbox.js';
import {
  type EventStreamOptions,
  HEARTBEAT_MS,
  RESUME_WINDOW_MS,
  RETRY_MS,
  streamsPerKey,
} from '../../events/stream-limits.js';
import type { EventLog, PriceEvent } from '../../events/types.js';
import type { PriceService } from '../../services/price-service.js';
import type { KeyGuard } from '../key-guard.js';
import { parseReadQuery, ReadHeadersSchema, ReadQueryFields } from '../read-query.js';
import { keyedErrors, RATE_LIMIT_HEADERS, REQUEST_ID_HEADER } from '../schemas.js';

/** Events read from the log per query while a stream catches up. */
const PAGE = 500;
/** How long a shutdown waits for the streams' last chunks to reach their sockets. */
const SHUTDOWN_FLUSH_MS = 1_000;

export interface EventRouteDeps {
  readonly events: EventLog | undefined;
  readonly prices: PriceService;
  readonly keyGuard: KeyGuard;
  readonly clock: () => number;
  readonly options?: EventStreamOptions;
}

/** One event as the stream sends it: its id, its type, and the whole event as JSON data. */
export function eventFrame(event: PriceEvent): string {
  const { seq: _seq, ...body } = event;
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(body)}\n\n`;
}

export function eventRoutes(app: FastifyInstance, deps: EventRouteDeps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const heartbeatMs = deps.options?.heartbeatMs ?? HEARTBEAT_MS;
  const limitOf = deps.options?.streamsPerKey ?? streamsPerKey;
  const openPerKey = new Map<string, number>();
  const open = new Set<() => Promise<void>>();
  const hub =
    deps.events &&
    new EventHub(deps.events, (error) => app.log.warn({ err: error }, 'reading the event log failed'));

  // preClose: Fastify waits for requests in flight before onClose, and a stream never finishes by
  // itself. Each stream is ended with its retry hint, and the close waits until its last chunk has
  // been handed to the socket (at most `SHUTDOWN_FLUSH_MS`): closing the connections earlier would
  // cut the answer short, and a client would see a broken response instead of a finished one.
  app.addHook('preClose', async () => {
    const ends = [...open].map((end) => end());
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
      const keyId = caller.key.id;
      const held = openPerKey.get(keyId) ?? 0;
      const limit = limitOf(caller.tier);
      if (held >= limit) {
        throw new ApiError('rate_limited', `This key already holds ${limit} open event streams.`, {
          retryAfterSeconds: RETRY_MS / 1_000,
          extra: { 'violated-policies': ['streams'] },
        });
      }

      const latest = await events.latestSeq();
      let cursor = latest;
      let note: string | undefined;
      const header = request.headers['last-event-id'];
      if (header !== undefined) {
        const last = seqOfId(header);
        const next = last === undefined || last > latest ? undefined : (await events.after(last, 1))[0];
        if (last === undefined || last > latest)
          note = 'the Last-Event-ID is unknown here; starting from now';
        else if (next !== undefined && deps.clock() - Date.parse(next.time) > RESUME_WINDOW_MS) {
          note = 'the events after Last-Event-ID are older than 24 hours; starting from now';
        } else cursor = last;
      }

      openPerKey.set(keyId, held + 1);
      const stream = new PassThrough();
      let ended = false;
      const forward = (page: readonly PriceEvent[]) => {
        for (const event of page) {
          if (ended || event.seq <= cursor) continue;
          cursor = event.seq;
          if (everything || wanted.has(event.data.symbol)) stream.write(eventFrame(event));
        }
      };
      // New events come from the hub; until this stream has caught up, they wait in `waiting`.
      let waiting: PriceEvent[] | undefined = [];
      const release = () => {
        const left = (openPerKey.get(keyId) ?? 1) - 1;
        if (left > 0) openPerKey.set(keyId, left);
        else openPerKey.delete(keyId);
      };
      let unsubscribe: () => void;
      try {
        unsubscribe = await hub.subscribe((page) => {
          if (waiting === undefined) forward(page);
          else waiting.push(...page);
        });
      } catch (error) {
        release();
        throw error;
      }
      const heartbeat = setInterval(() => stream.write(': heartbeat\n\n'), heartbeatMs);
      const finish = () => {
        if (ended) return;
        ended = true;
        clearInterval(heartbeat);
        unsubscribe();
        open.delete(shutdown);
        release();
      };
      const shutdown = () =>
        new Promise<void>((resolve) => {
          const raw = reply.raw;
          if (raw.writableFinished || raw.destroyed) resolve();
          raw.once('finish', resolve);
          raw.once('close', resolve);
          stream.end(`retry: ${RETRY_MS}\n: the server is shutting down; reconnect with Last-Event-ID\n\n`);
          finish();
        });
      open.add(shutdown);
      reply.raw.on('close', finish);
      const catchUp = async () => {
        try {
          for (;;) {
            const page = await events.after(cursor, PAGE);
            forward(page);
            if (page.length < PAGE || ended) break;
          }
        } catch (error) {
          request.log.warn({ err: error }, 'reading the event log for a stream failed');
        } finally {
          const queued = waiting ?? [];
          waiting = undefined;
          forward(queued);
        }
      };

      stream.write(`retry: ${RETRY_MS}\n: ${note ?? 'connected'}\n\n`);
      void catchUp();
      // The schema documents the stream as a string; Fastify sends a stream as it comes.
      return (
        (reply as FastifyReply)
          .header('content-type', 'text/event-stream; charset=utf-8')
          .header('cache-control', 'no-store')
          // nginx buffers proxied answers unless told not to (README, "Behind nginx").
          .header('x-accel-buffering', 'no')
          .send(stream)
      );
    },
  );
}
