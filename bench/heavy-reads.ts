/**
 * `npm run bench:heavy-reads` (also a step of `npm run bench`): whether clients within their limits,
 * asking for tariffed, ranked month ranges that no cache holds, slow down another key's requests
 * (docs/using-the-api.md "Rate limits", "Heavy reads in flight").
 *
 * A real server (`pricepoint serve --dev-data`, the embedded default) with EUR to NOK rates and a
 * household tariff in NOK per kWh. A load process (bench/setups/heavy-load.mjs, 127.0.0.x only)
 * sends a probe: another key reading today's NO1 at `BENCH_PROBE_RATE` (50) a second, open loop;
 * a second one, beside it, sends the attack.
 * Each of `BENCH_ROUNDS` (2) rounds has two phases of `BENCH_SECONDS` (30): the probe alone, then
 * the probe during the attack: the demo key from 16 loopback addresses with two connections each,
 * every connection within its address' limit (it waits for the window when fewer units are left
 * than a request costs), and one `pro` key at 20 requests a second; all of them ask for 31-day
 * ranges of NO1 and DE-LU with `tariff=household&include=rank`, varying `tz`, `resolution`, symbol
 * order and `from`: over one unit, none is kept by the answer cache (and ranges are read from the
 * store every time). The attack
 * phase starts 10 s before a whole minute, so the demo's minute windows reset inside it and every
 * address spends its units twice. A first attack of 10 s, not measured, warms the server up. The figure: the probe's p99 during the attack over its p99 alone
 * in the same round; the goal is at most 3.
 *
 * Only 127.0.0.x; stops by itself. Results go to stdout and to bench/results-heavy-reads.md.
 */
import { writeFile } from 'node:fs/promises';
import { Agent } from 'node:https';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_API_KEY } from '../src/dev-data/dev-data.js';
import { addDays, localDate } from '../src/domain/time/days.js';
import {
  cleanups,
  cli,
  cpuSeconds,
  httpsCall,
  lastJsonLine,
  median,
  REPO,
  runBench,
  startEmbeddedServer,
} from './lib.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const PROBE_RATE = Number(process.env.BENCH_PROBE_RATE ?? 50);
const ADDRESSES = 16;
const PRO_RATE = 20; // the pro tier's request rate
const GOAL = 3;

const TARIFFS = {
  household: {
    currency: 'NOK',
    unit: 'kWh',
    timezone: 'Europe/Oslo',
    vat: [{ from: '2020-01-01', percent: 25 }],
    fixed: [{ from: '2020-01-01', amount: '0.0713' }],
    fees: [{ from: '2020-01-01', rules: [{ hours: '06:00-22:00', amount: '0.3640' }, { amount: '0.2640' }] }],
  },
};

/** Zones of whole-hour offsets, so every resolution is a whole number of quarter hours in them. */
const ZONES = ['Europe/Oslo', 'Europe/Berlin', 'UTC', 'Europe/London', 'America/New_York', 'Asia/Tokyo'];
const RESOLUTIONS = ['PT15M', 'PT30M', 'PT1H'];
const ORDERS = ['NO1,DE-LU', 'DE-LU,NO1'];

/**
 * 31-day household ranges starting `firstBack` to `lastBack` days before `today`, in every zone,
 * resolution and symbol order. Over one unit, none is ever kept by the answer cache.
 */
function attackPaths(today: string, firstBack: number, lastBack: number): string[] {
  const paths: string[] = [];
  for (let back = firstBack; back <= lastBack; back++) {
    for (const tz of ZONES) {
      for (const resolution of RESOLUTIONS) {
        for (const symbols of ORDERS) {
          paths.push(
            `/api/v1/prices?from=${addDays(today, -back)}&to=${addDays(today, 30 - back)}&symbols=${symbols}&tz=${tz}&resolution=${resolution}&tariff=household&include=rank`,
          );
        }
      }
    }
  }
  // Interleaved, so that consecutive requests differ in every parameter.
  return paths.map((_, i) => paths[(i * 37) % paths.length] as string);
}

interface Figures {
  sent: number;
  behind: number;
  errors: number;
  ok: number;
  statuses: Record<string, number>;
  p50: number;
  p99: number;
  max: number;
}

/** Waits until the wall clock is `second` seconds into a minute. */
async function untilSecond(second: number): Promise<void> {
  const now = Date.now() % 60_000;
  await sleep((second * 1000 - now + 60_000) % 60_000);
}

async function main(): Promise<string[]> {
  const tiers = {
    'bench-probe': { limits: [{ name: 'second', limit: 1_000_000, windowSeconds: 1 }], countPer: 'key' },
  };
  const { dir, settings, server, ca } = await startEmbeddedServer('pricepoint-bench-heavy-', tiers, {
    fx: { EUR: { NOK: 'EURNOK' } },
    tariffs: TARIFFS,
  });
  const caFile = join(dir, 'data', 'tls', 'localhost-cert.pem');
  const agent = new Agent({ keepAlive: true });
  cleanups.push(async () => agent.destroy());
  const call = (method: string, path: string, key: string, body?: unknown) =>
    httpsCall(
      server.port,
      ca,
      agent,
      method,
      path,
      { 'x-api-key': key, 'content-type': 'application/json' },
      body === undefined ? undefined : JSON.stringify(body),
    );
  const key = async (tier: string) =>
    (
      JSON.parse(await cli(['keys', 'create', '--tier', tier, '--name', tier, '--json'], settings)) as {
        key: string;
      }
    ).key;
  const probe = await key('bench-probe');
  const pro = await key('pro');

  // EUR to NOK: the development data set's EURNOK, a rate for every day NO1 has.

  // Dates as the server reads them: a day back from the earliest zone's today keeps within 31 days.
  const today = localDate(Date.now(), 'Pacific/Honolulu');
  const demoPaths = attackPaths(today, 29, 30);
  const proPaths = attackPaths(today, 30, 59);
  const sample = await call('GET', demoPaths[0] as string, DEMO_API_KEY);
  if (sample.status !== 200 || !sample.body.includes('"level"')) {
    throw new Error(
      `the attack's request is not answered as it should: ${sample.status} ${sample.body.slice(0, 300)}`,
    );
  }
  console.error(
    `an attack request: ${sample.body.length} bytes, ${demoPaths.length + proPaths.length} distinct`,
  );

  async function phase(name: string, attack: boolean, seconds = SECONDS) {
    const common = { origin: `https://127.0.0.1:${server.port}`, caFile, seconds };
    const probeSpec = {
      ...common,
      probe: { key: probe, rate: PROBE_RATE, connections: 4, path: '/api/v1/prices/today?symbols=NO1' },
    };
    const attackSpec = {
      ...common,
      demo: {
        key: DEMO_API_KEY,
        addresses: Array.from({ length: ADDRESSES }, (_, i) => `127.0.0.${i + 10}`),
        connections: 2,
        paths: demoPaths,
      },
      pro: { key: pro, rate: PRO_RATE, connections: 8, paths: proPaths },
    };
    // The probe and the attack each in a process of its own: the attack's answers never hold up the
    // probe's client, so the probe's latencies are the server's.
    const load = async (spec: object, file: string) => {
      await writeFile(join(dir, file), JSON.stringify(spec));
      return lastJsonLine<{ probe?: Figures; demo?: Figures; pro?: Figures }>([
        join(REPO, 'bench', 'setups', 'heavy-load.mjs'),
        join(dir, file),
      ]);
    };
    console.error(`${name}: ${seconds} s`);
    const cpuBefore = cpuSeconds(server.child.pid);
    const [probed, attacked] = await Promise.all([
      load(probeSpec, 'probe.json'),
      attack ? load(attackSpec, 'attack.json') : undefined,
    ]);
    const cpu = (cpuSeconds(server.child.pid) - cpuBefore) / seconds;
    return { name, probe: probed.probe as Figures, demo: attacked?.demo, pro: attacked?.pro, cpu };
  }

  // The attack's code paths compiled and its zones' offsets read before anything is measured.
  await phase('warm-up', true, 10);
  type Phase = Awaited<ReturnType<typeof phase>>;
  const rounds: { alone: Phase; attacked: Phase }[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    await untilSecond((50 - SECONDS + 60) % 60);
    const alone = await phase(`${round}: probe alone`, false);
    await untilSecond(50);
    const attacked = await phase(`${round}: probe during the attack`, true);
    rounds.push({ alone, attacked });
  }

  const ms = (n: number) => n.toFixed(1);
  const rate = (f: Figures | undefined, status: string) =>
    f === undefined ? '-' : ((f.statuses[status] ?? 0) / SECONDS).toFixed(1);
  const rows = rounds
    .flatMap((r) => [r.alone, r.attacked])
    .map(({ name, probe: p, demo, pro: heavy, cpu }) => {
      const lost = p.errors + p.behind + (demo?.errors ?? 0) + (heavy?.errors ?? 0);
      return `| ${name} | ${ms(p.p50)} | ${ms(p.p99)} | ${ms(p.max)} | ${rate(demo, '200')} | ${rate(demo, '429')} | ${demo ? ms(demo.p50) : '-'} | ${rate(heavy, '200')} | ${rate(heavy, '429')} | ${cpu.toFixed(2)} | ${lost} |`;
    });
  const ratios = rounds.map((r) => r.attacked.probe.p99 / r.alone.probe.p99);
  const figure = median(ratios);
  return [
    `A probe key reading today's NO1 at ${PROBE_RATE} a second, ${ROUNDS} rounds of two phases of ${SECONDS} s, against \`pricepoint serve\``,
    `on the embedded default; the attack: the demo key from ${ADDRESSES} addresses (2 connections each, within its limits) and a pro key at ${PRO_RATE} a second,`,
    'asking for 31-day ranges of NO1 and DE-LU with `tariff=household&include=rank`, each with another tz, resolution, symbol order or from.',
    '',
    '| round: phase | probe p50 ms | probe p99 ms | probe max ms | demo 200/s | demo 429/s | demo p50 ms | pro 200/s | pro 429/s | server CPU s/s | errors or late |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
    `Probe p99 during the attack / alone, per round: ${ratios.map((r) => r.toFixed(2)).join(', ')}; median **${figure.toFixed(2)}** (goal ≤ ${GOAL}: ${figure <= GOAL ? 'met' : 'not met'}).`,
  ];
}

await runBench(async () => {
  const started = new Date().toISOString();
  const lines = await main();
  console.log(lines.join('\n'));
  await writeFile(
    join(REPO, 'bench', 'results-heavy-reads.md'),
    `# bench:heavy-reads, ${started} (Node ${process.version})\n\n${lines.join('\n')}\n`,
  );
});
