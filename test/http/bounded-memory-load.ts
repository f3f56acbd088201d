/**
 * The load of the bounded-memory test, run in a child process started with `--expose-gc` so that
 * memory is measured after full collections and a leak cannot take the test runner down with it.
 * Through a real app over in-memory SQLite it sends a warm-up, then a batch of `fill` requests and
 * one of `check` requests, every one distinct (`distinctReadRequests`), and prints one JSON line with
 * the heap and resident memory after each. The first batch fills every cache to its bound; the
 * second must find nothing left to grow. Resident memory matters: a zone formatter lives in ICU, outside the JavaScript heap.
 */
import { createHarness } from '../helpers/harness.js';
import { distinctReadRequests } from './bounded-memory-requests.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Heap and resident memory after full collections, in bytes. */
async function memoryAfterGc(): Promise<{ heap: number; rss: number }> {
  // Twice, with a turn between: finalisers and weak references are cleared by the second.
  gc?.();
  await turn();
  gc?.();
  const { heapUsed, rss } = process.memoryUsage();
  return { heap: heapUsed, rss };
}

const fill = Number(process.argv[2] ?? 12_000);
const check = Number(process.argv[3] ?? 8_000);
// Request lines are not logged: the harness keeps every line it is given, which is not the app's memory.
const harness = await createHarness({ env: { PRICEPOINT_LOG_LEVEL: 'error' } });
try {
  // Enterprise: 200 requests a second; the fake clock moves 6 ms a request, so none is refused.
  const { key } = await harness.createKey({ tier: 'enterprise' });
  const statuses: Record<number, number> = {};
  let sent = 0;
  const send = async (urls: readonly string[]) => {
    for (const url of urls) {
      harness.clock.advance(6);
      // In-process stores answer at once: without a turn of the event loop now and then, the
      // responses' own setImmediate callbacks would pile up, as no real server lets them.
      if (++sent % 64 === 0) await turn();
      const response = await harness.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
      statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1;
    }
  };
  await send(distinctReadRequests(1_000, 7)); // code compiled, per-process tables built
  const warm = await memoryAfterGc();
  const urls = distinctReadRequests(fill + check, 1);
  await send(urls.slice(0, fill));
  const filled = await memoryAfterGc();
  await send(urls.slice(fill));
  const after = await memoryAfterGc();
  process.stdout.write(`${JSON.stringify({ warm, filled, after, statuses })}\n`);
} finally {
  await harness.close();
}
