/**
 * One bounded GET to an upstream, with Node's own fetch: the whole exchange (body included) has a
 * time limit, the body a size cap, and a 429 or 503 answer carries its `Retry-After` as a delay.
 * Failures name the upstream by origin and path only, since a query string may hold a token.
 */
import { type SourceFailure, SourceSettingsError, type UpstreamOptions } from './types.js';

/** Day-ahead documents are a few hundred kilobytes; a slow upstream is given half a minute. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** The ECB history (3 MB unpacked) and a year of quarter hours fit with room to spare. */
export const DEFAULT_MAX_BYTES = 32 * 1024 * 1024;
const MESSAGE_CHARS = 300;

/** An upstream's answer, whatever its status. */
export interface UpstreamAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly body: Uint8Array;
  /** Set on a 429 or 503 with a readable `Retry-After`. */
  readonly retryAfterMs?: number;
  /** Where the answer came from, safe to show (`https://host/path`). */
  readonly where: string;
}

export type UpstreamGet = { ok: true; answer: UpstreamAnswer } | { ok: false; failure: SourceFailure };

/**
 * Fetches `url`. Never throws for upstream trouble: a timeout, a refused connection or an
 * oversized body is a failure.
 * @example const got = await getUpstream(new URL('https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml'), {})
 */
export async function getUpstream(
  url: URL,
  options: UpstreamOptions,
  headers: Record<string, string> = {},
): Promise<UpstreamGet> {
  const where = `${url.origin}${url.pathname}`;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const signal = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  try {
    const response = await fetch(url, { headers, signal, redirect: 'follow' });
    const declared = Number(response.headers.get('content-length') ?? Number.NaN);
    if (declared > maxBytes) {
      await response.body?.cancel();
      return tooLarge(where, maxBytes, response.status);
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (response.body !== null) {
      const reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > maxBytes) {
          await reader.cancel();
          return tooLarge(where, maxBytes, response.status);
        }
        chunks.push(value);
      }
    }
    const body = Buffer.concat(chunks);
    const retryAfterMs =
      response.status === 429 || response.status === 503
        ? parseRetryAfter(response.headers.get('retry-after'), options.now?.() ?? Date.now())
        : undefined;
    const answer: UpstreamAnswer = {
      status: response.status,
      contentType: response.headers.get('content-type') ?? '',
      body,
      where,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    };
    return { ok: true, answer };
  } catch (error) {
    if (signal.aborted) {
      const seconds = (options.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000;
      return {
        ok: false,
        failure: { kind: 'timeout', message: `${where} did not answer within ${seconds} s` },
      };
    }
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? (error as Error).message;
    return { ok: false, failure: { kind: 'network', message: `${where} could not be reached: ${reason}` } };
  }
}

function tooLarge(where: string, maxBytes: number, status: number): UpstreamGet {
  return {
    ok: false,
    failure: { kind: 'too-large', status, message: `${where} sent more than ${maxBytes} bytes` },
  };
}

/**
 * `Retry-After` as a delay in milliseconds: delta-seconds or an HTTP date (RFC 9110 section 10.2.3).
 * @example parseRetryAfter('120', Date.now()) // 120000
 */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The body as UTF-8 text. */
export function bodyText(answer: UpstreamAnswer): string {
  return Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength).toString('utf8');
}

/** Kinds of body told by their first bytes, for a message that names what arrived. */
const KINDS: readonly (readonly [(head: string) => boolean, string])[] = [
  [(head) => head.startsWith('PK\u0003\u0004'), 'a ZIP archive'],
  [(head) => head.startsWith('\u001f\u008b'), 'gzip data'],
  [(head) => head.startsWith('%PDF'), 'a PDF file'],
  [(head) => /^\s*(<!doctype html|<html)/i.test(head), 'an HTML page'],
  [(head) => /^\s*(<\?xml|<[A-Za-z])/.test(head), 'an XML document'],
  [(head) => /^\s*[[{]/.test(head), 'JSON'],
];

/**
 * What an answer that could not be read actually was, for its failure message: its kind by its
 * first bytes, its content type and the first bytes themselves (a ZIP where XML was expected, an
 * HTML error page where a file was).
 * @example whatArrived(answer) // 'an HTML page (text/html), starting "<!DOCTYPE html><html><head>"'
 */
export function whatArrived(answer: UpstreamAnswer, secrets: readonly string[] = []): string {
  const head = Buffer.from(answer.body.subarray(0, 64)).toString('latin1');
  const kind = KINDS.find(([looksLike]) => looksLike(head))?.[1] ?? (head === '' ? 'an empty body' : 'text');
  const type = answer.contentType === '' ? 'no content type' : answer.contentType;
  let masked = head;
  for (const secret of secrets) if (secret !== '') masked = masked.split(secret).join('***');
  let first = masked.slice(0, 32);
  // A secret cut by the slice still shows its start: mask what of it the slice ends with.
  for (const secret of secrets) {
    for (let k = Math.min(secret.length, first.length); k >= 4; k--) {
      if (first.endsWith(secret.slice(0, k))) {
        first = `${first.slice(0, -k)}***`;
        break;
      }
    }
  }
  first = first.replace(/[^\x20-\x7e]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return head === '' ? `${kind} (${type})` : `${kind} (${type}), starting "${first}"`;
}

/**
 * Text fit for a failure message: markup removed, white space collapsed, clipped, and every secret
 * replaced (an upstream may echo the request back).
 */
export function plainWords(text: string, secrets: readonly string[] = []): string {
  let words = text
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  for (const secret of secrets) if (secret !== '') words = words.split(secret).join('***');
  return words.length > MESSAGE_CHARS ? `${words.slice(0, MESSAGE_CHARS)}…` : words;
}

/** A failure for an answer with an error status, keeping its `Retry-After`. */
export function statusFailure(
  answer: UpstreamAnswer,
  words: string,
  kind: SourceFailure['kind'] = 'http',
): SourceFailure {
  const said = words === '' ? '' : `: ${words}`;
  return {
    kind,
    status: answer.status,
    message: `${answer.where} answered HTTP ${answer.status}${said}`,
    ...(answer.retryAfterMs === undefined ? {} : { retryAfterMs: answer.retryAfterMs }),
  };
}

/**
 * The `baseUrl` setting as a URL (`fallback` when unset); `directory` adds the trailing slash that
 * relative file names need. Throws `SourceSettingsError` for anything but an http(s) URL.
 * @example baseUrlOf(undefined, 'https://api.energidataservice.dk', true).href // 'https://api.energidataservice.dk/'
 */
export function baseUrlOf(value: unknown, fallback: string, directory: boolean): URL {
  const text = value ?? fallback;
  let url: URL | undefined;
  try {
    url =
      typeof text === 'string' ? new URL(directory && !text.endsWith('/') ? `${text}/` : text) : undefined;
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new SourceSettingsError('baseUrl', `"${String(text)}" is not an http or https URL`);
  }
  return url;
}
