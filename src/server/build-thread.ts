/**
 * A build thread (./build-threads.ts says why and when): it builds the answers of heavy reads over
 * its own connection to the server's database, with the same price service and renderer as the
 * event loop, and hands back their bytes.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../config/config.js';
import { ApiError } from '../domain/errors/api-error.js';
import { useTzSource } from '../domain/time/zone.js';
import { buildOnLoop, type DayJob } from '../http/render/day-content.js';
import { guardPrices } from '../stores/guard.js';
import { openPostgresStores } from '../stores/postgres/index.js';
import { openEmbeddedStores } from '../stores/sqlite/index.js';
import { type PriceReadConfig, priceServiceOf } from './price-reads.js';

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
      readonly content: import('../http/answer-cache.js').AnswerContent;
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

/** How much lower than the event loop a build thread runs (0 to 19; docs/using-the-api.md). */
const THREAD_NICE = 10;

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

async function run(port: NonNullable<typeof parentPort>, config: ThreadConfig): Promise<void> {
  const send = (message: FromThread, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
  // Messages that arrive while the database opens wait for it, in order.
  const early: ToThread[] = [];
  let handle = (message: ToThread) => void early.push(message);
  port.on('message', (message: ToThread) => handle(message));

  // On Linux a nice value belongs to a thread (setpriority(2) with 0 is the calling thread): this one
  // yields the CPU to the event loop, so a light request is answered first on a busy machine.
  // Elsewhere it would lower the whole process, so it is left alone there.
  if (process.platform === 'linux') setPriority(THREAD_NICE);
  useTzSource(config.tzData);
  const data = config.databaseUrl
    ? await openPostgresStores(config.databaseUrl, { timeoutMs: config.databaseTimeoutMs })
    : await openEmbeddedStores(config.databasePath);
  const prices = priceServiceOf(
    config,
    guardPrices(data.prices, (_store, error) =>
      send({ type: 'store-error', message: error instanceof Error ? error.message : String(error) }),
    ),
    Date.now,
  );
  const build = buildOnLoop(prices);

  handle = (message) => {
    if (message.type === 'forget') prices.forget(message.symbols);
    else if (message.type === 'close') {
      port.close();
      void data.close();
    } else {
      build(message.job).then(
        (content) => {
          const { body } = content;
          // A body that owns its memory is moved, not copied; a small one from Node's pool is copied.
          const owned = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
          send({ type: 'built', id: message.id, content }, owned ? [body.buffer as ArrayBuffer] : []);
        },
        (error: unknown) => send({ type: 'failed', id: message.id, error: threadError(error) }),
      );
    }
  };
  for (const message of early.splice(0)) handle(message);
}

if (parentPort !== null) await run(parentPort, (workerData as { config: ThreadConfig }).config);
