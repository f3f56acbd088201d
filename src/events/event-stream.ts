/**
 * One client's event stream, as server-sent-event text (docs/events.md, "What a stream may hold").
 *
 * A Readable that makes its text only when its reader asks for more: it reads the event log from
 * its own cursor a page at a time while it catches up, then takes the hub's pages of new events.
 * When the reader stops taking text (the client does not read, its socket is full), the stream
 * stops: it neither reads the log nor keeps the hub's pages, only its cursor, and reads on from the
 * log once the reader asks again. So a stream holds at most its queue (`STREAM_QUEUE_BYTES`) and a
 * chunk, however large the backlog and whatever its client does, and a slow reader still gets every
 * event in order. A client that stops reading altogether is closed by the connection's idle
 * deadline (src/http/transport/connections.ts) and resumes with `Last-Event-ID`.
 */
import { Readable } from 'node:stream';
import type { EventLog, PriceEvent } from '../stores/event-types.js';
import type { EventHub } from './event-hub.js';

/** Bytes of text a stream queues before its reader takes them (its `highWaterMark`). */
export const STREAM_QUEUE_BYTES = 16 * 1024;
/**
 * The most one stream holds that its client has not taken (docs/events.md): its queue and a chunk,
 * and what its socket holds before it takes no more (Node's 16 KiB and a chunk).
 */
export const STREAM_UNSENT_BOUND = 64 * 1024;
/** Events are pushed in chunks of about this many bytes: one write (one HTTP chunk) each. */
const CHUNK_BYTES = 4 * 1024;
/** Events read from the log per query while a stream catches up: about a queue's worth. */
const CATCH_UP_PAGE = 64;
/**
 * The most text one connection sends from the log (docs/events.md, "Catching up"): past it the
 * stream ends with a short `retry:` and the client resumes with `Last-Event-ID` on a new one. A
 * client that never reads thus costs the server at most this much text and a closed answer, however
 * much its kernel's socket buffers would take (megabytes on loopback); one that reads catches up in
 * a few connections.
 */
export const CATCH_UP_BYTES = 512 * 1024;
/** The wait before the next connection of a stream that ended at `CATCH_UP_BYTES`. */
export const CATCH_UP_RETRY_MS = 100;

export interface EventStreamSource {
  readonly log: EventLog;
  readonly hub: EventHub;
  /** The seq of the last event the client has: the stream sends the events after it. */
  readonly after: number;
  /** Whether the client asked for this event (`symbols=`). */
  readonly wants: (event: PriceEvent) => boolean;
  /** The first text: the `retry:` hint and a comment. */
  readonly greeting: string;
  readonly heartbeatMs: number;
  /** Told when reading the log fails; the stream then ends with a hint to reconnect. */
  readonly onError: (error: unknown) => void;
}

/** One event as the stream sends it: its id, its type, and the whole event as JSON data. */
export function eventFrame(event: PriceEvent): string {
  const { seq: _seq, ...body } = event;
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(body)}\n\n`;
}

export class EventStream extends Readable {
  readonly #source: EventStreamSource;
  /** The seq of the last event passed (sent, or skipped as not wanted). */
  #cursor: number;
  /** Every event up to the hub's position has been passed: the hub's next page follows on. */
  #live = false;
  /** The reader asked for more and the queue has not filled since. */
  #room = false;
  /** Text sent from the log on this connection (`CATCH_UP_BYTES`). */
  #caughtUp = 0;
  #reading = false;
  #closing = false;
  #unsubscribe: (() => void) | undefined;
  #heartbeat: NodeJS.Timeout | undefined;

  /** A stream subscribed to the hub, with its greeting queued. */
  static async open(source: EventStreamSource): Promise<EventStream> {
    const stream = new EventStream(source);
    try {
      stream.#unsubscribe = await source.hub.subscribe(stream.#receive);
    } catch (error) {
      stream.destroy();
      throw error;
    }
    stream.#room = stream.push(source.greeting);
    stream.#heartbeat = setInterval(() => {
      // A heartbeat only keeps a quiet connection open; one whose client does not read needs none.
      if (stream.#room && !stream.#closing) stream.#room = stream.push(': heartbeat\n\n');
    }, source.heartbeatMs);
    void stream.#fill();
    return stream;
  }

  private constructor(source: EventStreamSource) {
    super({ highWaterMark: STREAM_QUEUE_BYTES });
    this.#source = source;
    this.#cursor = source.after;
  }

  /** Ends the stream after `text` (a `retry:` hint and why), once its reader has taken what it holds. */
  finish(text: string): void {
    if (this.#closing || this.destroyed) return;
    this.#stop();
    this.push(text);
    this.push(null);
  }

  override _read(): void {
    this.#room = true;
    if (!this.#live) void this.#fill();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#stop();
    callback(error);
  }

  #stop(): void {
    this.#closing = true;
    clearInterval(this.#heartbeat);
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }

  /** A page of new events from the hub: passed on while the reader takes them, else left to the log. */
  readonly #receive = (page: readonly PriceEvent[]): void => {
    if (!this.#live) return;
    if (!this.#room || !this.#pass(page)) this.#live = false;
  };

  /** Reads the log from the cursor while the reader has room, until it has caught up with the hub. */
  async #fill(): Promise<void> {
    if (this.#reading || this.#unsubscribe === undefined) return;
    this.#reading = true;
    try {
      while (this.#room && !this.#live && !this.#closing) {
        if (this.#caughtUp >= CATCH_UP_BYTES) {
          this.finish(`retry: ${CATCH_UP_RETRY_MS}\n: more to catch up; reconnect with Last-Event-ID\n\n`);
          return;
        }
        const page = await this.#source.log.after(this.#cursor, CATCH_UP_PAGE);
        if (this.#closing) return;
        // A short page reached the end of the log; the hub may have handed out more meanwhile.
        const whole = this.#pass(page, true);
        if (whole && page.length < CATCH_UP_PAGE && this.#source.hub.position <= this.#cursor) {
          this.#live = true;
        }
      }
    } catch (error) {
      this.#source.onError(error);
      this.finish(`: reading the event log failed; reconnect with Last-Event-ID\n\n`);
    } finally {
      this.#reading = false;
    }
  }

  /**
   * Pushes the events of `page` after the cursor in chunks until the queue is full; returns whether
   * every event was passed (those left are read from the log again when the reader asks).
   */
  #pass(page: readonly PriceEvent[], fromLog = false): boolean {
    if (this.#closing) return false;
    const push = (text: string) => {
      if (fromLog) this.#caughtUp += text.length;
      return this.push(text);
    };
    let chunk = '';
    let through = this.#cursor;
    for (let i = 0; i < page.length; i++) {
      const event = page[i]!;
      if (event.seq <= through) continue;
      if (this.#source.wants(event)) chunk += eventFrame(event);
      through = event.seq;
      if (chunk.length >= CHUNK_BYTES) {
        this.#cursor = through;
        this.#room = push(chunk);
        chunk = '';
        if (!this.#room) return i === page.length - 1;
      }
    }
    this.#cursor = through;
    if (chunk !== '') this.#room = push(chunk);
    return true;
  }
}
