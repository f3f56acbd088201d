/**
 * Build threads: the server builds the answers of heavy reads (converted, tariffed, ranked or long
 * ranges that the answer cache does not hold) in worker threads, so the event loop only admits,
 * counts and sends them and a light request never waits behind one (docs/using-the-api.md, "Heavy
 * reads in flight"). Each thread reads the server's database over a connection of its own, with
 * the same price service and renderer as the event loop (../http/render/day-content.ts), so an
 * answer is the same byte for byte wherever it is built. `PRICEPOINT_BUILD_THREADS=0` builds them
 * on the event loop instead.
 *
 * A thread that fails (it could not open the database, or it ended) fails the reads it held with
 * 503 `service_unavailable`, and a new one is started for the next read.
 */
import { Worker } from 'node:worker_threads';
import type { Config } from '../config/config.js';
import { ApiError } from '../domain/errors/api-error.js';
import type { AnswerContent } from '../http/pipeline/answer-cache.js';
import type { DayJob } from '../http/render/day-content.js';
import type { PriceReadConfig } from './price-reads.js';

// What crosses between the server and its threads: plain data only, so that it can be cloned.

/** What the server sends a build thread. */
export type ToThread =
  | { readonly type: 'build'; readonly id: number; readonly job: DayJob }
  | { readonly type: 'forget'; readonly symbols: readonly string[] }
  | { readonly type: 'close' };

/** An error as it crosses to the server: an API error keeps its code, detail and problem members. */
export type ThreadError =
  | {
      readonly api: {
        readonly code: ApiError['code'];
        readonly detail: string;
        readonly extra?: Record<string, unknown>;
        readonly retryAfterSeconds?: number;
      };
    }
  | { readonly message: string };

/** What a build thread sends the server. */
export type FromThread =
  | {
      readonly type: 'built';
      readonly id: number;
      readonly content: AnswerContent;
    }
  | { readonly type: 'failed'; readonly id: number; readonly error: ThreadError }
  | { readonly type: 'store-error'; readonly message: string };

export function threadError(error: unknown): ThreadError {
  if (error instanceof ApiError) {
    const { extra, retryAfterSeconds } = error.options;
    return {
      api: {
        code: error.code,
        detail: error.detail,
        ...(extra && { extra }),
        ...(retryAfterSeconds !== undefined && { retryAfterSeconds }),
      },
    };
  }
  return { message: error instanceof Error ? error.message : String(error) };
}

/**
 * What a build thread is given of the configuration: plain data only (no connector, no secret but
 * the database URL it connects with).
 */
export type ThreadConfig = PriceReadConfig &
  Pick<Config, 'tzData' | 'databaseUrl' | 'databasePath' | 'databaseTimeoutMs'>;

/** `config` as a build thread takes it. */
export function threadConfig(config: Config): ThreadConfig {
  return {
    tzData: config.tzData,
    databaseUrl: config.databaseUrl,
    databasePath: config.databasePath,
    databaseTimeoutMs: config.databaseTimeoutMs,
    readCacheMs: config.readCacheMs,
    fx: config.fx,
    tariffs: config.tariffs,
    sources: config.sources.map(({ name, type, settings }) => ({ name, type, settings })),
  };
}

/**
 * A new thread on ./build-thread.js. Run from source (the tests, through tsx), that file is
 * TypeScript, and a worker does not inherit tsx's loader: a line of its own registers it first.
 */
function newThread(config: Config): Worker {
  // Its garbage is collected in the thread, never pausing the event loop: a young generation of a
  // few megabytes (the server's own is larger, bin/pricepoint.js) keeps an idle thread small.
  const options = {
    workerData: { config: threadConfig(config) },
    resourceLimits: { maxYoungGenerationSizeMb: YOUNG_MB },
  };
  if (!import.meta.url.endsWith('.ts'))
    return new Worker(new URL('./build-thread.js', import.meta.url), options);
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const entry = JSON.stringify(new URL('./build-thread.ts', import.meta.url).href);
  const code = `import(${tsx}).then(({ register }) => { register(); return import(${entry}); });`;
  return new Worker(code, { ...options, eval: true });
}

/** The thread's young generation, in MiB: scavenges there cost the event loop nothing. */
const YOUNG_MB = 16;

/** How long a closing thread may take to close its database before it is stopped. */
const CLOSE_MS = 5_000;

export interface BuildThreadHooks {
  /** A thread ended or could not start: the reads it held were answered 503. */
  readonly onThreadError?: (error: unknown) => void;
  /** A store call in a thread failed (counted and logged like the event loop's). */
  readonly onStoreError?: (message: string) => void;
}

export interface BuildThreads {
  /** The answer of one planned read, built in the least busy thread. */
  build(job: DayJob): Promise<AnswerContent>;
  /** Tells every thread that these series changed, so their caches drop them. */
  forget(symbols: readonly string[]): void;
  /** Closes every thread's database and ends it. */
  close(): Promise<void>;
}

interface Waiting {
  readonly resolve: (content: AnswerContent) => void;
  readonly reject: (error: unknown) => void;
}

interface Thread {
  readonly worker: Worker;
  readonly waiting: Map<number, Waiting>;
  ended: boolean;
}

/** The error a thread reported, as the event loop would have thrown it. */
function fromThread(error: ThreadError): Error {
  if ('message' in error) return new Error(`a build thread failed: ${error.message}`);
  const { code, detail, extra, retryAfterSeconds } = error.api;
  return new ApiError(code, detail, {
    ...(extra && { extra }),
    ...(retryAfterSeconds !== undefined && { retryAfterSeconds }),
  });
}

/**
 * `count` build threads over the database `config` names, started now.
 * @example const threads = startBuildThreads(config, 1); await threads.build(job)
 */
export function startBuildThreads(config: Config, count: number, hooks: BuildThreadHooks = {}): BuildThreads {
  let nextId = 0;
  let closing = false;

  function start(): Thread {
    const worker = newThread(config);
    const thread: Thread = { worker, waiting: new Map(), ended: false };
    const fail = (error: unknown) => {
      if (thread.ended) return;
      thread.ended = true;
      for (const { reject } of thread.waiting.values()) {
        reject(
          new ApiError(
            'service_unavailable',
            'The read could not be built just now; retry in a few seconds.',
          ),
        );
      }
      thread.waiting.clear();
      if (!closing) hooks.onThreadError?.(error);
    };
    worker.on('message', (message: FromThread) => {
      if (message.type === 'store-error') {
        hooks.onStoreError?.(message.message);
        return;
      }
      const waiting = thread.waiting.get(message.id);
      if (waiting === undefined) return;
      thread.waiting.delete(message.id);
      if (message.type === 'failed') waiting.reject(fromThread(message.error));
      else {
        const { body } = message.content;
        waiting.resolve({
          ...message.content,
          body: Buffer.from(body.buffer, body.byteOffset, body.byteLength),
        });
      }
    });
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`a build thread ended with code ${code}`)));
    return thread;
  }

  const threads = Array.from({ length: count }, start);

  return {
    build(job) {
      // The least busy thread that runs; one that ended is replaced.
      let index = 0;
      for (let i = 0; i < threads.length; i++) {
        const thread = threads[i] as Thread;
        if (thread.ended) threads[i] = start();
        if ((threads[i] as Thread).waiting.size < (threads[index] as Thread).waiting.size) index = i;
      }
      const thread = threads[index] as Thread;
      const id = nextId++;
      return new Promise<AnswerContent>((resolve, reject) => {
        thread.waiting.set(id, { resolve, reject });
        thread.worker.postMessage({ type: 'build', id, job } satisfies ToThread);
      });
    },

    forget(symbols) {
      for (const thread of threads) {
        if (!thread.ended) thread.worker.postMessage({ type: 'forget', symbols } satisfies ToThread);
      }
    },

    async close() {
      closing = true;
      await Promise.all(
        threads.map(async ({ worker, ended }) => {
          if (ended) return;
          const exited = new Promise((resolve) => worker.once('exit', resolve));
          worker.postMessage({ type: 'close' } satisfies ToThread);
          const timer = setTimeout(() => void worker.terminate(), CLOSE_MS);
          await exited;
          clearTimeout(timer);
        }),
      );
    },
  };
}
