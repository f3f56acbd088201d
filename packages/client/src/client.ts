/**
 * `PricepointClient`: one typed method per read endpoint of the API (DESIGN section 2), the key in
 * the `x-api-key` header only, retries that honour `Retry-After`, and typed errors. No dependencies:
 * the global `fetch`, or one the caller passes in.
 */
import { PricepointError, type Problem, toProblem } from './errors.js';
import { abortReason, backoffDelay, parseRetryAfter, sleep } from './retry.js';
import type {
  CallOptions,
  Catalogue,
  CsvReadOptions,
  DayAnswer,
  DayInput,
  JsonReadOptions,
  OneSeriesOptions,
  RateLimitInfo,
  ReadOptions,
  SeriesInfo,
  Usage,
} from './types.js';

/**
 * The part of a fetch `Response` the client reads; the global `Response` and undici's fit it.
 *
 * @example
 * const response: FetchResponseLike = await fetch('https://localhost:8443/healthz');
 */
export interface FetchResponseLike {
  readonly status: number;
  readonly statusText: string;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
}

/**
 * What the client passes to `fetch`: always a GET with plain headers.
 *
 * @example
 * const init: FetchInit = { method: 'GET', headers: { accept: 'application/json' } };
 */
export interface FetchInit {
  method: 'GET';
  headers: Record<string, string>;
  signal?: AbortSignal;
}

/**
 * A `fetch` the client can use: the global one, undici's, or a wrapper (a custom TLS agent, a proxy,
 * recording for tests).
 *
 * @example
 * import { Agent, fetch as undiciFetch } from 'undici';
 * const dispatcher = new Agent({ connect: { ca: myCaPem } });
 * const fetchWithCa: FetchLike = (url, init) => undiciFetch(url, { ...init, dispatcher });
 */
export type FetchLike = (url: string, init: FetchInit) => Promise<FetchResponseLike>;

/**
 * Told before every wait between two attempts: why, and how long the client will wait.
 *
 * @example
 * const onRetry = (event: RetryEvent) => console.warn(`retry ${event.retry} in ${event.delayMs} ms`, event.status);
 */
export interface RetryEvent {
  /** 1 for the first retry, 2 for the second, ... */
  retry: number;
  /** How long the client waits before it, in milliseconds. */
  delayMs: number;
  /** The status that caused it (429, 502, 503, 504); absent for a network error. */
  status?: number;
  /** The error that caused it: a `PricepointError` for an answer, the fetch error for a network failure. */
  error: unknown;
  /** The URL being fetched (it never holds the key). */
  url: string;
}

/**
 * How to build a client.
 *
 * @example
 * const options: PricepointClientOptions = { baseUrl: 'https://localhost:8443', apiKey: process.env.PRICEPOINT_KEY! };
 */
export interface PricepointClientOptions {
  /** The server's origin, optionally with a path prefix: `https://prices.example.com`. */
  baseUrl: string;
  /** The API key; sent only in the `x-api-key` header, never in a URL. */
  apiKey: string;
  /** The fetch to use; default the global `fetch`. */
  fetch?: FetchLike;
  /** How many times a request is retried after a 429, 502, 503, 504 or network error; default 3. */
  maxRetries?: number;
  /**
   * The longest single wait, in milliseconds; default 60000 (a minute window). A `Retry-After`
   * longer than this is not waited for: the error is thrown at once, with `retryAfterSeconds` set.
   */
  maxRetryDelayMs?: number;
  /** The first backoff step when the server gives no `Retry-After`, in milliseconds; default 500. */
  retryBaseDelayMs?: number;
  /** The `User-Agent` header; default `pricepoint-client/0.1.0`. */
  userAgent?: string;
  /** Called before every wait between two attempts (logging, metrics, tests). */
  onRetry?: (event: RetryEvent) => void;
}

const RETRIED_STATUSES = new Set([429, 502, 503, 504]);
const JSON_ACCEPT = 'application/json, application/problem+json;q=0.9';
const CSV_ACCEPT = 'text/csv, application/problem+json;q=0.9';

function headerInt(headers: FetchResponseLike['headers'], name: string): number | undefined {
  const value = headers.get(name);
  if (value === null || !/^\s*-?\d+\s*$/.test(value)) return undefined;
  return Number(value);
}

/**
 * A client for the Pricepoint API, version 1. Every method is a GET: it answers parsed JSON, or the
 * CSV text when called with `format: 'csv'`, and throws a `PricepointError` for an error answer.
 *
 * @example
 * import { PricepointClient } from '@pricepoint/client';
 * const client = new PricepointClient({ baseUrl: 'https://localhost:8443', apiKey: 'pp_demo_...' });
 * const { series } = await client.today({ symbols: ['NO1'], tz: 'Europe/Oslo' });
 * console.log(series[0]?.prices[0]?.price);
 */
export class PricepointClient {
  /** The rate-limit headers of the last answer that had them, error answers included. */
  lastRateLimit: RateLimitInfo | undefined;

  readonly #base: string;
  readonly #apiKey: string;
  readonly #fetch: FetchLike;
  readonly #maxRetries: number;
  readonly #maxRetryDelayMs: number;
  readonly #retryBaseDelayMs: number;
  readonly #userAgent: string;
  readonly #onRetry: ((event: RetryEvent) => void) | undefined;

  constructor(options: PricepointClientOptions) {
    if (typeof options.apiKey !== 'string' || options.apiKey.trim() === '') {
      throw new TypeError('PricepointClient: apiKey must be a non-empty string');
    }
    const base = new URL(options.baseUrl);
    if (base.protocol !== 'https:' && base.protocol !== 'http:') {
      throw new TypeError('PricepointClient: baseUrl must be an http(s) URL');
    }
    if (base.search !== '' || base.hash !== '') {
      throw new TypeError('PricepointClient: baseUrl must not have a query or fragment');
    }
    this.#base = `${base.origin}${base.pathname.replace(/\/+$/, '')}`;
    this.#apiKey = options.apiKey;
    const fetchImpl = options.fetch ?? (globalThis.fetch as FetchLike | undefined);
    if (fetchImpl === undefined) throw new TypeError('PricepointClient: no global fetch; pass options.fetch');
    this.#fetch = fetchImpl;
    this.#maxRetries = Math.max(0, Math.floor(options.maxRetries ?? 3));
    this.#maxRetryDelayMs = Math.max(0, options.maxRetryDelayMs ?? 60_000);
    this.#retryBaseDelayMs = Math.max(1, options.retryBaseDelayMs ?? 500);
    this.#userAgent = options.userAgent ?? 'pricepoint-client/0.1.0';
    this.#onRetry = options.onRetry;
  }

  /**
   * `GET /api/v1/prices/today`: today's prices of every series the key may read, or of `symbols`.
   *
   * @example
   * const { series } = await client.today({ symbols: ['NO1', 'DE-LU'], tz: 'Europe/Oslo' });
   * const csv = await client.today({ symbols: ['NO1'], format: 'csv' });
   */
  today(options: CsvReadOptions): Promise<string>;
  today(options?: JsonReadOptions): Promise<DayAnswer>;
  today(options: ReadOptions): Promise<DayAnswer | string>;
  today(options: ReadOptions = {}): Promise<DayAnswer | string> {
    return this.#read<DayAnswer>('/api/v1/prices/today', options);
  }

  /**
   * `GET /api/v1/prices/{date}`: one day, `YYYY-MM-DD` or `today`, `tomorrow`, `yesterday`.
   *
   * @example
   * const tomorrow = await client.day('tomorrow', { symbols: ['NO1'] });
   * const csv = await client.day('2026-11-20', { format: 'csv' });
   */
  day(date: DayInput, options: CsvReadOptions): Promise<string>;
  day(date: DayInput, options?: JsonReadOptions): Promise<DayAnswer>;
  day(date: DayInput, options: ReadOptions): Promise<DayAnswer | string>;
  day(date: DayInput, options: ReadOptions = {}): Promise<DayAnswer | string> {
    return this.#read<DayAnswer>(`/api/v1/prices/${encodeURIComponent(date)}`, options);
  }

  /**
   * `GET /api/v1/prices?from&to`: a range of days, both inclusive, at most 366. `series` holds one
   * entry per series per day, ordered by series, then date.
   *
   * @example
   * const week = await client.range('2026-11-16', '2026-11-22', { symbols: ['NO1'], resolution: 'P1D' });
   */
  range(from: DayInput, to: DayInput, options: CsvReadOptions): Promise<string>;
  range(from: DayInput, to: DayInput, options?: JsonReadOptions): Promise<DayAnswer>;
  range(from: DayInput, to: DayInput, options: ReadOptions): Promise<DayAnswer | string>;
  range(from: DayInput, to: DayInput, options: ReadOptions = {}): Promise<DayAnswer | string> {
    return this.#read<DayAnswer>('/api/v1/prices', options, { from, to });
  }

  /**
   * `GET /api/v1/prices/latest`: per series, the interval that contains now (or the last one
   * before it); each entry's `prices` holds 0 or 1 points.
   *
   * @example
   * const { series } = await client.latest({ symbols: ['BTC-USD'] });
   * console.log(series[0]?.prices[0]?.price);
   */
  latest(options: CsvReadOptions): Promise<string>;
  latest(options?: JsonReadOptions): Promise<DayAnswer>;
  latest(options: ReadOptions): Promise<DayAnswer | string>;
  latest(options: ReadOptions = {}): Promise<DayAnswer | string> {
    return this.#read<DayAnswer>('/api/v1/prices/latest', options);
  }

  /**
   * `GET /api/v1/series`: the catalogue of the series the key may read, with their coverage.
   *
   * @example
   * const { series } = await client.series();
   * const electricity = series.filter((s) => s.kind === 'electricity');
   */
  series(options: CsvReadOptions): Promise<string>;
  series(options?: JsonReadOptions): Promise<Catalogue>;
  series(options: ReadOptions): Promise<Catalogue | string>;
  series(options: ReadOptions = {}): Promise<Catalogue | string> {
    return this.#read<Catalogue>('/api/v1/series', options);
  }

  /**
   * `GET /api/v1/series/{symbol}`: one series' metadata and coverage (symbol in any letter case).
   *
   * @example
   * const info = await client.seriesInfo('no1');
   * console.log(info.timezone, info.coverage?.last);
   */
  seriesInfo(symbol: string, options: OneSeriesOptions & { format: 'csv' }): Promise<string>;
  seriesInfo(symbol: string, options?: OneSeriesOptions & { format?: 'json' }): Promise<SeriesInfo>;
  seriesInfo(symbol: string, options: OneSeriesOptions): Promise<SeriesInfo | string>;
  seriesInfo(symbol: string, options: OneSeriesOptions = {}): Promise<SeriesInfo | string> {
    return this.#read<SeriesInfo>(`/api/v1/series/${encodeURIComponent(symbol)}`, options);
  }

  /**
   * `GET /api/v1/usage`: the key's tier, its limits and what is left. Not counted against any limit.
   *
   * @example
   * const { tier, limits } = await client.usage();
   * console.log(tier, limits.map((l) => `${l.name}: ${l.remaining}/${l.limit}`));
   */
  async usage(options: CallOptions = {}): Promise<Usage> {
    const body = await this.#request('/api/v1/usage', new URLSearchParams(), JSON_ACCEPT, options.signal);
    return parseJson<Usage>(body);
  }

  async #read<T>(
    path: string,
    options: ReadOptions,
    first: Record<string, string> = {},
  ): Promise<T | string> {
    const query = new URLSearchParams(first);
    if (options.symbols !== undefined) query.set('symbols', options.symbols.join(','));
    if (options.tz !== undefined) query.set('tz', options.tz);
    if (options.resolution !== undefined) query.set('resolution', options.resolution);
    const csv = options.format === 'csv';
    if (csv) query.set('format', 'csv');
    const body = await this.#request(path, query, csv ? CSV_ACCEPT : JSON_ACCEPT, options.signal);
    return csv ? body.text : parseJson<T>(body);
  }

  /** One GET with retries; answers the 2xx body, throws a `PricepointError` for an error answer. */
  async #request(
    path: string,
    query: URLSearchParams,
    accept: string,
    signal: AbortSignal | undefined,
  ): Promise<{ text: string; status: number; requestId: string | undefined }> {
    const search = query.toString();
    const url = `${this.#base}${path}${search === '' ? '' : `?${search}`}`;
    const headers = { accept, 'x-api-key': this.#apiKey, 'user-agent': this.#userAgent };
    for (let retry = 0; ; retry++) {
      if (signal?.aborted) throw abortReason(signal);
      let response: FetchResponseLike;
      let text: string;
      try {
        response = await this.#fetch(url, { method: 'GET', headers, ...(signal && { signal }) });
        text = await response.text();
      } catch (error) {
        // A network failure: every call is an idempotent GET, so it is safe to send again.
        if (signal?.aborted || retry >= this.#maxRetries) throw error;
        await this.#wait(retry, this.#backoff(retry), undefined, error, url, signal);
        continue;
      }
      this.#recordRateLimit(response.headers);
      const requestId = response.headers.get('x-request-id') ?? undefined;
      if (response.status >= 200 && response.status < 300)
        return { text, status: response.status, requestId };

      const problem = toProblem(response.status, response.statusText, text);
      const retryAfter = parseRetryAfter(response.headers.get('retry-after'), Date.now());
      const error = new PricepointError(problem, {
        ...(requestId !== undefined && { requestId }),
        ...(retryAfter !== undefined && { retryAfterSeconds: retryAfter }),
      });
      if (!RETRIED_STATUSES.has(response.status) || retry >= this.#maxRetries) throw error;
      let delay: number;
      if (retryAfter !== undefined) {
        delay = retryAfter * 1000;
        // Waiting less than the server asked only earns another 429; waiting longer is not wanted.
        if (delay > this.#maxRetryDelayMs) throw error;
      } else {
        delay = this.#backoff(retry);
      }
      await this.#wait(retry, delay, response.status, error, url, signal);
    }
  }

  #backoff(retry: number): number {
    return backoffDelay(retry, this.#retryBaseDelayMs, this.#maxRetryDelayMs, Math.random);
  }

  async #wait(
    retry: number,
    delayMs: number,
    status: number | undefined,
    error: unknown,
    url: string,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    this.#onRetry?.({ retry: retry + 1, delayMs, ...(status !== undefined && { status }), error, url });
    await sleep(delayMs, signal);
  }

  #recordRateLimit(headers: FetchResponseLike['headers']): void {
    const limit = headerInt(headers, 'x-ratelimit-limit');
    const remaining = headerInt(headers, 'x-ratelimit-remaining');
    const reset = headerInt(headers, 'x-ratelimit-reset');
    if (limit === undefined || remaining === undefined || reset === undefined) return;
    const policy = headers.get('ratelimit-policy');
    this.lastRateLimit = { limit, remaining, reset, ...(policy !== null && { policy }) };
  }
}

/** Parses a 2xx JSON body; a body that is no JSON (a proxy's page) is an `internal` error, not a crash. */
function parseJson<T>(body: { text: string; status: number; requestId: string | undefined }): T {
  try {
    return JSON.parse(body.text) as T;
  } catch {
    const problem: Problem = {
      type: 'about:blank',
      title: 'Unreadable answer',
      status: body.status,
      code: 'internal',
      detail: `The answer is not JSON: ${body.text.trim().slice(0, 100)}`,
    };
    throw new PricepointError(problem, body.requestId === undefined ? {} : { requestId: body.requestId });
  }
}
