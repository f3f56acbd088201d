/**
 * A cut Redis and a hung PostgreSQL under steady load: latency percentiles of Pricepoint on
 * PostgreSQL + Redis (each reached through a TCP proxy) while both are healthy, while Redis is cut
 * (connections dropped and refused: Redis down, the `local` fallback counting per instance) and
 * back again, then while its database is frozen (the proxy stops moving bytes, connections stay
 * open: what SIGSTOP on PostgreSQL does) and thawed again. Each phase's p99 is also shown as a ratio
 * to the healthy phase's p99 of the same run, which says more than milliseconds on a shared machine.
 * The load is open-loop (requests go out on a fixed schedule, whether earlier ones have come back or
 * not), so a hung request cannot slow the load down and hide itself. Each tenth request is `/usage`,
 * each tenth a day never asked before (it needs the database), the rest a cached day of a cached
 * key. Prints one table and writes it to bench/results-frozen-database.md. Not a test: the figures
 * depend on the machine.
 *
 * Run: `npm run build && npx tsx bench/frozen-database.ts`. Settings (environment): BENCH_RATE
 * (requests a second, 100), BENCH_PHASE_SECONDS (10), BENCH_WARM_UP_SECONDS (5: the same load
 * before `healthy`, not counted, so that the baseline is not a cold server's), BENCH_DATABASE_URL
 * (postgres://postgres@127.0.0.1:5432/test: the server on which a database is created and dropped),
 * BENCH_REDIS_URL (redis://127.0.0.1:6379).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { addDays, localDate } from '../src/domain/time/days.js';
import { startTcpProxy } from '../test/helpers/tcp-proxy.js';
import { CLI, cleanups, cli, envWith, freshDatabase, httpsCall, REPO, runBench, startChild } from './lib.js';

const RATE = Number(process.env.BENCH_RATE ?? 100);
const PHASE_SECONDS = Number(process.env.BENCH_PHASE_SECONDS ?? 10);
const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 5);
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** A request with no answer after this counts as failed (status 0), as does a connection error. */
const GIVE_UP_MS = 30_000;

/** Redis is cut right after `healthy`, so that its baseline is measured under the same machine load. */
const PHASES = ['healthy', 'Redis cut', 'Redis back', 'database frozen', 'database thawed'] as const;
type Phase = (typeof PHASES)[number];
const KINDS = ['cached day', 'usage', 'uncached day'] as const;
type Kind = (typeof KINDS)[number];

interface Sample {
  readonly phase: Phase;
  readonly kind: Kind;
  readonly status: number;
  readonly ms: number;
}

/** The `q` quantile of sorted values. */
const quantile = (sorted: readonly number[], q: number) =>
  sorted[Math.max(0, Math.ceil(sorted.length * q) - 1)] ?? Number.NaN;

function table(samples: readonly Sample[]): string {
  const lines = [
    '| phase | request | answers | statuses | p50 ms | p99 ms | max ms | p99 / healthy |',
    '| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |',
  ];
  const p99Of = (phase: Phase, kind: Kind) =>
    quantile(
      samples
        .filter((s) => s.phase === phase && s.kind === kind)
        .map((s) => s.ms)
        .sort((a, b) => a - b),
      0.99,
    );
  for (const phase of PHASES) {
    for (const kind of KINDS) {
      const some = samples.filter((s) => s.phase === phase && s.kind === kind);
      const counts = new Map<number, number>();
      for (const s of some) counts.set(s.status, (counts.get(s.status) ?? 0) + 1);
      const statuses = [...counts]
        .sort(([a], [b]) => a - b)
        .map(([status, n]) => `${status === 0 ? 'failed' : status}: ${n}`)
        .join(', ');
      const ms = some.map((s) => s.ms).sort((a, b) => a - b);
      const f = (v: number) => v.toFixed(1);
      lines.push(
        `| ${phase} | ${kind} | ${some.length} | ${statuses} | ${f(quantile(ms, 0.5))} | ${f(quantile(ms, 0.99))} | ${f(ms.at(-1) ?? Number.NaN)} | ${(quantile(ms, 0.99) / p99Of('healthy', kind)).toFixed(2)} |`,
      );
    }
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const database = await freshDatabase(DATABASE_URL, 'pp_frozen_bench');
  if ('why' in database) throw new Error(database.why);
  const proxy = await startTcpProxy(Number(new URL(DATABASE_URL).port || 5432));
  cleanups.push(() => proxy.close());
  const redis = new URL(REDIS_URL);
  const redisProxy = await startTcpProxy(Number(redis.port || 6379));
  cleanups.push(() => redisProxy.close());
  redis.port = String(redisProxy.port);
  const dir = await mkdtemp(join(tmpdir(), 'pricepoint-frozen-bench-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const config = join(dir, 'config.json');
  const huge = [{ name: 'second', limit: 1_000_000_000, windowSeconds: 1 }];
  await writeFile(config, JSON.stringify({ tiers: { bench: { limits: huge, countPer: 'key' } } }));
  const viaProxy = new URL(database.url);
  viaProxy.port = String(proxy.port);
  const settings = {
    PRICEPOINT_CONFIG: config,
    PRICEPOINT_PORT: '0',
    PRICEPOINT_HOST: '127.0.0.1',
    PRICEPOINT_DATA_DIR: join(dir, 'data'),
    PRICEPOINT_DATABASE_URL: viaProxy.toString(),
    PRICEPOINT_REDIS_URL: redis.toString(),
    // The default, spelt out: while Redis is cut each instance counts on its own.
    PRICEPOINT_REDIS_FALLBACK: 'local',
    PRICEPOINT_REDIS_PREFIX: `pp-frozen-bench-${randomBytes(5).toString('hex')}`,
  };
  await cli(['dev-data'], settings);
  const { key } = JSON.parse(
    await cli(['keys', 'create', '--tier', 'bench', '--name', 'bench', '--json'], settings),
  ) as { key: string };
  const { port } = await startChild([CLI, 'serve', '--json'], envWith(settings), 'stderr');
  const ca = readFileSync(join(dir, 'data', 'tls', 'localhost-cert.pem'), 'utf8');
  const agent = new Agent({ keepAlive: true, maxSockets: 512 });
  cleanups.push(async () => agent.destroy());

  const today = localDate(Date.now(), 'Europe/Oslo');
  let daysBack = 0;
  const pathOf = (kind: Kind) =>
    kind === 'cached day'
      ? '/api/v1/prices/today?symbols=NO1'
      : kind === 'usage'
        ? '/api/v1/usage'
        : `/api/v1/prices/${addDays(today, -++daysBack)}?symbols=NO1`;
  const ask = async (kind: Kind): Promise<{ status: number; ms: number }> => {
    const started = performance.now();
    const call = httpsCall(port, ca, agent, 'GET', pathOf(kind), { 'x-api-key': key });
    const late = sleep(GIVE_UP_MS).then(() => ({ status: 0, body: '' }));
    const answer = await Promise.race([call, late]).catch(() => ({ status: 0, body: '' }));
    return { status: answer.status, ms: performance.now() - started };
  };
  for (const kind of ['cached day', 'usage'] as const) {
    const { status } = await ask(kind);
    if (status !== 200) throw new Error(`warming up ${kind}: ${status}`);
  }

  const samples: Sample[] = [];
  const pending: Promise<void>[] = [];
  const gap = 1000 / RATE;
  let sent = 0;
  /** Rate-limit decisions the `local` fallback took so far (from /metrics): proof Redis was away. */
  const localDecisions = async () => {
    const { body } = await httpsCall(port, ca, agent, 'GET', '/metrics', {});
    return Number(/^pricepoint_rate_limit_fallbacks_total\{policy="local"\} (\d+)/m.exec(body)?.[1] ?? 0);
  };
  let decidedLocally = 0;
  for (const phase of ['warm-up', ...PHASES] as const) {
    if (phase === 'Redis back') decidedLocally = await localDecisions();
    if (phase === 'database frozen') proxy.stall();
    if (phase === 'database thawed') await proxy.restore();
    if (phase === 'Redis cut') await redisProxy.cut();
    if (phase === 'Redis back') await redisProxy.restore();
    const seconds = phase === 'warm-up' ? WARM_UP_SECONDS : PHASE_SECONDS;
    console.error(`${phase}: ${seconds} s at ${RATE} requests a second`);
    const start = performance.now();
    for (let i = 0; i < RATE * seconds; i++) {
      const due = start + i * gap;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const kind: Kind = sent % 10 === 0 ? 'usage' : sent % 10 === 5 ? 'uncached day' : 'cached day';
      sent++;
      const answered = ask(kind);
      if (phase !== 'warm-up') {
        pending.push(answered.then(({ status, ms }) => void samples.push({ phase, kind, status, ms })));
      } else pending.push(answered.then(() => undefined));
    }
  }
  await Promise.all(pending);

  const result = `${table(samples)}

Rate-limit decisions taken locally (Redis away) by the end of \`Redis cut\`: ${decidedLocally}.`;
  console.log(result);
  const doc = `# A frozen PostgreSQL and a cut Redis under load (bench/frozen-database.ts)

${new Date().toISOString().slice(0, 10)}, ${RATE} requests a second, ${WARM_UP_SECONDS} s of warm-up, then ${PHASE_SECONDS} s per phase, open loop;
Redis cut by a TCP proxy (connections dropped, new ones refused) at the start of \`Redis cut\` and
let through again at the start of \`Redis back\`; the database frozen by another, which stops moving
bytes at the start of \`database frozen\` and moves them again at the start of \`database thawed\`. Default
settings (\`PRICEPOINT_DATABASE_TIMEOUT_MS\` 1000, \`PRICEPOINT_REDIS_TIMEOUT_MS\` 200,
\`PRICEPOINT_REDIS_FALLBACK\` local). p99 / healthy: the phase's p99 over the healthy phase's, same
request kind.

${result}
`;
  await writeFile(join(REPO, 'bench', 'results-frozen-database.md'), doc);
}

await runBench(main);
