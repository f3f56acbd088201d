/**
 * How `PricepointClient` talks HTTP: one request at a time through the given `fetch`, the key in the
 * `x-api-key` header only, retries that honour `Retry-After` (README "Retries"), the rate-limit
 * headers of the last answer, and every error answer turned into a `PricepointError`.
 */
import { PricepointError, type Problem, toProblem } from './errors.js';
import { abortReason, backoffDelay, parseRetryAfter, sleep } from './retry.js';
import type { RateLimitInfo } from './types.js';

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
 * What the client passes to `fetch`: a method, plain headers, and for a write a string body.
 *
 * @example
 * const init: FetchInit = { method: 'GET', headers: { accept: 'application/json' } };
 */
export interface FetchInit {
  method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  headers: Record<string, string>;
  body?: string;
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
  /**
   * How many times a request is retried after a 429, 502, 503, 504 or network error; default 3.
   * `createKey` and `rotateKey` are not idempotent: they are retried after a 429 only.
   */
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
/** The statuses after which a non-idempotent call is sent again: the server did nothing. */
const RETRIED_UNSAFE = new Set([429]);
export const JSON_ACCEPT = 'application/json, application/problem+json;q=0.9';
export const CSV_ACCEPT = 'text/csv, application/problem+json;q=0.9';

function headerInt(headers: FetchResponseLike['headers'], name: string): number | undefined {
  const value = headers.get(name);
  if (value === null || !/^\s*-?\d+\s*$/.test(value)) return undefined;
  return Number(value);
}

/**
 * The HTTP side of a `PricepointClient`: built from its options, which it checks.
 *
 * @example
 * const transport = new Transport({ baseUrl: 'https://localhost:8443', apiKey: 'pp_demo_...' });
 * const usage = await transport.json('GET', '/api/v1/usage', undefined, undefined);
 */
export class Transport {
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

  /** One JSON request with a JSON (or no) body; answers the parsed 2xx body. */
  async json<T>(
    method: FetchInit['method'],
    path: string,
    body: string | undefined,
    signal: AbortSignal | undefined,
    idempotent = true,
  ): Promise<T> {
    const request = { method, query: new URLSearchParams(), accept: JSON_ACCEPT, body, idempotent };
    return parseJson<T>(await this.request(path, request, signal));
  }

  /**
   * One request with retries; answers the 2xx body, throws a `PricepointError` for an error answer.
   * A call that is not idempotent is sent again only after a 429, which says nothing was done: after
   * a 502, 503, 504 or a network failure the server may have done it.
   */
  async request(
    path: string,
    request: OneRequest,
    signal: AbortSignal | undefined,
  ): Promise<{ text: string; status: number; requestId: string | undefined }> {
    const search = request.query.toString();
    const url = `${this.#base}${path}${search === '' ? '' : `?${search}`}`;
    const headers: Record<string, string> = {
      accept: request.accept,
      'x-api-key': this.#apiKey,
      'user-agent': this.#userAgent,
      ...(request.body !== undefined && { 'content-type': 'application/json' }),
    };
    const init: FetchInit = {
      method: request.method,
      headers,
      ...(request.body !== undefined && { body: request.body }),
      ...(signal && { signal }),
    };
    const retried = request.idempotent ? RETRIED_STATUSES : RETRIED_UNSAFE;
    for (let retry = 0; ; retry++) {
      if (signal?.aborted) throw abortReason(signal);
      let response: FetchResponseLike;
      let text: string;
      try {
        response = await this.#fetch(url, init);
        text = await response.text();
      } catch (error) {
        // A network failure: an idempotent call is safe to send again, another may have been done.
        if (signal?.aborted || !request.idempotent || retry >= this.#maxRetries) throw error;
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
      if (!retried.has(response.status) || retry >= this.#maxRetries) throw error;
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

  /** The retry settings, for the event stream (events.ts), which retries by its own rules. */
  get retryPolicy(): { baseDelayMs: number; maxDelayMs: number } {
    return { baseDelayMs: this.#retryBaseDelayMs, maxDelayMs: this.#maxRetryDelayMs };
  }

  /**
   * One GET sent once, its body left unread: for the event stream (events.ts), which reads the body
   * as it comes and retries by its own rules. Records the rate-limit headers like every answer.
   */
  async open(
    path: string,
    query: URLSearchParams,
    headers: Record<string, string>,
    signal: AbortSignal,
  ): Promise<FetchResponseLike> {
    const search = query.toString();
    const url = `${this.#base}${path}${search === '' ? '' : `?${search}`}`;
    const response = await this.#fetch(url, {
      method: 'GET',
      headers: { ...headers, 'x-api-key': this.#apiKey, 'user-agent': this.#userAgent },
      signal,
    });
    this.#recordRateLimit(response.headers);
    return response;
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

/** One request as `Transport.request` sends it. */
export interface OneRequest {
  method: FetchInit['method'];
  query: URLSearchParams;
  accept: string;
  body: string | undefined;
  /** Whether sending it twice does no more than sending it once. */
  idempotent: boolean;
}

/** Parses a 2xx JSON body; a body that is no JSON (a proxy's page) is an `internal` error, not a crash. */
export function parseJson<T>(body: { text: string; status: number; requestId: string | undefined }): T {
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
