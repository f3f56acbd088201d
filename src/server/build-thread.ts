/**
 * A build thread (./build-threads.ts says why and when): it builds the answers of heavy reads over
 * its own connection to the server's database, with the same price service and renderer as the
 * event loop, and hands back their bytes. Only a thread loads this file: the server's side of the
 * exchange, and what crosses it, are in ./build-threads.ts.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { useTzSource } from '../domain/time/zone.js';
import { buildOnLoop } from '../http/render/day-content.js';
import { guardPrices } from '../stores/guard.js';
import { openPostgresStores } from '../stores/postgres/index.js';
import { openEmbeddedStores } from '../stores/sqlite/index.js';
import { type FromThread, type ThreadConfig, type ToThread, threadError } from './build-threads.js';
import { priceServiceOf } from './price-reads.js';

/** How much lower than the event loop a build thread runs (0 to 19; docs/using-the-api.md). */
const THREAD_NICE = 10;

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
    ? await openPostgresStores(config.databaseUrl, {
        timeoutMs: config.databaseTimeoutMs,
        changeCheckMs: config.changeCheckMs,
      })
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
