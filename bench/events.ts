/**
 * Event stream benchmark, not a test: 5,000 open `GET /api/v1/events` streams on the embedded default
 * (SQLite, in-memory counters, one process on 127.0.0.1), the server's memory per open stream, and
 * the time from an import's commit to the last stream receiving its `day.published` event.
 *
 * Starts `pricepoint serve --json` in a temporary data folder with no bound on connections per
 * address (every stream comes from 127.0.0.1) and a tier `enterprise` whose limits are never reached;
 * a key holds at most 200 streams on one instance (docs/events.md), so the streams are spread over 25
 * read keys. VmRSS and the V8 heap are read before the streams open and after they are all open and
 * quiet; then one complete day is imported through `PUT /api/v1/series/{symbol}/prices`. The commit
 * time is the event's own `time` (the server's clock, the same machine's): the time to the last
 * stream is the latest arrival minus it. Prints a Markdown section and writes bench/results-events.md.
 *
 * Run with `npm run bench:events` (it builds first). Settings: BENCH_STREAMS (5000). The bench process
 * and the server each hold one file descriptor per stream: `ulimit -n` must be above the count.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CLI,
  cleanups,
  cli,
  envWith,
  httpsCall,
  REPO,
  rssMiB,
  runBench,
  serverHeapMiB,
  startChild,
} from './lib.js';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 5_000);
/** docs/events.md: an enterprise key holds at most 200 open streams on one instance. */
const STREAMS_PER_KEY = 200;
/** Streams opened at once (TLS handshakes in flight). */
const OPENING = 50;
const SYMBOL = 'STREAMED';
const WAIT_MS = 120_000;

interface OpenStream {
  /** Date.now() when the day.published event arrived. */
  receivedAt: number | undefined;
  eventTime: string | undefined;
  close(): void;
}

/** Opens one stream and resolves once the server said `: connected`. */
function openStream(port: number, agent: Agent, key: string): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: `/api/v1/events?symbols=${SYMBOL}`,
        servername: 'localhost',
        headers: { 'x-api-key': key, accept: 'text/event-stream' },
        agent,
      },
      (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`GET /api/v1/events answered ${res.statusCode}`));
          res.resume();
          return;
        }
        const stream: OpenStream = {
          receivedAt: undefined,
          eventTime: undefined,
          close: () => req.destroy(),
        };
        let text = '';
        let connected = false;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          if (!connected && text.includes(': connected')) {
            connected = true;
            resolve(stream);
          }
          const at = text.indexOf('event: day.published');
          if (at >= 0 && stream.receivedAt === undefined) {
            const end = text.indexOf('\n\n', at);
            if (end < 0) return;
            stream.receivedAt = Date.now();
            const data = text
              .slice(at, end)
              .split('\n')
              .find((line) => line.startsWith('data: '));
            stream.eventTime = (JSON.parse(data?.slice(6) ?? '{}') as { time?: string }).time;
          }
          // Only the tail can still hold the start of an event.
          if (text.length > 4096) text = text.slice(-1024);
        });
        res.on('error', () => {});
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function waitFor(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function main(): Promise<void> {
  const fdLimit = Number(execFileSync('sh', ['-c', 'ulimit -n']).toString().trim());
  console.error(`open file limit (ulimit -n): ${fdLimit}`);
  if (Number.isFinite(fdLimit) && fdLimit < STREAMS + 500) {
    throw new Error(`ulimit -n is ${fdLimit}: ${STREAMS} streams need more than ${STREAMS + 500}`);
  }
  const dir = await mkdtemp(join(tmpdir(), 'pricepoint-events-bench-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const config = join(dir, 'config.json');
  const huge = [{ name: 'day', limit: 1_000_000_000, windowSeconds: 86_400 }];
  await writeFile(config, JSON.stringify({ tiers: { enterprise: { limits: huge } } }));
  const settings = {
    PRICEPOINT_CONFIG: config,
    PRICEPOINT_PORT: '0',
    PRICEPOINT_HOST: '127.0.0.1',
    PRICEPOINT_DATA_DIR: join(dir, 'data'),
  };
  const server = await startChild(
    [CLI, 'serve', '--json'],
    // Every stream comes from 127.0.0.1: no bound on connections per address for the bench.
    envWith({ ...settings, PRICEPOINT_MAX_CONNECTIONS_PER_ADDRESS: '0' }),
    'stderr',
  );
  const pid = server.child.pid;
  const ca = readFileSync(join(dir, 'data', 'tls', 'localhost-cert.pem'), 'utf8');
  const key = async (name: string, scopes: string) =>
    (
      JSON.parse(
        await cli(
          ['keys', 'create', '--tier', 'enterprise', '--scopes', scopes, '--name', name, '--json'],
          settings,
        ),
      ) as { key: string }
    ).key;
  const admin = await key('events-admin', 'admin');
  const calls = new Agent({ keepAlive: true, ca });
  const upsert = await httpsCall(
    server.port,
    ca,
    calls,
    'PUT',
    `/api/v1/series/${SYMBOL}`,
    { 'x-api-key': admin, 'content-type': 'application/json' },
    JSON.stringify({
      name: 'Streamed',
      kind: 'electricity',
      currency: 'EUR',
      unit: 'MWh',
      timezone: 'UTC',
      resolution: 'PT15M',
    }),
  );
  if (upsert.status !== 201) throw new Error(`PUT series answered ${upsert.status}: ${upsert.body}`);
  const readers: string[] = [];
  for (let i = 0; i < Math.ceil(STREAMS / STREAMS_PER_KEY); i++) {
    const created = await httpsCall(
      server.port,
      ca,
      calls,
      'POST',
      '/api/v1/keys',
      { 'x-api-key': admin, 'content-type': 'application/json' },
      JSON.stringify({ name: `events-reader-${i}`, tier: 'enterprise' }),
    );
    if (created.status !== 201) throw new Error(`POST /api/v1/keys answered ${created.status}`);
    readers.push((JSON.parse(created.body) as { key: string }).key);
  }

  // Settled before the streams: what they add is the difference.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const rssBefore = rssMiB(pid);
  const heapBefore = await serverHeapMiB(server.port, ca);

  console.error(`opening ${STREAMS.toLocaleString('en')} streams`);
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY, ca });
  const streams: OpenStream[] = [];
  const openStarted = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: OPENING }, async () => {
      while (next < STREAMS) {
        const i = next++;
        streams.push(await openStream(server.port, agent, readers[Math.floor(i / STREAMS_PER_KEY)]!));
      }
    }),
  );
  cleanups.push(async () => {
    for (const stream of streams) stream.close();
  });
  const openSeconds = (performance.now() - openStarted) / 1000;
  console.error(`${streams.length} streams open after ${openSeconds.toFixed(1)} s`);
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const rssOpen = rssMiB(pid);
  const heapOpen = await serverHeapMiB(server.port, ca);

  // One complete day of quarter hours, imported through the API.
  const start = Date.parse('2026-11-25T00:00:00Z');
  const rows = Array.from(
    { length: 96 },
    (_, n) => `${new Date(start + n * 900_000).toISOString().slice(0, 19)}Z,${(40 + n / 4).toFixed(2)}`,
  );
  const put = await httpsCall(
    server.port,
    ca,
    calls,
    'PUT',
    `/api/v1/series/${SYMBOL}/prices`,
    { 'x-api-key': admin, 'content-type': 'text/csv' },
    `start,price\n${rows.join('\n')}\n`,
  );
  const answeredAt = Date.now();
  if (put.status !== 200) throw new Error(`the import answered ${put.status}: ${put.body}`);
  await waitFor('every stream to receive the event', () => streams.every((s) => s.receivedAt !== undefined));
  const commitAt = Date.parse(streams[0]?.eventTime ?? '');
  const arrivals = streams.map((s) => s.receivedAt ?? Number.NaN).sort((a, b) => a - b);
  const first = arrivals[0]! - commitAt;
  const median = arrivals[arrivals.length >> 1]! - commitAt;
  const last = arrivals.at(-1)! - commitAt;
  calls.destroy();

  const perStreamKiB = ((rssOpen - rssBefore) * 1024) / STREAMS;
  const section = [
    `## Event streams: ${STREAMS.toLocaleString('en')} open on the embedded default`,
    '',
    `${new Date().toISOString().slice(0, 16)} UTC, Node ${process.version}, ${cpus().length} CPUs, ` +
      `open file limit ${fdLimit}; bench and server on one machine. \`npm run bench:events\`, bench/events.ts.`,
    '',
    '| measure | value |',
    '| --- | --- |',
    `| streams open (${readers.length} keys, up to ${STREAMS_PER_KEY} each) | ${streams.length.toLocaleString('en')}, opened in ${openSeconds.toFixed(1)} s, ${OPENING} at a time |`,
    `| server VmRSS before / with the streams | ${rssBefore.toFixed(0)} MiB / ${rssOpen.toFixed(0)} MiB |`,
    `| **memory per open stream** (VmRSS) | **${perStreamKiB.toFixed(1)} KiB** |`,
    `| server V8 heap used before / with the streams | ${heapBefore.heapUsed.toFixed(0)} MiB / ${heapOpen.heapUsed.toFixed(0)} MiB (before a collection: indicative) |`,
    `| import commit → first stream | ${first} ms |`,
    `| import commit → median stream | ${median} ms |`,
    `| **import commit → last stream** | **${last} ms** |`,
    `| import answer → last stream | ${arrivals.at(-1)! - answeredAt} ms |`,
    '',
    'The commit time is the event\u2019s `time`. The embedded event log looks for new events every',
    '200 ms (docs/events.md), so up to 200 ms of each figure is that wait.',
    '',
  ].join('\n');
  console.log(section);
  await writeFile(join(REPO, 'bench', 'results-events.md'), section);
}

await runBench(main);
