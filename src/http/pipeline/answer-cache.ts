/**
 * Finished answers of the day endpoints, kept as the bytes that go on the wire: each one
 * is serialised once per request key (`answerKey`: the URL, `Accept` and the tier) and compressed
 * once per encoding, so a repeated request costs a map lookup and a socket write. An entry is dropped when
 * a notice says one of its series changed, when the store's change token moves (another process
 * wrote to the SQLite file), at the first local midnight of its zones (today becomes yesterday)
 * and after the read cache's freshness (PostgreSQL, where a notice may be lost).
 *
 * Every URL a client can spell is a new key, so the cache is bounded in entries and in bytes, the
 * bytes counting the key and each entry's bookkeeping as well as its bodies; past either bound the
 * least recently served answers go first.
 */
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import Negotiator from 'negotiator';
import { boundedCache } from '../../cache/bounded-cache.js';

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/** The content codings offered, best first: Brotli is smaller, gzip is understood everywhere. */
export type Coding = 'br' | 'gzip';

/** What a finished answer is: its bytes, validators and lifetime. */
export interface AnswerContent {
  /** The strong ETag of the identity body; a compressed body's tag carries its coding. */
  readonly etag: string;
  readonly maxAge: number;
  readonly type: string;
  /** `Content-Disposition` of a CSV answer (answer.ts `csvAttachment`): the file name to save it as. */
  readonly disposition?: string;
  readonly body: Buffer;
  /** Series the answer holds; an answer with every series the tier reads also changes with a new series. */
  readonly tags: readonly string[];
  /** App-clock milliseconds after which the answer must be built again. */
  readonly validUntil: number;
  /** The route template, for metrics. */
  readonly route: string;
}

export interface CachedAnswer extends AnswerContent {
  /** Where it is kept in the cache; `undefined` for an answer that is not kept. */
  readonly key: string | undefined;
  /** Compressed bodies, once made. */
  readonly ready: Partial<Record<Coding, Buffer>>;
  /** Compressions under way or done, so each is made once. */
  readonly pending: Partial<Record<Coding, Promise<Buffer>>>;
}

/**
 * The cache key of a request's answer: the URL names the day and every parameter, `Accept` may
 * choose the format and the tier decides which series and days may be read. Neither a URL nor a
 * header value can hold a line feed, so the parts never run into each other.
 * @example answerKey('demo', undefined, '/api/v1/prices/today?symbols=NO1')
 */
export function answerKey(tier: string, accept: string | undefined, url: string): string {
  return `${url}\n${accept ?? ''}\n${tier}`;
}

export interface AnswerCacheOptions {
  /** Bytes of bodies (all codings) and keys kept at most. */
  readonly maxBytes: number;
  /** Answers kept at most (default 8,192): tiny answers would otherwise be many. */
  readonly maxEntries?: number;
  /** The store's change token; a new token drops every entry. */
  readonly token?: () => string;
}

const CODINGS: readonly string[] = ['br', 'gzip', 'identity'];
/**
 * The content coding to answer in for an `Accept-Encoding` header: Brotli, then gzip, else none.
 * @example preferredCoding('gzip, deflate, br') // 'br'
 */
export function preferredCoding(header: string | undefined): Coding | undefined {
  if (header === undefined || header === '') return undefined;
  // Ties in q go to the server's order (Brotli first); @types/negotiator lacks the option.
  const negotiator = new Negotiator({ headers: { 'accept-encoding': header } }) as unknown as {
    encoding(available: string[], options: { preferred: string[] }): string | undefined;
  };
  const best = negotiator.encoding([...CODINGS], { preferred: [...CODINGS] });
  return best === 'br' || best === 'gzip' ? best : undefined;
}

/** Bodies larger than this are compressed faster and a little less tightly. */
const LARGE_BODY_BYTES = 256 * 1024;

/** Bodies smaller than this are sent as they are: compressing them saves less than it costs. */
export const MIN_COMPRESS_BYTES = 1024;

/** What an entry holds besides its key and bodies (the answer, its validators, the cache's slot). */
const ENTRY_OVERHEAD_BYTES = 512;

export function createAnswerCache(options: AnswerCacheOptions) {
  // Weighed again on every `set`: an entry grows as its compressed bodies are made.
  const entries = boundedCache<string, CachedAnswer>({
    maxEntries: options.maxEntries ?? 8_192,
    maxWeight: options.maxBytes,
    weigh: (answer, key) => {
      const { br, gzip } = answer.ready;
      return (
        ENTRY_OVERHEAD_BYTES + key.length * 2 + answer.body.length + (br?.length ?? 0) + (gzip?.length ?? 0)
      );
    },
  });
  let token: string | undefined;
  // Clients send a handful of distinct Accept-Encoding values; each is negotiated once. `identity`
  // stands for "no coding", since a cache holds no undefined.
  const codings = boundedCache<string, Coding | 'identity'>({ maxEntries: 256 });

  /** Keeps `answer` under `key`, or keeps it again with its new size (a compressed body was added). */
  const put = (key: string, answer: CachedAnswer) => entries.set(key, answer);

  return {
    /** `preferredCoding(acceptEncoding)`, negotiated once per header value. */
    coding(acceptEncoding: string | undefined): Coding | undefined {
      if (acceptEncoding === undefined || acceptEncoding === '') return undefined;
      let coding = codings.get(acceptEncoding);
      if (coding === undefined) {
        coding = preferredCoding(acceptEncoding) ?? 'identity';
        codings.set(acceptEncoding, coding);
      }
      return coding === 'identity' ? undefined : coding;
    },
    /**
     * The cached answer for `key` while it is valid at `now`.
     * @example cache.get(answerKey('free', undefined, '/api/v1/prices/today'), clock())
     */
    get(key: string, now: number): CachedAnswer | undefined {
      if (options.token !== undefined) {
        let current: string | undefined;
        try {
          current = options.token();
        } catch {
          current = undefined; // the store cannot say: build again rather than trust old bytes
        }
        if (current !== token || current === undefined) {
          entries.clear();
          token = current;
        }
      }
      const hit = entries.get(key);
      if (hit === undefined) return undefined;
      if (now < hit.validUntil) return hit;
      entries.delete(key);
      return undefined;
    },

    /**
     * Makes `content` a cached answer, kept under `key` unless `key` is undefined, the answer is
     * already out of date or too large to keep.
     */
    keep(key: string | undefined, content: AnswerContent, now: number): CachedAnswer {
      const answer: CachedAnswer = { ...content, key, ready: {}, pending: {} };
      // A long range of many series would push out hundreds of days that are asked for more often.
      if (key === undefined || content.validUntil <= now || content.body.length > options.maxBytes / 16) {
        return { ...answer, key: undefined };
      }
      put(key, answer);
      return answer;
    },

    /**
     * The body in `coding`, compressed once and shared by every later request for it.
     * @example await cache.encoded(answer, 'br')
     */
    encoded(answer: CachedAnswer, coding: Coding): Promise<Buffer> {
      let body = answer.pending[coding];
      if (body === undefined) {
        body =
          coding === 'br'
            ? brotli(answer.body, {
                params: {
                  // Quality 9 is a tenth of 11's cost and within a few per cent of its size. A long
                  // range (a year of quarter hours is 3 MB) is built for each request: quality 5
                  // takes a quarter of 9's time for a body a quarter larger (22 against 82 ms).
                  [constants.BROTLI_PARAM_QUALITY]: answer.body.length > LARGE_BODY_BYTES ? 5 : 9,
                  [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
                  [constants.BROTLI_PARAM_SIZE_HINT]: answer.body.length,
                },
              })
            : gzipped(answer.body, { level: answer.body.length > LARGE_BODY_BYTES ? 6 : 9 });
        const pending = answer.pending as Record<Coding, Promise<Buffer>>;
        pending[coding] = body;
        body.then(
          (done) => {
            (answer.ready as Record<Coding, Buffer>)[coding] = done;
            const key = answer.key;
            if (key !== undefined && entries.peek(key) === answer) put(key, answer);
          },
          () => delete pending[coding],
        );
      }
      return body;
    },

    /** Drops every answer holding one of `symbols`, and every all-series answer. */
    forget(symbols: readonly string[]): void {
      const wanted = new Set([...symbols, '*']);
      entries.deleteWhere((entry) => entry.tags.some((t) => wanted.has(t)));
    },

    get size(): number {
      return entries.size;
    },

    /** Bytes of keys, bodies and bookkeeping kept now. */
    get bytes(): number {
      return entries.weight;
    },
  };
}

export type AnswerCache = ReturnType<typeof createAnswerCache>;
