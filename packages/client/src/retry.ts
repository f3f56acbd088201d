/**
 * The pieces of the retry policy: reading `Retry-After`, exponential backoff with full jitter, and a
 * sleep an `AbortSignal` cuts short. Plain timers, so the client runs on any runtime with `fetch`.
 */

/**
 * `Retry-After` in whole seconds: delay-seconds, or an HTTP date counted from `now`. `undefined`
 * when the header is absent or unreadable.
 */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * Full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"): a uniform random delay
 * between 0 and `min(cap, base * 2^retry)`, so many clients refused together do not come back together.
 */
export function backoffDelay(retry: number, baseMs: number, capMs: number, random: () => number): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** retry);
  return Math.floor(random() * ceiling);
}

/** The reason an aborted signal gives, as the error to throw. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
