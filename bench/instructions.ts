/**
 * Instructions per request, counted, not timed: wall time on a shared machine moves by tens of
 * percent from one run to the next, while `valgrind --tool=callgrind` counts the same instructions
 * for the same work whatever else the machine does. Benchmark, not a test.
 *
 * Each server runs under callgrind with instrumentation off; it is warmed up (BENCH_WARMUP requests
 * of the path, so V8 has compiled what it will compile), then counting is switched on for exactly
 * BENCH_REQUESTS keep-alive requests, one at a time, and off again (`callgrind_control`). Every
 * thread of the process is counted: the main thread, V8's compiler and GC threads, libuv's pool.
 * Counts are made until the last BENCH_COUNTS (3) agree within BENCH_STEADY (3%), at most
 * BENCH_MAX_COUNTS (12) times; the table takes the median of the last three and prints their spread.
 *
 * Servers, over HTTPS and over plain HTTP, all with the same certificate and TLS settings:
 *  raw      `node:https` / `node:http` sending Pricepoint's own head and body bytes (bench/setups/raw-https.mjs)
 *  fastify  Fastify 5 with @fastify/rate-limit and a key check, the same bytes (bench/setups/fastify-minimal.mjs)
 *  pricepoint  `pricepoint serve --dev-data` on the embedded default; plain HTTP with PRICEPOINT_INSECURE_HTTP
 * Paths: one series (`?symbols=NO1`), the full answer, the full answer with Brotli.
 *
 * Run with `npm run bench:instructions` (it builds first; needs valgrind). Writes
 * bench/results-instructions.md. BENCH_WARMUP (8000), BENCH_WARMUP_MS (75000), BENCH_REQUESTS
 * (1000), BENCH_COUNTS, BENCH_STEADY, BENCH_MAX_COUNTS. To count only some of it while working on one path: BENCH_SETUPS
 * (`raw,pricepoint`), BENCH_PROTOCOLS (`https`), BENCH_PATHS (`one series`); a partial run prints
 * its table and leaves the results file alone. BENCH_KEEP=1 keeps the dumps for `callgrind_annotate`.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { control, median, newestTotal, requireValgrind, thousands } from './callgrind.js';
import { CLI, cleanups, cli, envWith, REPO, runBench, startChild, stop } from './lib.js';

// V8 was still optimising after 4,000 requests (the two counts of a setup differed by up to 60%);
// by 8,000 they agree within a few percent.
const WARMUP = Number(process.env.BENCH_WARMUP ?? 8000);
/**
 * Warm-up also lasts this long from the server's start (BENCH_WARMUP_MS, 75 s), so that what
 * happens once in a server's first minute falls into it and not into a count: the first roll-over
 * of the one-minute limit windows (code that first runs then is compiled again, about 100,000
 * instructions a request over a count) and the first event prune, a minute after the start.
 */
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 75_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1000);
/**
 * Counts that must agree, made one after another in one process. Now and then a count holds work
 * that is no part of a request's steady cost and that callgrind's slowness (about fifty times)
 * makes fifty times more frequent per request: a major GC (concurrent marking and sweeping), and
 * after it TurboFan compiling again the code it threw away (V8 drops optimised code that holds
 * objects the GC found dead, `--trace-deopt` says "weak objects"), or the limits' window rolling
 * over each minute (the major GCs seen doing this were the memory reducer's, now off: `UNDER_LOAD`).
 * Such a phase can last several counts (a run of 2026-11-25: 157,000, 675,000,
 * 159,000, 166,000 and 111,000 for a path that counts 92,000 otherwise), so neither the median nor
 * the least of a fixed number of counts is safe. Counting goes on until the last COUNTS agree
 * within STEADY of their median, at most MAX_COUNTS times; a path that never settles is marked.
 */
const COUNTS = Number(process.env.BENCH_COUNTS ?? 3);
/**
 * What every server is started with so that V8 runs as under load, where callgrind makes every
 * rate look fifty times lower:
 * - The young generation held at its largest (what `--max-semi-space-size` lets it grow to). V8
 *   shrinks it when the allocation rate it measures is low (under about 1,000 bytes a
 *   millisecond): after a major GC it shrank, and a scavenge then fell into every count (one path
 *   went from 91,000 to 98,600 a request and stayed there).
 * - No memory reducer. It starts a major GC when the allocation rate says the process went idle,
 *   which under callgrind it always seems to: `--trace-gc` showed every major GC in the counts of
 *   2026-11-25 as "Mark-Compact (reduce)". After it TurboFan compiles again the code it threw away
 *   (V8 drops optimised code that holds objects the GC found dead, "weak objects"): counts of
 *   600,000, then 150,000, then a plateau of 101,000 to 105,000 for a path that counts 92,000,
 *   which three counts in a row could mistake for settled. A loaded server is never idle; major
 *   GCs still come when the old generation fills, as they would there.
 */
const UNDER_LOAD = ['--min-semi-space-size=64', '--no-memory-reducer'];
const STEADY = Number(process.env.BENCH_STEADY ?? 0.03);
const MAX_COUNTS = Number(process.env.BENCH_MAX_COUNTS ?? 12);
/** How far apart counts are, as a share of their median. */
const spreadOf = (values: number[]) => (Math.max(...values) - Math.min(...values)) / median(values);
/** Whether the last counts of a path agree, so that counting stops. */
const settled = (kept: number[]) => kept.length === COUNTS && spreadOf(kept) <= STEADY;
const TIER = 'bench';
const ALL_PATHS = [
  { name: 'one series', path: '/api/v1/prices/today?symbols=NO1', coding: undefined },
  { name: 'full answer', path: '/api/v1/prices/today', coding: undefined },
  { name: 'full, Brotli', path: '/api/v1/prices/today', coding: 'br' },
] as const;
type PathSpec = (typeof ALL_PATHS)[number];
const ALL_PROTOCOLS = ['https', 'http'] as const;
type Protocol = (typeof ALL_PROTOCOLS)[number];
const ALL_SETUPS = ['raw', 'fastify', 'pricepoint'] as const;
type SetupName = (typeof ALL_SETUPS)[number];

/** The entries of `all` named in the comma-separated `setting`, or all of them when it is unset. */
function chosen<T>(all: readonly T[], setting: string | undefined, name: (t: T) => string): T[] {
  if (setting === undefined || setting === '') return [...all];
  const wanted = setting.split(',').map((s) => s.trim());
  const found = all.filter((t) => wanted.includes(name(t)));
  if (found.length !== wanted.length) throw new Error(`unknown entry in ${setting}`);
  return found;
}
const PATHS = chosen(ALL_PATHS, process.env.BENCH_PATHS, (p) => p.name);
const PROTOCOLS = chosen(ALL_PROTOCOLS, process.env.BENCH_PROTOCOLS, (p) => p);
const SETUPS = chosen(ALL_SETUPS, process.env.BENCH_SETUPS, (s) => s);
const PARTIAL = PATHS.length + PROTOCOLS.length + SETUPS.length < 3 + 2 + 3;

/** Goals, as ratios of Pricepoint's instructions per request to raw's on the same bytes. */
const GOALS: Record<Protocol, Record<PathSpec['name'], number>> = {
  https: { 'one series': 1.1, 'full answer': 1.05, 'full, Brotli': 1.25 },
  http: { 'one series': 1.25, 'full answer': 1.25, 'full, Brotli': 1.25 },
};

interface Answer {
  status: number;
  headers: string[];
  body: Buffer;
}

/** A client of one keep-alive connection: requests go one at a time, as in the counted runs. */
function client(protocol: Protocol, port: number, ca: string) {
  const agent =
    protocol === 'https'
      ? new HttpsAgent({ keepAlive: true, maxSockets: 1, ca, servername: 'localhost' })
      : new HttpAgent({ keepAlive: true, maxSockets: 1 });
  const request = protocol === 'https' ? httpsRequest : httpRequest;
  const send = (path: string, headers: Record<string, string>) =>
    new Promise<Answer>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.rawHeaders, body: Buffer.concat(chunks) }),
        );
      });
      req.once('error', reject);
      req.end();
    });
  return { send, close: () => agent.destroy() };
}

interface Count {
  /** Every count made, in order. */
  runs: number[];
  /** The last `COUNTS` of them, which the table goes by (`settled` or not). */
  kept: number[];
}

/** The fields Node writes itself, which the setups do not copy from Pricepoint's answer. */
const NODE_OWN_FIELDS = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);
/** The names of an answer's header fields but Node's own, sorted: what every setup must send alike. */
const fieldNames = (rawHeaders: string[]) =>
  rawHeaders
    .filter((_, i) => i % 2 === 0)
    .map((name) => name.toLowerCase())
    .filter((name) => !NODE_OWN_FIELDS.has(name))
    .sort()
    .join(', ');

/** Where the setups look up the answer to `spec` in BENCH_BODIES (bench/setups/raw-https.mjs). */
const bodyKey = (spec: PathSpec) => (spec.coding ? `${spec.path} ${spec.coding}` : spec.path);

/** Header fields (name, value, ...) without Strict-Transport-Security. */
function withoutHsts(headers: string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i] ?? '';
    if (name.toLowerCase() !== 'strict-transport-security') kept.push(name, headers[i + 1] ?? '');
  }
  return kept;
}

/** Starts `setup` under callgrind and counts each path until `COUNTS` counts agree (`COUNTS` above). */
async function countSetup(
  setup: SetupName,
  protocol: Protocol,
  env: NodeJS.ProcessEnv,
  args: string[],
  from: 'stdout' | 'stderr',
  dir: string,
  ca: string,
  key: string,
  /** The field names of Pricepoint's answer on each path over `protocol` (`fieldNames`). */
  names: ReadonlyMap<string, string>,
): Promise<Map<string, Count>> {
  const under = [
    'valgrind',
    '--tool=callgrind',
    '--instr-atstart=no',
    `--callgrind-out-file=${dir}/cg.%p.out`,
  ];
  const { child, port } = await startChild(args, env, from, under, UNDER_LOAD);
  const started = Date.now();
  const pid = child.pid ?? 0;
  const counts = new Map<string, Count>();
  const { send, close } = client(protocol, port, ca);
  try {
    for (const spec of PATHS) {
      const headers = { 'x-api-key': key, ...(spec.coding && { 'accept-encoding': spec.coding }) };
      const first = await send(spec.path, headers);
      if (first.status !== 200) throw new Error(`${setup} ${protocol} ${spec.path}: ${first.status}`);
      // The same answer, or the counts compare unlike work.
      if (fieldNames(first.headers) !== names.get(spec.name)) {
        throw new Error(`${setup} ${protocol} ${spec.name} sends the fields ${fieldNames(first.headers)}`);
      }
      for (let i = 0; i < WARMUP || Date.now() - started < WARMUP_MS; i++) await send(spec.path, headers);
      const runs: number[] = [];
      let kept: number[] = [];
      while (runs.length < MAX_COUNTS) {
        const dumpsBefore = readdirSync(dir).filter((f) => f.startsWith(`cg.${pid}.out.`)).length;
        control(pid, '--zero');
        control(pid, '--instr=on');
        for (let i = 0; i < REQUESTS; i++) await send(spec.path, headers);
        control(pid, '--instr=off');
        control(pid, '--dump');
        runs.push(newestTotal(dir, pid, dumpsBefore) / REQUESTS);
        kept = runs.slice(-COUNTS);
        if (settled(kept)) break;
      }
      counts.set(spec.name, { runs, kept });
      console.error(`${setup} ${protocol} ${spec.name}: ${runs.map((r) => Math.round(r)).join(', ')}`);
    }
  } finally {
    close();
    await stop(child);
  }
  return counts;
}

async function main(): Promise<void> {
  requireValgrind();
  const dir = await mkdtemp(join(tmpdir(), 'pricepoint-instructions-'));
  // BENCH_KEEP=1 keeps the callgrind dumps, to read where the instructions go (bench/README.md).
  if (process.env.BENCH_KEEP === '1') console.error(`callgrind dumps kept in ${dir}`);
  else cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const config = join(dir, 'config.json');
  const huge = [{ name: 'minute', limit: 1_000_000_000, windowSeconds: 60 }];
  await writeFile(config, JSON.stringify({ tiers: { [TIER]: { limits: huge } } }));
  const settings = {
    PRICEPOINT_CONFIG: config,
    PRICEPOINT_PORT: '0',
    PRICEPOINT_HOST: '127.0.0.1',
    PRICEPOINT_DATA_DIR: join(dir, 'data'),
  };

  // A first start, not counted: the data, the certificate, a key, and the bytes raw and Fastify send.
  const first = await startChild([CLI, 'serve', '--dev-data', '--json'], envWith(settings), 'stderr');
  const { key } = JSON.parse(
    await cli(['keys', 'create', '--tier', TIER, '--name', 'bench', '--json'], settings),
  );
  const certFile = join(dir, 'data', 'tls', 'localhost-cert.pem');
  const ca = readFileSync(certFile, 'utf8');
  const bodies: Record<string, { contentType: string; base64: string; headers: string[] }> = {};
  const { send, close } = client('https', first.port, ca);
  for (const spec of PATHS) {
    const answer = await send(spec.path, {
      'x-api-key': key,
      ...(spec.coding && { 'accept-encoding': spec.coding }),
    });
    if (answer.status !== 200) throw new Error(`Pricepoint answered ${answer.status} to ${spec.path}`);
    const headers: string[] = [];
    for (let i = 0; i < answer.headers.length; i += 2) {
      const name = answer.headers[i] ?? '';
      if (!NODE_OWN_FIELDS.has(name.toLowerCase())) headers.push(name, answer.headers[i + 1] ?? '');
    }
    const contentType = headers[headers.findIndex((h) => h.toLowerCase() === 'content-type') + 1] ?? '';
    bodies[bodyKey(spec)] = {
      contentType,
      base64: answer.body.toString('base64'),
      headers,
    };
  }
  close();
  await stop(first.child);
  // Over plain HTTP Pricepoint leaves out Strict-Transport-Security, so raw and Fastify do too.
  const bodiesOver: Record<Protocol, typeof bodies> = {
    https: bodies,
    http: Object.fromEntries(
      Object.entries(bodies).map(([url, answer]) => [
        url,
        { ...answer, headers: withoutHsts(answer.headers) },
      ]),
    ),
  };

  const results = new Map<string, Map<string, Count>>();
  for (const protocol of PROTOCOLS) {
    const plain = protocol === 'http' ? '1' : '0';
    const bodiesFile = join(dir, `bodies-${protocol}.json`);
    await writeFile(bodiesFile, JSON.stringify(bodiesOver[protocol]));
    const names = new Map(
      PATHS.map((spec) => [spec.name, fieldNames(bodiesOver[protocol][bodyKey(spec)]?.headers ?? [])]),
    );
    const setupEnv = envWith({
      BENCH_CERT: certFile,
      BENCH_KEY: join(dir, 'data', 'tls', 'localhost-key.pem'),
      BENCH_BODIES: bodiesFile,
      BENCH_API_KEY: key,
      BENCH_PLAIN: plain,
    });
    const pricepointEnv = envWith({
      ...settings,
      ...(plain === '1' && { PRICEPOINT_INSECURE_HTTP: 'true' }),
    });
    const starts: Record<SetupName, [NodeJS.ProcessEnv, string[], 'stdout' | 'stderr']> = {
      raw: [setupEnv, [join(REPO, 'bench', 'setups', 'raw-https.mjs')], 'stdout'],
      fastify: [setupEnv, [join(REPO, 'bench', 'setups', 'fastify-minimal.mjs')], 'stdout'],
      pricepoint: [pricepointEnv, [CLI, 'serve', '--json'], 'stderr'],
    };
    for (const setup of SETUPS) {
      const [env, args, from] = starts[setup];
      results.set(
        `${setup} ${protocol}`,
        await countSetup(setup, protocol, env, args, from, dir, ca, key, names),
      );
    }
  }

  const lines = [
    `Instructions per request (callgrind, every thread): ${REQUESTS} keep-alive requests after ${WARMUP} uncounted, counted again until ${COUNTS} counts in a row agree within ${STEADY * 100}% (at most ${MAX_COUNTS} counts), the median of those ${COUNTS} taken. Spread = (highest - lowest) / median of the ${COUNTS}, with the counts made in brackets; "unsteady" where they never agreed. Node ${process.version}.`,
    '',
    '| protocol | path | raw | Fastify + rate-limit | Pricepoint | Pricepoint / raw | goal | Fastify / raw | spread (raw, Fastify, Pricepoint) |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
  ];
  for (const protocol of PROTOCOLS) {
    for (const spec of PATHS) {
      const of = (setup: SetupName): Count =>
        results.get(`${setup} ${protocol}`)?.get(spec.name) ?? { runs: [Number.NaN], kept: [Number.NaN] };
      const [raw, fastify, pricepoint] = ALL_SETUPS.map((s) => median(of(s).kept)) as [
        number,
        number,
        number,
      ];
      const ratio = pricepoint / raw;
      const goal = GOALS[protocol][spec.name];
      const spreads = ALL_SETUPS.map((s) => {
        const count = of(s);
        const unsteady = settled(count.kept) ? '' : ' unsteady';
        return `${(spreadOf(count.kept) * 100).toFixed(1)}% (${count.runs.length})${unsteady}`;
      }).join(', ');
      lines.push(
        `| ${protocol.toUpperCase()} | ${spec.name} | ${thousands(raw)} | ${thousands(fastify)} | ${thousands(pricepoint)} | ${ratio.toFixed(2)} | ≤ ${goal.toFixed(2)} ${ratio <= goal ? 'met' : 'not met'}${settled(of('raw').kept) && settled(of('pricepoint').kept) ? '' : ' (unsteady)'} | ${(fastify / raw).toFixed(2)} | ${spreads} |`,
      );
    }
  }
  const table = lines.join('\n');
  console.log(table);
  if (!PARTIAL) {
    writeFileSync(
      join(REPO, 'bench', 'results-instructions.md'),
      `# npm run bench:instructions\n\n${table}\n`,
    );
  }
}

await runBench(main);
