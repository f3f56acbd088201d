/**
 * What a read costs when nothing is cached (bench/README.md "Uncached reads"): `pricepoint serve` on
 * the embedded default with the development data set and `PRICEPOINT_READ_CACHE_MS=0`, so every
 * request reads its days from SQLite and builds its answer. Three paths: the first read of a day
 * (today's NO1), a 31-day range of NO1 and the cheapest three hours of NO1 from yesterday to
 * tomorrow. Benchmark, not a test.
 *
 * Counted, not timed, as bench/instructions.ts counts: the server runs under `valgrind
 * --tool=callgrind` with instrumentation off; each path is warmed up with as many keep-alive HTTPS
 * requests as a round has, then counted `BENCH_ROUNDS` (3) rounds, one request at a time on a new
 * connection per round (its TLS handshake counted), counting switched on and off around each round
 * (every thread of the process); the table takes the median round. The ratios are to the cached read of one series over HTTPS that `npm run bench:instructions`
 * last counted (bench/results-instructions.md), the goals of bench/README.md: at most 10 (a day), 150
 * (31 days) and 40 (the cheapest window) times it.
 *
 * Only 127.0.0.1; it stops by itself. Run with `npm run bench:uncached-reads` (it builds first; needs
 * valgrind; about 15 minutes on 2 cores). `BENCH_PATHS=day,cheapest` counts only those.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { control, median, newestTotal, requireValgrind, spread, thousands } from './callgrind.js';
import { CLI, cleanups, cli, envWith, REPO, runBench, startChild, stop } from './lib.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TIER = 'bench';
const DAY_MS = 86_400_000;

/** The date `days` before today (UTC), well inside the development data's 90 days. */
const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS).toISOString().slice(0, 10);

/** Each path, its URL, the requests a round has (a range costs as much as 15 days) and its goal. */
const PATHS = {
  day: { url: '/api/v1/prices/today?symbols=NO1', requests: 100, goal: 10 },
  range: { url: `/api/v1/prices?from=${daysAgo(32)}&to=${daysAgo(2)}&symbols=NO1`, requests: 15, goal: 150 },
  cheapest: {
    url: '/api/v1/prices/cheapest?symbols=NO1&duration=PT3H&from=yesterday&to=tomorrow',
    requests: 50,
    goal: 40,
  },
} as const;
type PathName = keyof typeof PATHS;
const NAMES = (Object.keys(PATHS) as PathName[]).filter((name) =>
  (process.env.BENCH_PATHS ?? Object.keys(PATHS).join(',')).split(',').includes(name),
);

/** A client of one keep-alive connection: requests go one at a time. */
function client(port: number, ca: string, key: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca, servername: 'localhost' });
  const send = (path: string) =>
    new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, headers: { 'x-api-key': key }, agent }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () =>
          res.statusCode === 200 ? resolve(text) : reject(new Error(`${path}: ${res.statusCode} ${text}`)),
        );
      });
      req.once('error', reject);
      req.end();
    });
  return { send, close: () => agent.destroy() };
}

/** The cached read of one series over HTTPS, as `bench:instructions` last counted it. */
function cachedRead(): number | undefined {
  const results = readFileSync(join(REPO, 'bench', 'results-instructions.md'), 'utf8');
  const row = /^\| HTTPS \| one series \|[^|]*\|[^|]*\| ([\d.]+)k \|/m.exec(results);
  return row?.[1] === undefined ? undefined : Number(row[1]) * 1000;
}

async function main(): Promise<void> {
  requireValgrind();
  const dir = await mkdtemp(join(tmpdir(), 'pricepoint-uncached-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const config = join(dir, 'config.json');
  await writeFile(
    config,
    JSON.stringify({
      tiers: { [TIER]: { limits: [{ name: 'minute', limit: 1_000_000_000, windowSeconds: 60 }] } },
    }),
  );
  const settings = {
    PRICEPOINT_CONFIG: config,
    PRICEPOINT_PORT: '0',
    PRICEPOINT_HOST: '127.0.0.1',
    PRICEPOINT_DATA_DIR: join(dir, 'data'),
  };
  // A first start, not counted: the development data, the certificate and a key.
  const first = await startChild([CLI, 'serve', '--dev-data', '--json'], envWith(settings), 'stderr');
  const { key } = JSON.parse(
    await cli(['keys', 'create', '--tier', TIER, '--name', 'bench', '--json'], settings),
  ) as { key: string };
  const ca = readFileSync(join(dir, 'data', 'tls', 'localhost-cert.pem'), 'utf8');
  await stop(first.child);

  const under = [
    'valgrind',
    '--tool=callgrind',
    '--instr-atstart=no',
    `--callgrind-out-file=${dir}/cg.%p.out`,
  ];
  const env = envWith({ ...settings, PRICEPOINT_READ_CACHE_MS: '0' });
  const { child, port } = await startChild([CLI, 'serve', '--json'], env, 'stderr', under);
  const pid = child.pid ?? 0;
  const counts = new Map<PathName, number[]>();
  // Under valgrind, switching counting on takes longer than the server keeps an idle connection
  // open (5 s): each round opens its own, so every round counts one TLS handshake.
  const inOneConnection = async (url: string, requests: number, between?: () => void) => {
    const { send, close } = client(port, ca, key);
    try {
      between?.();
      for (let i = 0; i < requests; i++) await send(url);
    } finally {
      close();
    }
  };
  try {
    for (const name of NAMES) {
      const { url, requests } = PATHS[name];
      await inOneConnection(url, requests);
      const rounds: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const dumpsBefore = readdirSync(dir).filter((f) => f.startsWith(`cg.${pid}.out.`)).length;
        await inOneConnection(url, requests, () => {
          control(pid, '--zero');
          control(pid, '--instr=on');
        });
        control(pid, '--instr=off');
        control(pid, '--dump');
        rounds.push(newestTotal(dir, pid, dumpsBefore) / requests);
      }
      counts.set(name, rounds);
      console.error(`${name}: ${rounds.map((r) => Math.round(r)).join(', ')} instructions per request`);
    }
  } finally {
    await stop(child);
  }

  const cached = cachedRead();
  const lines = [
    `Instructions per request (callgrind, every thread; median of ${ROUNDS} rounds after one uncounted), keep-alive HTTPS requests one at a time to \`pricepoint serve\` with the development data set and \`PRICEPOINT_READ_CACHE_MS=0\`; "cached read": one series over HTTPS as bench/results-instructions.md last counted it (${cached === undefined ? 'not found' : thousands(cached)}). Node ${process.version}.`,
    '',
    '| path | requests per round | instructions | spread | times the cached read | goal |',
    '| --- | ---: | ---: | ---: | ---: | --- |',
  ];
  for (const name of NAMES) {
    const rounds = counts.get(name) ?? [];
    const ratio = cached === undefined ? Number.NaN : median(rounds) / cached;
    const { goal, requests } = PATHS[name];
    lines.push(
      `| ${name} | ${requests} | ${thousands(median(rounds))} | ${(spread(rounds) * 100).toFixed(1)}% | ${ratio.toFixed(1)} | ≤ ${goal} ${ratio <= goal ? 'met' : 'not met'} |`,
    );
  }
  console.log(lines.join('\n'));
}

await runBench(main);
