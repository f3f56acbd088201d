/**
 * The load generator of bench/heavy-reads.ts, in a process of its own: HTTPS through undici to
 * 127.0.0.1 and other loopback addresses only. Takes the path of a JSON file (the spec written by
 * bench/heavy-reads.ts) and prints one JSON line with the figures.
 *
 * - `probe` (optional): an open loop of one request at `rate` a second with its own key, whose
 *   latencies are the figure that matters. Past 8 in flight per connection a due request is counted
 *   as `behind`. The bench runs it in a process of its own, so that the attack's answers never hold
 *   up the probe's client.
 * - `demo` (optional): the demo key from each of `addresses` (127.0.0.x, bound as the local address
 *   of its connections), `connections` each, every connection sending one request after the other
 *   and staying within the limit: when `RateLimit` says fewer units are left than the last request
 *   cost (`pricepoint-cost`), it waits until the window resets, and after a 429 for `Retry-After`.
 * - `pro` (optional): an open loop at `rate` a second with one key (429s counted, not retried).
 *
 * Every attack path is taken in turn, so no two requests of a run are alike. Stops by itself after
 * `seconds`, waiting at most 30 s more for the answers in flight.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const ca = readFileSync(spec.caFile, 'utf8');
const started = performance.now();
const elapsed = () => (performance.now() - started) / 1000;
const poolOptions = { headersTimeout: 60_000, bodyTimeout: 60_000, pipelining: 1 };
const pools = [];

function newPool(connections, localAddress) {
  const pool = new Pool(spec.origin, {
    ...poolOptions,
    connections,
    connect: { ca, servername: 'localhost', ...(localAddress && { localAddress }) },
  });
  pools.push(pool);
  return pool;
}

function newFigures(name) {
  return { name, sent: 0, behind: 0, errors: 0, statuses: {}, latencies: [] };
}

/** One request; its status, latency and head counted in `figures`. */
async function send(pool, figures, path, headers) {
  figures.sent++;
  const t = performance.now();
  try {
    const res = await pool.request({ method: 'GET', path, headers });
    for await (const _ of res.body);
    figures.statuses[res.statusCode] = (figures.statuses[res.statusCode] ?? 0) + 1;
    if (res.statusCode === 200) figures.latencies.push(performance.now() - t);
    else if (res.statusCode !== 429) figures.errors++;
    return res;
  } catch {
    figures.errors++;
    return undefined;
  }
}

/** Sends a request every 1/`rate` s from the start, whatever the answers take. */
async function openLoop(name, { rate, connections, key, paths }) {
  const pool = newPool(connections);
  const figures = newFigures(name);
  const headers = { 'x-api-key': key, 'accept-encoding': 'br, gzip' };
  const pending = new Set();
  let n = 0;
  while (elapsed() < spec.seconds) {
    while (n < elapsed() * rate) {
      if (pending.size >= connections * 8) figures.behind++;
      else {
        const request = send(pool, figures, paths[n % paths.length], headers);
        pending.add(request);
        request.finally(() => pending.delete(request));
      }
      n++;
    }
    await sleep(2);
  }
  await Promise.race([Promise.all([...pending]), sleep(30_000)]);
  return figures;
}

/** Seconds until the binding limit resets when fewer units are left than `cost`, else 0. */
function waitFor(res, cost) {
  const limit = /r=(\d+);t=(\d+)/.exec(String(res.headers.ratelimit ?? ''));
  if (limit === null) return 0;
  return Number(limit[1]) < cost ? Number(limit[2]) : 0;
}

/** The demo key from each address, each connection within the limit, one request after the other. */
async function politeClients({ key, addresses, connections, paths }) {
  const figures = newFigures('demo');
  const headers = { 'x-api-key': key, 'accept-encoding': 'br, gzip' };
  let n = 0;
  const loops = addresses.flatMap((address) => {
    const pool = newPool(connections, address);
    return Array.from({ length: connections }, async () => {
      while (elapsed() < spec.seconds) {
        const res = await send(pool, figures, paths[n++ % paths.length], headers);
        if (res === undefined) await sleep(1_000);
        else if (res.statusCode === 429) await sleep(Number(res.headers['retry-after'] ?? 1) * 1_000);
        else {
          const cost = Number(
            /pricepoint-cost=(\d+)/.exec(String(res.headers['ratelimit-policy']))?.[1] ?? 1,
          );
          const seconds = waitFor(res, cost);
          if (seconds > 0) await sleep(Math.min(seconds, spec.seconds - elapsed() + 0.1) * 1_000);
        }
      }
    });
  });
  await Promise.race([Promise.all(loops), sleep((spec.seconds + 30) * 1_000)]);
  return figures;
}

function summary({ latencies, ...rest }) {
  const sorted = Float64Array.from(latencies).sort();
  const at = (p) =>
    sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return { ...rest, ok: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? 0 };
}

const [probe, demo, pro] = await Promise.all([
  spec.probe && openLoop('probe', { ...spec.probe, paths: [spec.probe.path] }),
  spec.demo && politeClients(spec.demo),
  spec.pro && openLoop('pro', spec.pro),
]);
await Promise.all(pools.map((p) => p.destroy()));
console.log(
  JSON.stringify({ probe: probe && summary(probe), demo: demo && summary(demo), pro: pro && summary(pro) }),
);
