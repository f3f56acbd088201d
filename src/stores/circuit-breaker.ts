/**
 * A circuit breaker for a store across the network (docs/operating.md "Running several instances"). The first
 * call that finds the store away or silent trips it; from then on every call is refused at once
 * (`CircuitOpenError`) instead of waiting out a deadline of its own, so a hung database costs only
 * the calls that were already waiting on it. A probe runs in the background, requests or not: at
 * once when the breaker trips (a lone dropped connection closes it again within milliseconds),
 * then every `probeEveryMs` until the store answers, and the breaker closes.
 */

/** A call refused without asking the store, because the breaker is open. */
export class CircuitOpenError extends Error {
  constructor(store: string, cause: unknown) {
    super(`${store} is not answering; calls are skipped until a probe finds it back`, { cause });
    this.name = 'CircuitOpenError';
  }
}

export interface CircuitBreakerOptions {
  /** The store's name, for messages: `PostgreSQL`. */
  readonly name: string;
  /** Resolves when the store answers again, rejects (within a deadline of its own) while it does not. */
  readonly probe: () => Promise<unknown>;
  /** Pause between failed probes (default 500 ms). */
  readonly probeEveryMs?: number;
  /** Told when the breaker opens (with the error that tripped it) and when it closes again. */
  readonly onChange?: (open: boolean, error: unknown) => void;
}

export class CircuitBreaker {
  private trippedBy: unknown;
  private tripped = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  /** @example new CircuitBreaker({ name: 'PostgreSQL', probe: () => pingWithDeadline() }) */
  constructor(private readonly options: CircuitBreakerOptions) {}

  /** True from a trip until a probe succeeds. */
  get open(): boolean {
    return this.tripped;
  }

  /** The error that tripped it (the same object for one outage); `undefined` while closed. */
  get cause(): unknown {
    return this.trippedBy;
  }

  /** Throws `CircuitOpenError` while open: call it before asking the store. */
  check(): void {
    if (this.tripped) throw new CircuitOpenError(this.options.name, this.trippedBy);
  }

  /** Opens the breaker (once per outage) and starts probing. */
  trip(error: unknown): void {
    if (this.tripped) return;
    this.tripped = true;
    this.trippedBy = error;
    this.notify(true, error);
    this.schedule(0);
  }

  /** Stops probing, so the process can exit; calls stay refused while open. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One probe loop at most: the next probe is set only when the last one has failed. */
  private schedule(delayMs: number): void {
    if (this.stopped || this.timer !== undefined) return;
    this.timer = setTimeout(() => void this.runProbe(), delayMs);
    // Probing must never keep a process alive.
    this.timer.unref();
  }

  private async runProbe(): Promise<void> {
    try {
      await this.options.probe();
    } catch {
      this.timer = undefined;
      this.schedule(this.options.probeEveryMs ?? 500);
      return;
    }
    this.timer = undefined;
    const cause = this.trippedBy;
    this.tripped = false;
    this.trippedBy = undefined;
    this.notify(false, cause);
  }

  private notify(open: boolean, error: unknown): void {
    try {
      this.options.onChange?.(open, error);
    } catch {
      // A failing reporter must not keep the breaker from working.
    }
  }
}
