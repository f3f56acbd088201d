/**
 * One HTTP POST of a delivery: to the address ./safe-target.ts checked, within a time limit, reading
 * at most `MAX_RESPONSE_BYTES` of the answer, and never following a redirect (a 3xx is a failure).
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { resolveTarget, type TargetPolicy } from './safe-target.js';

/** What is read of a receiver's answer; the rest is dropped with the connection. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

export interface SendOutcome {
  /** True for a 2xx answer. */
  readonly ok: boolean;
  /** The answer's status; null when none came. */
  readonly status: number | null;
  readonly latencyMs: number;
  /** Why it failed, for the delivery log; null when it succeeded. */
  readonly error: string | null;
  /** No answer came within the time limit (the receiver may be holding the request). */
  readonly timedOut?: boolean;
}

export interface SendOptions extends TargetPolicy {
  readonly timeoutMs: number;
}

export async function send(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: SendOptions,
): Promise<SendOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const failed = (status: number | null, error: string): SendOutcome => ({
    ok: false,
    status,
    latencyMs: elapsed(),
    error,
  });
  const signal = AbortSignal.timeout(options.timeoutMs);
  let target: URL;
  let pinned: { address: string; family: 4 | 6 };
  try {
    target = new URL(url);
    pinned = await resolveTarget(target, options);
  } catch (error) {
    return failed(null, (error as Error).message);
  }
  // The connection goes to the checked address whatever the name resolves to now.
  const lookup: LookupFunction = (_host, opts, callback) => {
    if (opts.all) callback(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<SendOutcome>((resolve) => {
    const req = request(target, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      lookup,
      signal,
      agent: false,
    });
    req.on('error', (error) => {
      if (signal.aborted)
        resolve({ ...failed(null, `no answer within ${options.timeoutMs} ms`), timedOut: true });
      else resolve(failed(null, error.message));
    });
    req.on('response', (response: IncomingMessage) => {
      const status = response.statusCode ?? 0;
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        // Enough of it: the status decides, and a receiver cannot make us read without end.
        if (read > MAX_RESPONSE_BYTES) response.destroy();
      });
      const done = () => {
        if (status >= 200 && status < 300) resolve({ ok: true, status, latencyMs: elapsed(), error: null });
        else if (status >= 300 && status < 400) resolve(failed(status, 'redirects are not followed'));
        else resolve(failed(status, `answered ${status}`));
      };
      response.on('end', done);
      response.on('close', done);
      response.on('error', () => done());
    });
    req.end(body);
  });
}
