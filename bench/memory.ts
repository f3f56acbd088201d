/**
 * Memory benchmark, not a test: after 60 seconds at full load spread over 10,000
 * distinct keys, the server's resident memory is within 1.5 times what it was after warm-up.
 *
 * Starts `pricepoint serve --dev-data --json` (the embedded default: SQLite, in-memory counters) in a
 * temporary data folder, with a tier `bench` whose limits are never reached; creates one admin key
 * with the CLI and 10,000 keys in that tier through `POST /api/v1/keys`; then runs autocannon (its
 * own process, bench/setups/memory-load.mjs, 64 connections) rotating over every key and a mix of
 * read paths: 15 s of warm-up, VmRSS read from /proc/<pid>/status, 60 s at full load with VmRSS
 * sampled every second, VmRSS read again. Any non-2xx answer, error or timeout fails the run.
 * Prints a Markdown section and writes it to bench/results-memory.md.
 *
 * Run with `npm run bench:memory` (it builds first). Settings: BENCH_MEMORY_SECONDS (60), BENCH_KEYS
 * (10000), BENCH_WARMUP_SECONDS (15), BENCH_CONNECTIONS (64).
 */
import { writeFile } from 'node:fs/promises';
import { Agent } from 'node:https';
import { cpus } from 'node:os';
import { join } from 'node:path';
import {
  cli,
  httpsCall,
  lastJsonLine,
  REPO,
  rssMiB,
  runBench,
  serverHeapMiB,
  startEmbeddedServer,
} from './lib.js';

const SECONDS = Number(process.env.BENCH_MEMORY_SECONDS ?? 60);
const KEYS = Number(process.env.BENCH_KEYS ?? 10_000);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 15);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const TIER = 'bench';
const GOAL_RATIO = 1.5;
/** Keys created at once through the admin API. */
const CREATE_CONCURRENCY = 16;

/** Creates `count` keys in the bench tier through the admin API, `CREATE_CONCURRENCY` at a time. */
async function createKeys(port: number, ca: string, adminKey: string, count: number): Promise<string[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: CREATE_CONCURRENCY });
  const keys: string[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const body = JSON.stringify({ name: `memory-bench-${i}`, tier: TIER });
      const answer = await httpsCall(
        port,
        ca,
        agent,
        'POST',
        '/api/v1/keys',
        {
          'x-api-key': adminKey,
          'content-type': 'application/json',
        },
        body,
      );
      if (answer.status !== 201)
        throw new Error(`POST /api/v1/keys answered ${answer.status}: ${answer.body}`);
      keys[i] = (JSON.parse(answer.body) as { key: string }).key;
    }
  };
  try {
    await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, worker));
  } finally {
    agent.destroy();
  }
  return keys;
}

interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, { count: number }>;
}

/** One autocannon run over every key and path, in its own process; fails on any non-2xx answer. */
async function load(port: number, keysFile: string, paths: string[], seconds: number): Promise<LoadResult> {
  const spec = { url: `https://127.0.0.1:${port}`, keysFile, paths, connections: CONNECTIONS, seconds };
  const m = await lastJsonLine<LoadResult>([
    join(REPO, 'bench', 'setups', 'memory-load.mjs'),
    JSON.stringify(spec),
  ]);
  if (m.non2xx > 0 || m.errors > 0 || m.timeouts > 0) {
    const codes = Object.entries(m.statusCodes)
      .map(([status, s]) => `${status}: ${s.count}`)
      .join(', ');
    throw new Error(
      `${m.non2xx} non-2xx answers, ${m.errors} errors, ${m.timeouts} timeouts of ${m.total} ` +
        `requests (status codes ${codes}): the run does not count`,
    );
  }
  return m;
}

async function main(): Promise<void> {
  // A tier whose limits the benchmark never reaches: every request is counted, none refused.
  const huge = [
    { name: 'second', limit: 1_000_000_000, windowSeconds: 1 },
    { name: 'minute', limit: 1_000_000_000, windowSeconds: 60 },
  ];
  const { dir, settings, server, ca } = await startEmbeddedServer('pricepoint-memory-bench-', {
    [TIER]: { limits: huge, countPer: 'key' },
  });
  const pid = server.child.pid!;
  const admin = JSON.parse(
    await cli(
      ['keys', 'create', '--tier', TIER, '--scopes', 'admin', '--name', 'memory-admin', '--json'],
      settings,
    ),
  ) as { key: string };

  console.error(`creating ${KEYS.toLocaleString('en')} keys through POST /api/v1/keys`);
  let started = performance.now();
  const keys = await createKeys(server.port, ca, admin.key, KEYS);
  const createSeconds = (performance.now() - started) / 1000;
  const keysFile = join(dir, 'keys.json');
  await writeFile(keysFile, JSON.stringify(keys));
  const afterKeys = rssMiB(pid);

  // Mostly today (the fast path), one series, latest and the catalogue (the full path), and a quarter
  // of the requests on ten past days, so the bounded caches fill during warm-up.
  const core = [
    '/api/v1/prices/today',
    '/api/v1/prices/today?symbols=NO1',
    '/api/v1/prices/today?symbols=NO1,DE-LU&tz=UTC',
    '/api/v1/prices/tomorrow?symbols=NO1',
    '/api/v1/prices/latest',
    '/api/v1/series',
  ];
  const pastDays = Array.from({ length: 10 }, (_, i) => {
    const date = new Date(Date.now() - (i + 2) * 86_400_000).toISOString().slice(0, 10);
    return `/api/v1/prices/${date}`;
  });
  const paths = [...core, ...core, ...core, ...core, ...core, ...pastDays.slice(0, 10)];
  const agent = new Agent();
  for (const path of new Set(paths)) {
    const answer = await httpsCall(server.port, ca, agent, 'GET', path, { 'x-api-key': keys[0]! });
    if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}: ${answer.body}`);
  }
  agent.destroy();

  console.error(`warm-up: ${WARMUP_SECONDS} s, ${CONNECTIONS} connections`);
  const warm = await load(server.port, keysFile, paths, WARMUP_SECONDS);
  const warmRss = rssMiB(pid);
  const warmHeap = await serverHeapMiB(server.port, ca);
  console.error(
    `warm-up: ${Math.round(warm.requestsPerSecond).toLocaleString('en')} req/s, RSS ${warmRss.toFixed(0)} MiB; ` +
      `now ${SECONDS} s at full load`,
  );

  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(rssMiB(pid)), 1_000);
  started = performance.now();
  let run: LoadResult;
  try {
    run = await load(server.port, keysFile, paths, SECONDS);
  } finally {
    clearInterval(sampler);
  }
  const endRss = rssMiB(pid);
  samples.push(endRss);
  const endHeap = await serverHeapMiB(server.port, ca);
  const peak = Math.max(warmRss, ...samples);
  const ratio = endRss / warmRss;
  const every = Math.max(1, Math.round(samples.length / 12));
  const trace = samples
    .filter((_, i) => i % every === 0 || i === samples.length - 1)
    .map((s) => s.toFixed(0));

  const mib = (value: number) => value.toFixed(0);
  const lines = [
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, Node ${process.version}, ` +
      `${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), on a machine shared with other work. ` +
      '`pricepoint serve --dev-data` (SQLite, in-memory counters), request log at `info` into /dev/null; ' +
      `${KEYS.toLocaleString('en')} keys in a tier whose limits are never reached (created through ` +
      `POST /api/v1/keys in ${createSeconds.toFixed(1)} s), used in turn by autocannon with ${CONNECTIONS} ` +
      `connections over ${new Set(paths).size} read paths (today, one series, two series in UTC, tomorrow, ` +
      'latest, the catalogue, ten past days).',
    '',
    '| phase | seconds | req/s | p50 ms | p99 ms | requests | non-2xx | RSS MiB | V8 heap used / total MiB | external MiB |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    `| after creating the keys | | | | | | | ${mib(afterKeys)} | | |`,
    `| warm-up | ${WARMUP_SECONDS} | ${Math.round(warm.requestsPerSecond).toLocaleString('en')} | ${warm.p50} | ` +
      `${warm.p99} | ${warm.total.toLocaleString('en')} | ${warm.non2xx} | ${mib(warmRss)} | ` +
      `${mib(warmHeap.heapUsed)} / ${mib(warmHeap.heapTotal)} | ${mib(warmHeap.external)} |`,
    `| full load | ${SECONDS} | ${Math.round(run.requestsPerSecond).toLocaleString('en')} | ${run.p50} | ` +
      `${run.p99} | ${run.total.toLocaleString('en')} | ${run.non2xx} | ${mib(endRss)} | ` +
      `${mib(endHeap.heapUsed)} / ${mib(endHeap.heapTotal)} | ${mib(endHeap.external)} |`,
    '',
    `RSS during the full-load run, MiB (every ${every} s): ${trace.join(', ')}; peak ${mib(peak)} MiB.`,
    '',
    `Goal: RSS after ${SECONDS} s at full load over ${KEYS.toLocaleString('en')} keys ` +
      `within ${GOAL_RATIO} x the RSS after warm-up: ${mib(endRss)} / ${mib(warmRss)} MiB = ` +
      `${ratio.toFixed(2)}: ${ratio <= GOAL_RATIO ? 'met' : '**not met**'} (peak ${(peak / warmRss).toFixed(2)} x).`,
  ];
  const section = lines.join('\n');
  console.log(`## Memory under ${KEYS.toLocaleString('en')} keys\n\n${section}`);
  await writeFile(
    join(REPO, 'bench', 'results-memory.md'),
    '# Memory under many keys: results\n\nWritten by bench/memory.ts; see bench/README.md.\n\n' +
      section +
      '\n',
  );
}

await runBench(main);
