/**
 * HTTP benchmark, not a test: requests per second, latency and memory of Pricepoint next to
 * the servers one could run instead, measured in one run so the ratios hold on a shared machine.
 *
 *  (a) raw `node:https` answering the very bytes Pricepoint gave, with the same certificate: the limit;
 *  (b) Fastify 5 with `@fastify/rate-limit` and an `x-api-key` check: what a user would build instead;
 *  (c) Pricepoint on the embedded default (SQLite, in-memory counters), `serve --dev-data`;
 *  (d) Pricepoint on PostgreSQL (a schema of its own in the database `test`) and Redis (a prefix of
 *      its own), both removed at the end; skipped with the reason when either is unreachable.
 *
 * Beside the table, (d)'s server CPU per request over (c)'s, request by request: the same load
 * against each in one run, so what PostgreSQL and Redis cost Pricepoint itself (goal: at most 1.3).
 *
 * Every server is a child process (its peak RSS is read from /proc/<pid>/status, its CPU time per
 * request from /proc/<pid>/stat around each run), and so is the load
 * generator (autocannon, bench/setups/load.mjs), one run at a time against 127.0.0.1. Rounds
 * alternate the setups (a, b, c, d, a, b, ...) so drift hits all of them alike; each figure is the
 * median over the rounds. Two requests: the full `/api/v1/prices/today` of the development data and
 * `?symbols=NO1`. Prints a Markdown table and writes it to bench/results.md.
 *
 * Run with `npm run bench` (it builds first). BENCH_SECONDS (5), BENCH_ROUNDS (3), BENCH_CONNECTIONS
 * (64), BENCH_WARMUP_SECONDS (1), BENCH_DATABASE_URL (postgres://postgres@127.0.0.1:5432/test, the
 * database in which (d)'s schema is created and dropped), BENCH_REDIS_URL (redis://127.0.0.1:6379).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import {
  CLI,
  cleanups,
  cli,
  cpuSeconds,
  envWith,
  freshSchema,
  lastJsonLine,
  median,
  peakRssMiB,
  REPO,
  runBench,
  startChild,
} from './lib.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 1);
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const TIER = 'bench';
/** (d)'s server CPU per request at most this many times (c)'s (bench/README.md). */
const CPU_GOAL = 1.3;
const REQUESTS = [
  { name: 'full answer', path: '/api/v1/prices/today' },
  { name: 'one series', path: '/api/v1/prices/today?symbols=NO1' },
] as const;
/**
 * The full answer again, asked with Accept-Encoding: Pricepoint answers it from
 * its cache of compressed bodies. Only (c) and (d) are run; the ratio is to (a) sending the
 * uncompressed full answer, the limit of a server that does not compress.
 */
const COMPRESSED = [
  { name: 'full, Brotli', path: '/api/v1/prices/today', coding: 'br' },
  { name: 'full, gzip', path: '/api/v1/prices/today', coding: 'gzip' },
] as const;

interface Setup {
  readonly id: 'a' | 'b' | 'c' | 'd';
  readonly label: string;
  readonly child: ChildProcess;
  readonly port: number;
}

interface Measurement {
  requestsPerSecond: number;
  /** The server's own CPU time (user and system) per answered request, in microseconds. */
  cpuMicros: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  bytes: number;
}

/** One GET over HTTPS to 127.0.0.1, trusting `ca` for the name localhost. */
function get(
  port: number,
  path: string,
  ca: string,
  headers: Record<string, string>,
): Promise<{ status: number; contentType: string; body: string; headers: string[] }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, ca, servername: 'localhost', headers, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => (body += c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type']),
            body,
            headers: res.rawHeaders,
          }),
        );
      },
    );
    req.once('error', reject);
    req.end();
  });
}

/** One autocannon run in its own process. */
function load(port: number, path: string, headers: Record<string, string>, seconds: number) {
  const spec = { url: `https://127.0.0.1:${port}${path}`, headers, connections: CONNECTIONS, seconds };
  return lastJsonLine<Measurement>([join(REPO, 'bench', 'setups', 'load.mjs'), JSON.stringify(spec)]);
}

/** PostgreSQL and Redis for setup (d), or why not. Registers the cleanup of what it creates. */
async function scaleOutSettings(): Promise<Record<string, string> | string> {
  const database = await freshSchema(DATABASE_URL, 'pp_bench');
  if ('why' in database) return database.why;
  const suffix = randomBytes(5).toString('hex');
  const prefix = `pp-bench-${suffix}`;
  const redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2_000, maxRetriesPerRequest: 0 });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    return `Redis at ${REDIS_URL} is unreachable (${(error as Error).message})`;
  }
  cleanups.push(async () => {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    await redis.quit();
  });
  return {
    PRICEPOINT_DATABASE_URL: database.url,
    PRICEPOINT_REDIS_URL: REDIS_URL,
    PRICEPOINT_REDIS_PREFIX: prefix,
  };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'pricepoint-http-bench-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const config = join(dir, 'config.json');
  // A tier whose limits the benchmark never reaches: every request is counted, none refused.
  const huge = [
    { name: 'second', limit: 1_000_000_000, windowSeconds: 1 },
    { name: 'minute', limit: 1_000_000_000, windowSeconds: 60 },
  ];
  await writeFile(config, JSON.stringify({ tiers: { [TIER]: { limits: huge, countPer: 'key' } } }));
  const common = { PRICEPOINT_CONFIG: config, PRICEPOINT_PORT: '0', PRICEPOINT_HOST: '127.0.0.1' };

  const setups: Setup[] = [];
  // (c) first: it generates the certificate every other setup serves with.
  const embedded = { ...common, PRICEPOINT_DATA_DIR: join(dir, 'embedded') };
  const c = await startChild([CLI, 'serve', '--dev-data', '--json'], envWith(embedded), 'stderr');
  const created = JSON.parse(
    await cli(['keys', 'create', '--tier', TIER, '--name', 'bench', '--json'], embedded),
  ) as { key: string };
  const certFile = join(dir, 'embedded', 'tls', 'localhost-cert.pem');
  const keyFile = join(dir, 'embedded', 'tls', 'localhost-key.pem');
  const ca = readFileSync(certFile, 'utf8');
  const headersC = { 'x-api-key': created.key };

  // The bytes (a) and (b) serve: Pricepoint's answers, fetched once.
  const bodies: Record<string, { contentType: string; body: string; headers: string[] }> = {};
  for (const { path } of REQUESTS) {
    const answer = await get(c.port, path, ca, headersC);
    if (answer.status !== 200)
      throw new Error(`Pricepoint answered ${answer.status} to ${path}: ${answer.body}`);
    // (a) sends the very bytes Pricepoint sent: its headers too, but for those Node adds itself.
    const own = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);
    const headers: string[] = [];
    for (let i = 0; i < answer.headers.length; i += 2) {
      const name = answer.headers[i]!;
      if (!own.has(name.toLowerCase())) headers.push(name, answer.headers[i + 1]!);
    }
    bodies[path] = { contentType: answer.contentType, body: answer.body, headers };
  }
  const bodiesFile = join(dir, 'bodies.json');
  await writeFile(bodiesFile, JSON.stringify(bodies));
  const setupEnv = envWith({
    BENCH_CERT: certFile,
    BENCH_KEY: keyFile,
    BENCH_BODIES: bodiesFile,
    BENCH_API_KEY: created.key,
  });
  const a = await startChild([join(REPO, 'bench', 'setups', 'raw-https.mjs')], setupEnv, 'stdout');
  const b = await startChild([join(REPO, 'bench', 'setups', 'fastify-minimal.mjs')], setupEnv, 'stdout');
  setups.push(
    { id: 'a', label: 'raw node:https', ...a },
    { id: 'b', label: 'Fastify + @fastify/rate-limit', ...b },
    { id: 'c', label: 'Pricepoint, SQLite', ...c },
  );
  const keyOf = new Map<Setup['id'], Record<string, string>>([
    ['a', headersC],
    ['b', headersC],
    ['c', headersC],
  ]);

  let skippedD: string | undefined;
  const scaleOut = await scaleOutSettings();
  if (typeof scaleOut === 'string') {
    skippedD = scaleOut;
    console.error(`skipping (d): ${scaleOut}`);
  } else {
    const settings = {
      ...common,
      ...scaleOut,
      PRICEPOINT_DATA_DIR: join(dir, 'scale-out'),
      PRICEPOINT_TLS_CERT: certFile,
      PRICEPOINT_TLS_KEY: keyFile,
    };
    await cli(['dev-data', '--json'], settings);
    const keyD = JSON.parse(
      await cli(['keys', 'create', '--tier', TIER, '--name', 'bench', '--json'], settings),
    ) as { key: string };
    const d = await startChild([CLI, 'serve', '--json'], envWith(settings), 'stderr');
    setups.push({ id: 'd', label: 'Pricepoint, PostgreSQL + Redis', ...d });
    keyOf.set('d', { 'x-api-key': keyD.key });
  }

  // Every setup answers both requests with 200 and a body as long as Pricepoint's (only the
  // timestamp in generatedAt differs between Pricepoint's answers, and it has a fixed length).
  for (const setup of setups) {
    for (const { path } of REQUESTS) {
      const answer = await get(setup.port, path, ca, keyOf.get(setup.id)!);
      const expected = bodies[path]!;
      if (answer.status !== 200 || answer.body.length !== expected.body.length) {
        throw new Error(
          `(${setup.id}) answered ${answer.status} with ${answer.body.length} characters to ${path}, ` +
            `expected 200 with ${expected.body.length}`,
        );
      }
    }
  }

  const runOnce = async (setup: Setup, path: string, seconds: number, headers = keyOf.get(setup.id)!) => {
    const before = cpuSeconds(setup.child.pid);
    const m = await load(setup.port, path, headers, seconds);
    m.cpuMicros = ((cpuSeconds(setup.child.pid) - before) * 1e6) / Math.max(1, m.total);
    if (m.non2xx > 0 || m.errors > 0 || m.timeouts > 0) {
      throw new Error(
        `(${setup.id}) ${path}: ${m.non2xx} non-2xx, ${m.errors} errors, ${m.timeouts} timeouts`,
      );
    }
    return m;
  };

  console.error(
    `node ${process.version}, ${cpus().length} CPUs; ${CONNECTIONS} connections, ${ROUNDS} rounds of ` +
      `${SECONDS} s per setup and request, after ${WARMUP_SECONDS} s of warm-up each`,
  );
  for (const setup of setups) for (const { path } of REQUESTS) await runOnce(setup, path, WARMUP_SECONDS);
  const pricepoint = setups.filter((s) => s.id === 'c' || s.id === 'd');
  const coded = (setup: Setup, coding: string) => ({ ...keyOf.get(setup.id)!, 'accept-encoding': coding });
  for (const setup of pricepoint) {
    for (const { path, coding } of COMPRESSED)
      await runOnce(setup, path, WARMUP_SECONDS, coded(setup, coding));
  }

  const results = new Map<string, Measurement[]>();
  const progress = (round: number, name: string, setup: Setup, m: Measurement) =>
    console.error(
      `round ${round}/${ROUNDS} ${name.padEnd(12)} (${setup.id}) ${Math.round(m.requestsPerSecond)
        .toLocaleString('en')
        .padStart(
          7,
        )} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms, ${Math.round(m.cpuMicros)} us CPU, ${Math.round(m.bytes / Math.max(1, m.total))} bytes each`,
    );
  for (let round = 1; round <= ROUNDS; round++) {
    for (const { name, path } of REQUESTS) {
      for (const setup of setups) {
        const m = await runOnce(setup, path, SECONDS);
        const key = `${setup.id} ${path}`;
        results.set(key, [...(results.get(key) ?? []), m]);
        progress(round, name, setup, m);
      }
    }
    for (const { name, path, coding } of COMPRESSED) {
      for (const setup of pricepoint) {
        const m = await runOnce(setup, path, SECONDS, coded(setup, coding));
        const key = `${setup.id} ${path} ${coding}`;
        results.set(key, [...(results.get(key) ?? []), m]);
        progress(round, name, setup, m);
      }
    }
  }
  const memory = new Map(setups.map((s) => [s.id, peakRssMiB(s.child.pid)]));

  type Row = { rps: number; p50: number; p99: number; cpu: number };
  const summary = (id: Setup['id'], path: string, coding = ''): Row | undefined => {
    const runs = results.get(coding ? `${id} ${path} ${coding}` : `${id} ${path}`);
    if (!runs) return undefined;
    return {
      rps: median(runs.map((r) => r.requestsPerSecond)),
      p50: median(runs.map((r) => r.p50)),
      p99: median(runs.map((r) => r.p99)),
      cpu: median(runs.map((r) => r.cpuMicros)),
    };
  };

  const lines: string[] = [];
  lines.push(
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, Node ${process.version}, ` +
      `${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), ${CONNECTIONS} connections, ` +
      `${ROUNDS} rounds of ${SECONDS} s per setup and request (medians), setups alternating, ` +
      `autocannon in its own process on the same machine.`,
    '',
    '| request | setup | req/s | p50 ms | p99 ms | server CPU us/req | peak RSS MiB | vs (a) | vs (b) |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const { name, path } of REQUESTS) {
    const base = summary('a', path)!;
    const user = summary('b', path)!;
    const size = Buffer.byteLength(bodies[path]!.body);
    for (const setup of setups) {
      const row = summary(setup.id, path)!;
      lines.push(
        `| ${name} (${(size / 1024).toFixed(1)} KiB) | (${setup.id}) ${setup.label} | ` +
          `${Math.round(row.rps).toLocaleString('en')} | ${row.p50} | ${row.p99} | ${Math.round(row.cpu)} | ` +
          `${memory.get(setup.id)!.toFixed(0)} | ${(row.rps / base.rps).toFixed(2)} | ${(row.rps / user.rps).toFixed(2)} |`,
      );
    }
  }
  for (const { name, path, coding } of COMPRESSED) {
    const base = summary('a', path)!;
    const user = summary('b', path)!;
    for (const setup of pricepoint) {
      const row = summary(setup.id, path, coding)!;
      const runs = results.get(`${setup.id} ${path} ${coding}`)!;
      const size = median(runs.map((r) => r.bytes / Math.max(1, r.total)));
      lines.push(
        `| ${name} (~${(size / 1024).toFixed(1)} KiB on the wire) | (${setup.id}) ${setup.label} | ` +
          `${Math.round(row.rps).toLocaleString('en')} | ${row.p50} | ${row.p99} | ${Math.round(row.cpu)} | ` +
          `${memory.get(setup.id)!.toFixed(0)} | ${(row.rps / base.rps).toFixed(2)} | ${(row.rps / user.rps).toFixed(2)} |`,
      );
    }
  }
  if (skippedD) lines.push('', `(d) skipped: ${skippedD}.`);

  // The goals (bench/README.md).
  const [full, one] = REQUESTS.map((r) => r.path) as [string, string];
  const goal = (text: string, met: boolean | undefined) =>
    `- ${text}: ${met === undefined ? 'not measured' : met ? 'met' : '**not met**'}`;
  const ratio = (x: Setup['id'], y: Setup['id'], path: string) => {
    const top = summary(x, path);
    const bottom = summary(y, path);
    return top && bottom ? top.rps / bottom.rps : undefined;
  };
  const fmt = (value: number | undefined) => (value === undefined ? '-' : value.toFixed(2));
  const p99Ratio = (path: string) => summary('c', path)!.p99 / summary('a', path)!.p99;
  const cFull = ratio('c', 'a', full)!;
  const cOne = ratio('c', 'a', one)!;
  const cbFull = ratio('c', 'b', full)!;
  const cbOne = ratio('c', 'b', one)!;
  const dFull = ratio('d', 'a', full);
  const dOne = ratio('d', 'a', one);
  lines.push(
    '',
    'Goals:',
    '',
    goal(`(c) at least 0.90 of (a) on the full answer (${fmt(cFull)})`, cFull >= 0.9),
    goal(`(c) at least 0.80 of (a) on one series (${fmt(cOne)})`, cOne >= 0.8),
    goal(`(c) ahead of (b) on both (${fmt(cbFull)}, ${fmt(cbOne)})`, cbFull > 1 && cbOne > 1),
    goal(
      `(c) p99 at most 1.25 x (a) p99 (${fmt(p99Ratio(full))}, ${fmt(p99Ratio(one))})`,
      p99Ratio(full) <= 1.25 && p99Ratio(one) <= 1.25,
    ),
    goal(
      `(d) at least 0.60 of (a) on both (${fmt(dFull)}, ${fmt(dOne)})`,
      dFull === undefined || dOne === undefined ? undefined : dFull >= 0.6 && dOne >= 0.6,
    ),
  );
  const brotli = ratio('c', 'a', full);
  const cBr = summary('c', full, 'br');
  const aFull = summary('a', full);
  lines.push(
    '',
    'Compression:',
    '',
    goal(
      `(c) with Brotli answers more per second than (a) sends uncompressed (${fmt(cBr && aFull ? cBr.rps / aFull.rps : undefined)}; uncompressed ${fmt(brotli)})`,
      cBr && aFull ? cBr.rps > aFull.rps : undefined,
    ),
  );
  lines.push('', ...cpuComparison(results, skippedD));
  const table = lines.join('\n');
  console.log(table);
  await writeFile(
    join(REPO, 'bench', 'results.md'),
    '# `npm run bench`: results\n\nWritten by bench/http.ts; see bench/README.md.\n\n' + table + '\n',
  );
}

/**
 * (d)'s server CPU per request beside (c)'s for each request, both under the same load in the same
 * rounds: the ratio of the medians, and each round's own ratio (the rounds alternate the setups, so
 * a round's two runs met the same machine).
 */
function cpuComparison(results: Map<string, Measurement[]>, skippedD: string | undefined): string[] {
  const lines = [
    `Server CPU per request, Pricepoint on PostgreSQL + Redis (d) against SQLite (c), same load (goal: (d) at most ${CPU_GOAL.toFixed(1)} times (c) on the full answer and one series):`,
    '',
  ];
  if (skippedD) return [...lines, `not measured: (d) skipped (${skippedD}).`];
  lines.push(
    '| request | (c) SQLite us/req | (d) PostgreSQL + Redis us/req | (d) / (c) | by round | goal |',
    '| --- | ---: | ---: | ---: | --- | --- |',
  );
  const rows = [
    ...REQUESTS.map(({ name, path }) => ({ name, key: path, goal: true })),
    ...COMPRESSED.map(({ name, path, coding }) => ({ name, key: `${path} ${coding}`, goal: false })),
  ];
  for (const { name, key, goal } of rows) {
    const c = results.get(`c ${key}`) ?? [];
    const d = results.get(`d ${key}`) ?? [];
    const cCpu = median(c.map((m) => m.cpuMicros));
    const dCpu = median(d.map((m) => m.cpuMicros));
    const ratio = dCpu / cCpu;
    const byRound = d.map((m, i) => (m.cpuMicros / (c[i]?.cpuMicros ?? Number.NaN)).toFixed(2)).join(', ');
    const verdict = goal ? (ratio <= CPU_GOAL ? 'met' : '**not met**') : '';
    lines.push(
      `| ${name} | ${Math.round(cCpu)} | ${Math.round(dCpu)} | ${ratio.toFixed(2)} | ${byRound} | ${verdict} |`,
    );
  }
  return lines;
}

await runBench(main);
