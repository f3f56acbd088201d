/**
 * What a household's answer costs: a day of NO1 converted into NOK per kWh, under a tariff (VAT, a
 * fixed amount, a grid fee by local hour) and ranked (`include=rank`, which also reads the 7 days
 * before), against the plain day answer, in the same run. Benchmark, not a test (bench/README.md).
 *
 * Counted, not timed, as bench/instructions.ts counts: each server runs under `valgrind
 * --tool=callgrind` with instrumentation off, is warmed up with BENCH_WARMUP requests of a path, then
 * counting is switched on for exactly BENCH_REQUESTS keep-alive HTTPS requests, one at a time (every
 * thread of the process), twice. Three servers, one after the other, on the same data:
 *  cached    `pricepoint serve` as deployed: a repeated answer comes from the answer cache
 *  unkept    the same, but every request is a URL the answer cache has never seen (`tz=Europe/Oslo`,
 *            NO1's own zone, in another letter case each time, as a client defeating the cache
 *            would send): the answer is built again, from the days and the levels' reference sums
 *            the read caches keep
 *  uncached  PRICEPOINT_READ_CACHE_MS=0: every request reads its days from SQLite and builds the
 *            answer again (conversion, fees, VAT, ranks, the reference week)
 * The goals: cached, the household answer costs at most 1.2 times the plain one; unkept, at most 3
 * times. Then, for a sense of time, each server again without valgrind: the median wall time of as
 * many sequential requests (noisy on a shared machine; the instructions are the measure).
 *
 * Only 127.0.0.1; it stops by itself. Run with `npm run bench:consumer-prices` (it builds first;
 * needs valgrind). Writes bench/results-consumer-prices.md. BENCH_WARMUP (1000) and BENCH_REQUESTS
 * (500) for the cached server, BENCH_UNCACHED_WARMUP (100) and BENCH_UNCACHED_REQUESTS (100) for the
 * unkept and uncached ones (unkept: at most 1,023 requests in all, the spellings of the zone).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { control, mean, newestTotal, requireValgrind, spread, thousands } from './callgrind.js';
import { CLI, cleanups, cli, envWith, median, REPO, runBench, startChild, stop } from './lib.js';

const WARMUP = Number(process.env.BENCH_WARMUP ?? 1000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 500);
// An uncached answer does the same work every time and costs many times a cached one: fewer do.
const UNCACHED_WARMUP = Number(process.env.BENCH_UNCACHED_WARMUP ?? 100);
const UNCACHED_REQUESTS = Number(process.env.BENCH_UNCACHED_REQUESTS ?? 100);
const TIER = 'bench';
const GOAL = 1.2;
/** Unkept, the household answer costs at most this many times the plain one (bench/README.md). */
const UNKEPT_GOAL = 3;

const PATHS = [
  { name: 'plain', path: '/api/v1/prices/today?symbols=NO1' },
  {
    name: 'household',
    path: '/api/v1/prices/today?symbols=NO1&currency=NOK&unit=kWh&tariff=no1-household&include=rank',
  },
] as const;
type PathName = (typeof PATHS)[number]['name'];
const ALL_MODES = ['cached', 'unkept', 'uncached'] as const;
type Mode = (typeof ALL_MODES)[number];
/** BENCH_MODES=unkept,uncached counts only those servers (a partial run leaves the results file alone). */
const MODES = ALL_MODES.filter((m) =>
  (process.env.BENCH_MODES ?? ALL_MODES.join(',')).split(',').includes(m),
);

/** Letters of `europe/oslo`: each request of the unkept server spells it in another letter case. */
const SPELLINGS = 2 ** 10;

/**
 * The URL of a path's `n`th request: as it is, or for the unkept server with `tz=Europe/Oslo` (NO1's
 * own zone, so the same days) spelt in the `n`th of its letter cases, a URL the answer cache has
 * never seen, as a client that wants to defeat it would send.
 */
function urlOf(mode: Mode, path: string, n: number): string {
  if (mode !== 'unkept') return path;
  if (n >= SPELLINGS)
    throw new Error(`the unkept server has ${SPELLINGS} spellings of its zone, not ${n + 1}`);
  let bit = 0;
  const tz = [...'europe/oslo'].map((c) => (c === '/' ? c : (n >> bit++) & 1 ? c.toUpperCase() : c));
  return `${path}&tz=${tz.join('')}`;
}

/** The config file: a tier whose limits are never reached, EUR to NOK, the household tariff of docs/tariffs.md. */
const CONFIG = {
  tiers: { [TIER]: { limits: [{ name: 'minute', limit: 1_000_000_000, windowSeconds: 60 }] } },
  fx: { EUR: { NOK: 'EURNOK' } },
  tariffs: {
    'no1-household': {
      currency: 'NOK',
      unit: 'kWh',
      timezone: 'Europe/Oslo',
      vat: [{ from: '2020-01-01', percent: 25 }],
      fixed: [{ from: '2020-01-01', amount: '0.0713' }],
      fees: [
        { from: '2020-01-01', rules: [{ hours: '06:00-22:00', amount: '0.3640' }, { amount: '0.2640' }] },
      ],
    },
  },
};

/** A client of one keep-alive connection: requests go one at a time, as in the counted runs. */
function client(port: number, ca: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca, servername: 'localhost' });
  const send = (path: string, headers: Record<string, string>, method = 'GET', body?: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, method, headers, agent }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.once('error', reject);
      req.end(body);
    });
  return { send, close: () => agent.destroy() };
}

/** Every path must answer 200, and the household one with totals, ranks and the FX rate. */
async function checked(send: ReturnType<typeof client>['send'], path: string, key: string): Promise<void> {
  const answer = await send(path, { 'x-api-key': key });
  if (answer.status !== 200) throw new Error(`${path}: ${answer.status} ${answer.body}`);
  if (path.includes('tariff=') && !/"total":.*"rank":.*"level":/.test(answer.body)) {
    throw new Error(`${path} answered no totals and ranks: ${answer.body.slice(0, 300)}`);
  }
  if (path.includes('tariff=') && !answer.body.includes('"fx":{"symbol":"EURNOK"')) {
    throw new Error(`${path} was not converted with EURNOK: ${answer.body.slice(0, 300)}`);
  }
}

/** Instructions per request of each path, counted twice, on one server started under callgrind. */
async function count(
  mode: Mode,
  env: NodeJS.ProcessEnv,
  dir: string,
  ca: string,
  key: string,
  [warmup, requests]: [number, number],
) {
  const under = [
    'valgrind',
    '--tool=callgrind',
    '--instr-atstart=no',
    `--callgrind-out-file=${dir}/cg.%p.out`,
  ];
  const { child, port } = await startChild([CLI, 'serve', '--json'], env, 'stderr', under);
  const pid = child.pid ?? 0;
  const counts = new Map<PathName, number[]>();
  const { send, close } = client(port, ca);
  const headers = { 'x-api-key': key };
  try {
    for (const spec of PATHS) {
      let n = 0;
      await checked(send, urlOf(mode, spec.path, n++), key);
      for (let i = 0; i < warmup; i++) await send(urlOf(mode, spec.path, n++), headers);
      const runs: number[] = [];
      for (let run = 0; run < 2; run++) {
        const dumpsBefore = readdirSync(dir).filter((f) => f.startsWith(`cg.${pid}.out.`)).length;
        control(pid, '--zero');
        control(pid, '--instr=on');
        for (let i = 0; i < requests; i++) {
          const answer = await send(urlOf(mode, spec.path, n++), headers);
          if (answer.status !== 200) throw new Error(`${spec.path}: ${answer.status}`);
        }
        control(pid, '--instr=off');
        control(pid, '--dump');
        runs.push(newestTotal(dir, pid, dumpsBefore) / requests);
      }
      counts.set(spec.name, runs);
      console.error(`${spec.name}: ${runs.map((r) => Math.round(r)).join(', ')} instructions per request`);
    }
  } finally {
    close();
    await stop(child);
  }
  return counts;
}

/** Median wall time per request of each path, in microseconds, on one server without valgrind. */
async function time(
  mode: Mode,
  env: NodeJS.ProcessEnv,
  ca: string,
  key: string,
  [warmup, requests]: [number, number],
) {
  const { child, port } = await startChild([CLI, 'serve', '--json'], env, 'stderr');
  const { send, close } = client(port, ca);
  const headers = { 'x-api-key': key };
  const times = new Map<PathName, number>();
  try {
    for (const spec of PATHS) {
      let n = 0;
      await checked(send, urlOf(mode, spec.path, n++), key);
      for (let i = 0; i < warmup; i++) await send(urlOf(mode, spec.path, n++), headers);
      const each: number[] = [];
      for (let i = 0; i < requests; i++) {
        const start = process.hrtime.bigint();
        await send(urlOf(mode, spec.path, n++), headers);
        each.push(Number(process.hrtime.bigint() - start) / 1000);
      }
      times.set(spec.name, median(each));
    }
  } finally {
    close();
    await stop(child);
  }
  return times;
}

async function main(): Promise<void> {
  requireValgrind();
  const dir = await mkdtemp(join(tmpdir(), 'pricepoint-consumer-prices-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const config = join(dir, 'config.json');
  await writeFile(config, JSON.stringify(CONFIG));
  const settings = {
    PRICEPOINT_CONFIG: config,
    PRICEPOINT_PORT: '0',
    PRICEPOINT_HOST: '127.0.0.1',
    PRICEPOINT_DATA_DIR: join(dir, 'data'),
  };

  // A first start, not counted: the development data (EURNOK among it, a rate for every day NO1
  // has), the certificate and a key.
  const first = await startChild([CLI, 'serve', '--dev-data', '--json'], envWith(settings), 'stderr');
  const { key } = JSON.parse(
    await cli(
      ['keys', 'create', '--tier', TIER, '--name', 'bench', '--scopes', 'read,write,admin', '--json'],
      settings,
    ),
  ) as { key: string };
  const ca = readFileSync(join(dir, 'data', 'tls', 'localhost-cert.pem'), 'utf8');
  await stop(first.child);

  const envs: Record<Mode, NodeJS.ProcessEnv> = {
    cached: envWith(settings),
    unkept: envWith(settings),
    uncached: envWith({ ...settings, PRICEPOINT_READ_CACHE_MS: '0' }),
  };
  const sizes: Record<Mode, [number, number]> = {
    cached: [WARMUP, REQUESTS],
    unkept: [UNCACHED_WARMUP, UNCACHED_REQUESTS],
    uncached: [UNCACHED_WARMUP, UNCACHED_REQUESTS],
  };
  const counts = new Map<Mode, Map<PathName, number[]>>();
  const times = new Map<Mode, Map<PathName, number>>();
  for (const mode of MODES) {
    console.error(`${mode}, under callgrind:`);
    counts.set(mode, await count(mode, envs[mode], dir, ca, key, sizes[mode]));
  }
  for (const mode of MODES) times.set(mode, await time(mode, envs[mode], ca, key, sizes[mode]));

  const of = (mode: Mode, name: PathName) => counts.get(mode)?.get(name) ?? [Number.NaN];
  const lines = [
    `Instructions per request (callgrind, every thread), keep-alive HTTPS requests one at a time: cached ${REQUESTS} after ${WARMUP} uncounted, unkept and uncached ${UNCACHED_REQUESTS} after ${UNCACHED_WARMUP}, each counted twice (spread = difference of the two / their mean); wall time: median of as many sequential requests without valgrind. NO1 of the development data set (96 quarter hours); household = \`currency=NOK&unit=kWh&tariff=no1-household&include=rank\`; unkept: every URL new (\`tz=Europe/Oslo\` in another letter case), so no answer comes from the answer cache; uncached: \`PRICEPOINT_READ_CACHE_MS=0\`. Node ${process.version}.`,
    '',
    '| server | path | instructions | spread | household / plain | goal | median wall time |',
    '| --- | --- | ---: | ---: | ---: | --- | ---: |',
  ];
  for (const mode of MODES) {
    const plain = mean(of(mode, 'plain'));
    for (const spec of PATHS) {
      const runs = of(mode, spec.name);
      const ratio = mean(runs) / plain;
      const limit = { cached: GOAL, unkept: UNKEPT_GOAL, uncached: undefined }[mode];
      const goal =
        spec.name === 'household' && limit !== undefined
          ? `≤ ${limit.toFixed(2)} ${ratio <= limit ? 'met' : 'not met'}`
          : '';
      const wall = times.get(mode)?.get(spec.name) ?? Number.NaN;
      lines.push(
        `| ${mode} | ${spec.name} | ${thousands(mean(runs))} | ${(spread(runs) * 100).toFixed(1)}% | ${spec.name === 'plain' ? '' : ratio.toFixed(2)} | ${goal} | ${wall.toFixed(0)} µs |`,
      );
    }
  }
  if (MODES.length < ALL_MODES.length) {
    console.log(lines.join('\n'));
    return;
  }
  const uncachedOverCached = mean(of('uncached', 'household')) / mean(of('cached', 'household'));
  lines.push(
    '',
    `Uncached, the household answer costs ${uncachedOverCached.toFixed(1)} times its cached answer.`,
  );
  const table = lines.join('\n');
  console.log(table);
  writeFileSync(
    join(REPO, 'bench', 'results-consumer-prices.md'),
    `# npm run bench:consumer-prices\n\n${table}\n`,
  );
}

await runBench(main);
