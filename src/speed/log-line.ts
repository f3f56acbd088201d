/**
 * The one log line per request (the pipeline's record step, src/http/pipeline/record.ts): the line
 * `plainLineWriter` has pino write for `log.child({ reqId }).info(fields, 'request')`, written here
 * by hand and handed to pino's own destination, through pino's exported but internal symbols. pino's general
 * serialiser walks the object and checks every value, a large share of a cached answer's cost
 * (bench/README.md). The line is made as one template string, or, where the
 * destination takes bytes in place (log-destination.ts), written straight into its buffer. Where
 * pino is set up in a way this does not copy (its own time or message key, a mixin, a multistream),
 * the line goes through pino itself.
 */
import type { FastifyBaseLogger } from 'fastify';
import { type Logger, stdTimeFunctions, symbols } from 'pino';
import { type BoundedCache, boundedCache } from '../cache/bounded-cache.js';
import { type LineWriter, plainLineWriter, type RequestLine } from '../http/pipeline/record.js';

interface Destination {
  write(line: string): unknown;
  /** Writes a line in place, as bytes (log-destination.ts); `false` to have it written as text. */
  writeBytes?<T>(most: number, fill: (line: T, into: Uint8Array, at: number) => number, line: T): boolean;
}

/**
 * A writer of request lines for `log`, as `log.child({ reqId }).info({ ...rest }, 'request')` would
 * write them.
 * @example const write = requestLineWriter(app.log); write({ reqId, method: 'GET', ... })
 */
export function requestLineWriter(
  log: FastifyBaseLogger,
  idBytes: (id: string) => Uint8Array | undefined = () => undefined,
): LineWriter {
  // Fastify's logger is a pino logger unless one of another kind was passed in.
  const pinoLog = log as unknown as Partial<Logger>;
  const internals = log as unknown as Record<symbol, unknown>;
  const stream = internals[symbols.streamSym] as Destination | undefined;
  const bindings = internals[symbols.chindingsSym];
  const info = pinoLog.levels?.values.info;
  const enabled = pinoLog.isLevelEnabled?.bind(log);
  const viaPino = plainLineWriter(log);
  if (
    stream === undefined ||
    typeof stream.write !== 'function' ||
    typeof bindings !== 'string' ||
    info === undefined ||
    enabled === undefined ||
    internals[symbols.messageKeySym] !== 'msg' ||
    internals[symbols.timeSym] !== stdTimeFunctions.epochTime ||
    internals[symbols.mixinSym] !== undefined ||
    (stream as unknown as Record<symbol, unknown>)[symbols.needsMetadataGsym] === true
  ) {
    return viaPino;
  }
  const head = `{"level":${info},"time":`;
  const asText = (line: RequestLine) =>
    `${head}${epochText(Date.now())}${bindings},"reqId":${quoted(line.reqId)},"method":${quoted(line.method)},` +
    `"url":${quoted(line.url)},"status":${line.status},"latencyMs":${hundredths(line.latencyMs)},` +
    `"keyId":${quotedOrNull(line.keyId)},"tier":${quotedOrNull(line.tier)},"ip":${quoted(line.ip)},` +
    `"msg":"request"}\n`;
  const inPlace = stream.writeBytes?.bind(stream);
  if (inPlace === undefined || !PLAIN.test(bindings)) {
    return (line) => {
      if (enabled('info')) stream.write(asText(line));
    };
  }
  const { mostBytes, encode } = lineEncoder(head, bindings, idBytes);
  return (line) => {
    if (!enabled('info')) return;
    if (!inPlace(mostBytes(line), encode, line)) stream.write(asText(line));
  };
}

/** Printable ASCII: text that JSON writes as it is, one byte a character. */
const PLAIN = /^[\x20-\x7e]*$/;

/** `text` as bytes, one a character: for printable ASCII. */
const ascii = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));

/** The part of a line about a request, and its status. */
interface RequestPart {
  readonly status: number;
  readonly bytes: Uint8Array;
}

/** The part of a line about a caller, and whom it was written for. */
interface CallerPart {
  readonly tier: string | null;
  readonly ip: string;
  readonly bytes: Uint8Array;
}

/**
 * `cache` with the entry found or set last kept in front of it: a client's next line mostly repeats
 * the URL and the key of its last, and a key compared costs far less than a key hashed (a URL is a
 * new string on every request, and hashing it to look it up costs more than comparing). The entry in
 * front is the one `cache` held or was given for that key, so it is right even once `cache` lets it go.
 */
function lastInFront<V extends {}>(cache: BoundedCache<string, V>) {
  let lastKey: string | undefined;
  let lastValue: V | undefined;
  return {
    get(key: string): V | undefined {
      if (key !== lastKey) {
        lastValue = cache.get(key);
        lastKey = lastValue === undefined ? undefined : key;
      }
      return lastValue;
    },
    set(key: string, value: V): void {
      lastKey = key;
      lastValue = value;
      cache.set(key, value);
    },
  };
}

/**
 * Writes a request line straight into the log's buffer, byte for byte as `asText` writes it, where
 * every text is printable ASCII other than `"` and `\\` and every number is one the text writers
 * below take their own way (a request's line nearly always): no string is built, joined or encoded
 * for it. Anything else declines (-1), and the line is written as text. `head` and `bindings` are
 * printable ASCII.
 *
 * A client asks the same URL with the same key from the same address again and again, so the part
 * from the method to the latency's name is kept by URL (with its status), and the part from the key
 * to the end by key; the line's start is kept with the second of its time. A line is then mostly
 * copied, and only its milliseconds and latency are written afresh; the id is copied from the
 * bytes it was made in, when it is the one made last (`idBytes`, request-id.ts `lastBytes`). A character loop in
 * JavaScript costs far more a byte than a copy (bench/README.md).
 */
function lineEncoder(head: string, bindings: string, idBytes: (id: string) => Uint8Array | undefined) {
  const start = ascii(head);
  const middle = ascii(`${bindings},"reqId":"`);
  // Bounded, as everything requests choose (a URL is the client's): the rest is written afresh.
  const requests = lastInFront(
    boundedCache<string, RequestPart>({
      maxEntries: 1024,
      maxWeight: 256 * 1024,
      weigh: (part) => part.bytes.length,
    }),
  );
  const callers = lastInFront(boundedCache<string, CallerPart>({ maxEntries: 1024 }));
  /** The second of the last time written, and the line's start up to it. */
  let second = -1;
  let startToSecond = start;

  /** As `epochText` after the line's start; -1 where that takes `String`'s way. */
  function putTime(into: Uint8Array, at: number, ms: number): number {
    if (!(ms >= 1_000_000 && ms <= Number.MAX_SAFE_INTEGER && Number.isInteger(ms))) return -1;
    const s = Math.floor(ms / 1000);
    if (s !== second) {
      second = s;
      startToSecond = ascii(`${head}${s}`);
    }
    const i = put(into, at, startToSecond);
    const milli = ms - s * 1000;
    const tens = Math.floor(milli / 10);
    into[i] = 0x30 + Math.floor(milli / 100);
    into[i + 1] = 0x30 + (tens % 10);
    into[i + 2] = 0x30 + milli - tens * 10;
    return i + 3;
  }

  /** `","method":"GET","url":"…","status":200,"latencyMs":`, kept by URL for a GET. */
  function putRequest(into: Uint8Array, at: number, method: string, url: string, status: number): number {
    const kept = method === 'GET' ? requests.get(url) : undefined;
    if (kept !== undefined && kept.status === status) return put(into, at, kept.bytes);
    let i = putPlain(into, put(into, at, METHOD), method);
    if (i < 0) return -1;
    i = putPlain(into, put(into, i, URL_PART), url);
    if (i < 0) return -1;
    i = putCount(into, put(into, i, STATUS), status);
    if (i < 0) return -1;
    i = put(into, i, LATENCY);
    if (method === 'GET') requests.set(url, { status, bytes: copied(into, at, i) });
    return i;
  }

  /** `,"keyId":"…","tier":"…","ip":"…","msg":"request"}\n`, kept by key. */
  function putCaller(into: Uint8Array, at: number, keyId: string | null, tier: string | null, ip: string) {
    const kept = keyId === null ? undefined : callers.get(keyId);
    if (kept !== undefined && kept.tier === tier && kept.ip === ip) return put(into, at, kept.bytes);
    let i = putTextOrNull(into, put(into, at, KEY), keyId);
    if (i < 0) return -1;
    i = putTextOrNull(into, put(into, i, TIER), tier);
    if (i < 0) return -1;
    i = putPlain(into, put(into, i, IP), ip);
    if (i < 0) return -1;
    i = put(into, i, END);
    if (keyId !== null) callers.set(keyId, { tier, ip, bytes: copied(into, at, i) });
    return i;
  }

  // The fixed parts, and room for the numbers: a time of up to 16 digits, a status of up to 10 and
  // a latency of up to 13; every character of the texts takes one byte.
  const fixed = [start, middle, METHOD, URL_PART, STATUS, LATENCY, KEY, TIER, IP, END, NULL, NULL];
  const room = fixed.reduce((sum, bytes) => sum + bytes.length, 0) + 16 + 10 + 13;
  /** Bytes `line` takes at most when written in place. */
  const mostBytes = (line: RequestLine): number =>
    room +
    line.reqId.length +
    line.method.length +
    line.url.length +
    (line.keyId?.length ?? 0) +
    (line.tier?.length ?? 0) +
    line.ip.length;

  const encode = (line: RequestLine, into: Uint8Array, at: number): number => {
    let i = putTime(into, at, Date.now());
    if (i < 0) return -1;
    const id = idBytes(line.reqId);
    i = put(into, i, middle);
    i = id === undefined ? putPlain(into, i, line.reqId) : put(into, i, id);
    if (i < 0) return -1;
    i = putRequest(into, i, line.method, line.url, line.status);
    if (i < 0) return -1;
    i = putHundredths(into, i, line.latencyMs);
    if (i < 0) return -1;
    return putCaller(into, i, line.keyId, line.tier, line.ip);
  };
  return { mostBytes, encode };
}

// The parts between the texts, with the quotes around them where a text is always a string.
const METHOD = ascii('","method":"');
const URL_PART = ascii('","url":"');
const STATUS = ascii('","status":');
const LATENCY = ascii(',"latencyMs":');
const KEY = ascii(',"keyId":');
const TIER = ascii(',"tier":');
const IP = ascii(',"ip":"');
const END = ascii('","msg":"request"}\n');
/** A key or tier that is not there; its room also covers the quotes of one that is. */
const NULL = ascii('null');
const QUOTE = 0x22;

/** A copy of `into` from `start` to `end` (a Buffer's `slice` would be a view of it). */
const copied = (into: Uint8Array, start: number, end: number) => new Uint8Array(into.subarray(start, end));

/** Copies `bytes` to `into` at `at`, a copy being far cheaper than a loop over them. */
function put(into: Uint8Array, at: number, bytes: Uint8Array): number {
  into.set(bytes, at);
  return at + bytes.length;
}

/** `text` (without quotes), or -1 for a text with a character JSON escapes or one past ASCII. */
function putPlain(into: Uint8Array, at: number, text: string): number {
  let i = at;
  for (let k = 0; k < text.length; k++) {
    const c = text.charCodeAt(k);
    if (c < 0x20 || c === 0x22 || c === 0x5c || c > 0x7e) return -1;
    into[i++] = c;
  }
  return i;
}

/** `text` and a closing quote, as `putPlain`. */
function putText(into: Uint8Array, at: number, text: string): number {
  const i = putPlain(into, at, text);
  if (i < 0) return -1;
  into[i] = QUOTE;
  return i + 1;
}

/** `"text"` or `null`, as `putPlain`. */
function putTextOrNull(into: Uint8Array, at: number, text: string | null): number {
  if (text === null) return put(into, at, NULL);
  into[at] = QUOTE;
  return putText(into, at + 1, text);
}

/** The digits of a whole number from 0 to 2^31 - 1, or -1 for any other number. */
function putCount(into: Uint8Array, at: number, n: number): number {
  if (!(n >= 0 && n <= 0x7fffffff && n === Math.floor(n))) return -1;
  let end = at + 1;
  for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) end++;
  let rest = n;
  for (let i = end - 1; i >= at; i--) {
    const next = Math.floor(rest / 10);
    into[i] = 0x30 + rest - next * 10;
    rest = next;
  }
  return end;
}

/** As `hundredths`; -1 where that takes `String`'s way. */
function putHundredths(into: Uint8Array, at: number, value: number): number {
  const n = Math.round(value * 100);
  if (n < 0 || n > 0x7fffffff || n / 100 !== value) return -1;
  const fraction = n % 100;
  let i = putCount(into, at, (n - fraction) / 100);
  if (fraction === 0) return i;
  const tenths = Math.floor(fraction / 10);
  into[i++] = 0x2e;
  into[i++] = 0x30 + tenths;
  if (fraction !== tenths * 10) into[i++] = 0x30 + fraction - tenths * 10;
  return i;
}

/**
 * `JSON.stringify(value)` of a string, in a loop over its characters where none needs escaping.
 * A call of `JSON.stringify` costs ten times the loop over a request's URL or id.
 * @example quoted('/api/v1/prices/today') // '"/api/v1/prices/today"'
 */
export function quoted(value: string): string {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    // Control characters, `"` and `\\` are escaped, and so is a lone surrogate: the slow way.
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(value);
  }
  return `"${value}"`;
}

/** `.01` to `.99` by hundredths, without trailing zeros; none for whole numbers. */
const FRACTIONS = Array.from({ length: 100 }, (_, i) =>
  i === 0 ? '' : `.${String(i).padStart(2, '0').replace(/0$/, '')}`,
);

/**
 * `String(value)` of a number of milliseconds rounded to hundredths, built from whole numbers: a
 * double's shortest text costs V8 more than the rest of the line's numbers together. Anything else
 * (not a whole number of hundredths, or too large to be one exactly) takes `String`.
 * @example hundredths(0.42) // '0.42'
 */
export function hundredths(value: number): string {
  const n = Math.round(value * 100);
  if (n < 0 || n > 0x7fffffff || n / 100 !== value) return String(value);
  const fraction = n % 100;
  return `${(n - fraction) / 100}${FRACTIONS[fraction]}`;
}

/**
 * `String(ms)` of a time in epoch milliseconds, built from two whole numbers V8 holds as small
 * integers: a number past 2^31 takes its slow path for doubles.
 * @example epochText(1764028800123) // '1764028800123'
 */
export function epochText(ms: number): string {
  if (!(ms >= 1_000_000 && ms <= Number.MAX_SAFE_INTEGER && Number.isInteger(ms))) return String(ms);
  const high = Math.floor(ms / 1_000_000);
  return `${high}${String(ms - high * 1_000_000 + 1_000_000).slice(1)}`;
}

const quotedOrNull = (value: string | null): string => (value === null ? 'null' : quoted(value));
