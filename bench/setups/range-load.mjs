/**
 * The load generator of bench/range.ts, in a process of its own: HTTPS through undici to 127.0.0.1.
 * Takes the path of a JSON file (the `LoadSpec` of bench/range.ts) and prints one JSON line with
 * the figures.
 *
 * - `light`: an open loop of small requests at `rate` a second, taking `paths` in turn (a client
 *   reading today's prices and the current one), whose latencies are the figure that matters.
 * - `heavy` (optional): an open loop of year ranges at `rate` a second with one key, each asking
 *   for other days than the one before, so no answer is ever served from a cache; 429s are counted
 *   and not retried (the client keeps its pace, as a client within its request rate would).
 *
 * Past `maxInFlight` requests of a loop, a due request is not sent and counted as `behind`.
 * Stops by itself after `seconds`, waiting at most 30 s more for the answers in flight.
 */
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const ca = readFileSync(spec.caFile, 'utf8');
const poolOptions = {
  connect: { ca, servername: 'localhost' },
  headersTimeout: 60_000,
  bodyTimeout: 60_000,
  pipelining: 1,
};

function loop(name, { rate, connections, maxInFlight, headers, path }) {
  const pool = new Pool(spec.origin, { ...poolOptions, connections });
  const figures = { name, sent: 0, behind: 0, errors: 0, statuses: {}, latencies: [], bytes: 0 };
  let inFlight = 0;
  let n = 0;
  const started = performance.now();
  const pending = new Set();

  async function one(at) {
    inFlight++;
    figures.sent++;
    const t = performance.now();
    try {
      const res = await pool.request({ method: 'GET', path: path(at), headers });
      for await (const chunk of res.body) figures.bytes += chunk.length;
      figures.statuses[res.statusCode] = (figures.statuses[res.statusCode] ?? 0) + 1;
      if (res.statusCode === 200) figures.latencies.push(performance.now() - t);
      else if (res.statusCode !== 429) figures.errors++;
    } catch {
      figures.errors++;
    } finally {
      inFlight--;
    }
  }

  // Sends every request when it is due, measured from the loop's start, whatever the answers take.
  const done = new Promise((resolve) => {
    const tick = () => {
      const elapsed = (performance.now() - started) / 1000;
      if (elapsed >= spec.seconds) {
        resolve();
        return;
      }
      while (n < elapsed * rate) {
        if (inFlight >= maxInFlight) figures.behind++;
        else {
          const request = one(n);
          pending.add(request);
          request.finally(() => pending.delete(request));
        }
        n++;
      }
      setTimeout(tick, 2);
    };
    tick();
  });
  return {
    figures,
    async finish() {
      await done;
      await Promise.race([Promise.all([...pending]), new Promise((r) => setTimeout(r, 30_000))]);
      await pool.destroy();
    },
  };
}

function summary({ latencies, ...rest }) {
  const sorted = Float64Array.from(latencies).sort();
  const at = (p) =>
    sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return { ...rest, ok: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? 0 };
}

const light = loop('light', {
  rate: spec.light.rate,
  connections: spec.light.connections,
  maxInFlight: spec.light.connections * 8,
  headers: { 'x-api-key': spec.light.key, 'accept-encoding': 'br, gzip' },
  path: (i) => spec.light.paths[i % spec.light.paths.length],
});
const heavy =
  spec.heavy &&
  loop('heavy', {
    rate: spec.heavy.rate,
    connections: spec.heavy.connections,
    maxInFlight: spec.heavy.connections * 4,
    headers: { 'x-api-key': spec.heavy.key, 'accept-encoding': 'br, gzip' },
    path: (i) => spec.heavy.paths[i % spec.heavy.paths.length],
  });
await Promise.all([light.finish(), heavy?.finish()]);
console.log(JSON.stringify({ light: summary(light.figures), heavy: heavy && summary(heavy.figures) }));
