/**
 * `client.events()`: the server's price events (`GET /api/v1/events`, docs/events.md) as an async
 * iterator. It reads the server-sent events as they come over the client's `fetch` (a streaming
 * `response.body`, as in Node 20 and browsers), reconnects with `Last-Event-ID` after a dropped or
 * silent connection, honours the server's `retry:` hint, backs off with jitter while the server
 * cannot be reached, and throws a `PricepointError` for an answer that retrying cannot change.
 * Breaking out of the loop or aborting the signal closes the connection and clears every timer.
 */
import { PricepointError, type Problem, toProblem } from './errors.js';
import { backoffDelay, parseRetryAfter, sleep } from './retry.js';
import type { FetchResponseLike, Transport } from './transport.js';
import type { PricepointEvent, PricepointEventType } from './types.js';

/**
 * How `client.events()` reads the stream.
 *
 * @example
 * const options: EventsOptions = { symbols: ['NO1'], signal: AbortSignal.timeout(3_600_000) };
 */
export interface EventsOptions {
  /** Only the events of these series (else every series the key may read). */
  symbols?: readonly string[];
  /**
   * Start after this event (sent as `Last-Event-ID`): the id of the last event you handled, so a
   * restarted program gets what it missed (within the server's 24 hours). Default: from now.
   */
  lastEventId?: string;
  /** Ends the loop (without an error) and closes the connection when it aborts. */
  signal?: AbortSignal;
  /**
   * Consecutive failed attempts to open the stream (network errors, 429, 502, 503, 504) after which
   * the last error is thrown; default unlimited. A stream that opened resets the count.
   */
  maxRetries?: number;
  /**
   * A connection that brings no byte (event or heartbeat) for this long is dropped and opened
   * again; default 60000 (the server sends a heartbeat every 15 s). `0` turns it off.
   */
  idleTimeoutMs?: number;
  /** Called each time a stream is open, with the `Last-Event-ID` it was opened with. */
  onOpen?: (info: { lastEventId: string | undefined }) => void;
  /** Called before each wait to reconnect: why, how long, and from which event it resumes. */
  onReconnect?: (event: ReconnectEvent) => void;
}

/**
 * Told before each wait to reconnect.
 *
 * @example
 * const onReconnect = (e: ReconnectEvent) => console.warn(`reconnecting in ${e.delayMs} ms after`, e.error);
 */
export interface ReconnectEvent {
  /** Failed attempts in a row before this wait: 0 after an open stream ended or dropped. */
  failures: number;
  /** How long the iterator waits, in milliseconds. */
  delayMs: number;
  /** Why: the network error, the `PricepointError` of a 429/502/503/504, or none when the server ended the stream. */
  error?: unknown;
  /** The `Last-Event-ID` the next attempt sends. */
  lastEventId: string | undefined;
}

/** The wait before the first `retry:` hint arrives; the server sends one first thing (5 s). */
const DEFAULT_RETRY_MS = 3_000;
const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
const RETRIED_STATUSES = new Set([429, 502, 503, 504]);
const EVENT_TYPES: ReadonlySet<string> = new Set<PricepointEventType>(['day.published', 'day.revised']);

/** One dispatched server-sent event. */
export interface SseMessage {
  /** The `event:` field, `message` when none. */
  type: string;
  data: string;
  /** The last `id:` seen so far in this stream (it carries over events without one). */
  lastEventId: string;
}

/**
 * A parser of `text/event-stream` as the HTML standard defines it ("Parsing an event stream"): lines
 * end in CRLF, LF or CR, even when a chunk ends between CR and LF; `data:` lines join with LF; a line
 * starting with `:` is a comment (the server's heartbeats); `retry:` takes digits only; an `id:` with
 * NUL is ignored. Feed it decoded text in chunks of any size.
 *
 * @example
 * const parser = new SseParser();
 * parser.feed('id: 1\ndata: {"a":\ndata: 1}\n\n'); // [{ type: 'message', data: '{"a":\n1}', lastEventId: '1' }]
 */
export class SseParser {
  /** The last `retry:` value, in milliseconds; undefined until one came. */
  retryMs: number | undefined;
  #buffer = '';
  #data: string[] = [];
  #type = '';
  #lastEventId = '';

  constructor(lastEventId = '') {
    this.#lastEventId = lastEventId;
  }

  /** Takes the next piece of the stream; answers the events it completed. */
  feed(text: string): SseMessage[] {
    const out: SseMessage[] = [];
    const buffer = this.#buffer + text;
    let start = 0;
    for (;;) {
      let end = -1;
      for (let i = start; i < buffer.length; i++) {
        const c = buffer.charCodeAt(i);
        if (c === 10 || c === 13) {
          end = i;
          break;
        }
      }
      if (end < 0) break;
      let next = end + 1;
      if (buffer.charCodeAt(end) === 13) {
        // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
        if (next === buffer.length) break;
        if (buffer.charCodeAt(next) === 10) next += 1;
      }
      this.#line(buffer.slice(start, end), out);
      start = next;
    }
    this.#buffer = buffer.slice(start);
    return out;
  }

  #line(line: string, out: SseMessage[]): void {
    if (line === '') {
      this.#dispatch(out);
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.#data.push(value);
        break;
      case 'event':
        this.#type = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.#lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        break; // other fields are ignored, as the standard says
    }
  }

  #dispatch(out: SseMessage[]): void {
    const data = this.#data;
    const type = this.#type;
    this.#data = [];
    this.#type = '';
    if (data.length === 0) return;
    out.push({ type: type === '' ? 'message' : type, data: data.join('\n'), lastEventId: this.#lastEventId });
  }
}

/** The price event in a message, or undefined for anything else (a type this client does not know). */
function priceEvent(message: SseMessage): PricepointEvent | undefined {
  if (!EVENT_TYPES.has(message.type)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(message.data);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const event = parsed as Partial<PricepointEvent>;
  if (typeof event.id !== 'string' || event.type !== message.type || typeof event.data !== 'object') {
    return undefined;
  }
  return event as PricepointEvent;
}

/** The error answer of an attempt, as the other calls throw it. */
async function answerError(response: FetchResponseLike): Promise<PricepointError> {
  let text = '';
  try {
    text = await response.text();
  } catch {
    // the body broke off: the status says enough
  }
  const problem = toProblem(response.status, response.statusText, text);
  const requestId = response.headers.get('x-request-id') ?? undefined;
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'), Date.now());
  return new PricepointError(problem, {
    ...(requestId !== undefined && { requestId }),
    ...(retryAfter !== undefined && { retryAfterSeconds: retryAfter }),
  });
}

/** A 200 that is no event stream (a proxy's page): retrying would only get it again. */
function notAStream(response: FetchResponseLike, why: string): PricepointError {
  const problem: Problem = {
    type: 'about:blank',
    title: 'Not an event stream',
    status: response.status,
    code: 'internal',
    detail: why,
  };
  const requestId = response.headers.get('x-request-id') ?? undefined;
  return new PricepointError(problem, requestId === undefined ? {} : { requestId });
}

class IdleTimeout extends Error {
  override readonly name = 'IdleTimeout';
}

/**
 * The iterator behind `client.events()`: one connection at a time; each ends by the server, a
 * network error or the idle timeout, and the next one resumes from the last event received.
 */
export async function* streamEvents(
  transport: Transport,
  options: EventsOptions = {},
): AsyncGenerator<PricepointEvent, void, undefined> {
  const { signal } = options;
  const policy = transport.retryPolicy;
  const maxRetries = options.maxRetries ?? Number.POSITIVE_INFINITY;
  const idleTimeoutMs = Math.max(0, options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS);
  const query = new URLSearchParams();
  if (options.symbols !== undefined) query.set('symbols', options.symbols.join(','));
  let lastEventId = options.lastEventId === '' ? undefined : options.lastEventId;
  let retryMs = DEFAULT_RETRY_MS;
  let failures = 0;

  // `stop` ends everything: the caller's signal, or the caller leaving the loop (the `finally`).
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  if (signal?.aborted) return;
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      const connection = new AbortController();
      const cut = () => connection.abort();
      stop.signal.addEventListener('abort', cut, { once: true });
      let idle: ReturnType<typeof setTimeout> | undefined;
      const arm = () => {
        if (idleTimeoutMs === 0) return;
        clearTimeout(idle);
        idle = setTimeout(
          () => connection.abort(new IdleTimeout(`no byte for ${idleTimeoutMs} ms`)),
          idleTimeoutMs,
        );
      };
      let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
      let error: unknown;
      let retryAfterMs: number | undefined;
      try {
        const headers: Record<string, string> = {
          accept: 'text/event-stream, application/problem+json;q=0.9',
          ...(lastEventId !== undefined && { 'last-event-id': lastEventId }),
        };
        arm();
        const response = await transport.open('/api/v1/events', query, headers, connection.signal);
        if (response.status < 200 || response.status >= 300) {
          const answer = await answerError(response);
          if (!RETRIED_STATUSES.has(response.status)) throw answer;
          error = answer;
          if (answer.retryAfterSeconds !== undefined) retryAfterMs = answer.retryAfterSeconds * 1000;
        } else {
          const type = response.headers.get('content-type') ?? '';
          if (!/^text\/event-stream\b/i.test(type)) {
            throw notAStream(response, `The answer is ${type || 'untyped'}, not text/event-stream.`);
          }
          const body = (response as { body?: ReadableStream<Uint8Array> | null }).body;
          if (body === undefined || body === null) {
            throw notAStream(response, 'The fetch in use gives no streaming response body.');
          }
          reader = body.getReader();
          failures = 0;
          options.onOpen?.({ lastEventId });
          const parser = new SseParser(lastEventId ?? '');
          const decoder = new TextDecoder();
          arm();
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            arm();
            const messages = parser.feed(decoder.decode(value, { stream: true }));
            if (parser.retryMs !== undefined) retryMs = parser.retryMs;
            for (const message of messages) {
              lastEventId = message.lastEventId === '' ? undefined : message.lastEventId;
              const event = priceEvent(message);
              if (event === undefined) continue;
              // The caller's time with an event is not the server's silence.
              clearTimeout(idle);
              yield event;
              arm();
            }
          }
        }
      } catch (thrown) {
        if (stop.signal.aborted) return;
        if (thrown instanceof PricepointError) throw thrown;
        // Whatever the fetch in use makes of an abort, say why the connection was dropped.
        const reason: unknown = connection.signal.reason;
        error = reason instanceof IdleTimeout ? reason : thrown;
      } finally {
        clearTimeout(idle);
        stop.signal.removeEventListener('abort', cut);
        connection.abort();
        reader?.cancel().catch(() => {});
      }
      if (stop.signal.aborted) return;

      // An open stream that ended or broke off: wait the server's hint. Attempts that failed in a
      // row: the hint plus exponential backoff with full jitter, bounded by `maxRetryDelayMs`.
      const opened = reader !== undefined;
      if (!opened) {
        failures += 1;
        if (failures > maxRetries) throw error;
      }
      const jitter = backoffDelay(
        opened ? 0 : failures - 1,
        policy.baseDelayMs,
        policy.maxDelayMs,
        Math.random,
      );
      const delayMs = Math.max(retryMs + jitter, retryAfterMs ?? 0);
      options.onReconnect?.({
        failures: opened ? 0 : failures,
        delayMs,
        ...(error !== undefined && { error }),
        lastEventId,
      });
      try {
        await sleep(delayMs, stop.signal);
      } catch {
        return;
      }
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    stop.abort();
  }
}
