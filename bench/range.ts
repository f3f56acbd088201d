/**
 * `npm run bench:range`: what a year of one 15-minute series costs, and whether one key asking for
 * such years at its tier's request rate slows everyone else down (docs/using-the-api.md "Rate limits").
 *
 * 1. In this process, over an in-memory SQLite store holding 2025 of one PT15M series (35,040
 *    points): the uncached year range built as the server builds it (plan and read through the
 *    price service, JSON with its ETag, CSV, Brotli and gzip through the answer cache), once cold
 *    and then `BENCH_RANGE_RUNS` times; the median and the slowest of each step.
 * 2. A real server (`pricepoint serve --dev-data`, the embedded default) with two years of four
 *    PT15M series imported, and an open-loop load from a child process (bench/setups/range-load.mjs)
 *    in three phases of `BENCH_SECONDS`, taking turns for `BENCH_ROUNDS` rounds: a light client
 *    alone (today's NO1 and its latest price, `BENCH_LIGHT_RATE` a second), the same with one `pro`
 *    key sending 20 year ranges a second (its tier's request rate, each a year no request asked
 *    before), and the same with that load in a tier of 240 units a second, which serves all 20
 *    years a second as every request did when a year took one unit. The light client's p99 with
 *    the heavy key over its p99 alone, measured in the same round, is the figure that matters.
 *
 * Only 127.0.0.1; stops by itself. Results go to stdout and to bench/results-range.md.
 */

import { writeFile } from 'node:fs/promises';
import { Agent } from 'node:https';
import { join } from 'node:path';
import { DEFAULT_TIERS, type Tier } from '../src/domain/limits/tiers.js';
import { dayBounds } from '../src/domain/time/days.js';
import { entityTag } from '../src/http/pipeline/answer.js';
import { createAnswerCache } from '../src/http/pipeline/answer-cache.js';
import { renderDayCsv, renderDayJson, renderSeriesDaysJson } from '../src/http/render/day-answer.js';
import { createPriceService } from '../src/services/price-service.js';
import { openEmbeddedStores } from '../src/stores/sqlite/index.js';
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
  symbolOf,
  writePricesCsv,
} from './lib.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RUNS = Number(process.env.BENCH_RANGE_RUNS ?? 20);
const LIGHT_RATE = Number(process.env.BENCH_LIGHT_RATE ?? 50);
const HEAVY_RATE = 20; // the pro tier's request rate
const SERIES = 4;

const ms = (n: number) => n.toFixed(1);

/** Part 1: the year built step by step, in process. */
async function buildSteps(): Promise<string[]> {
  const stores = await openEmbeddedStores(':memory:');
  cleanups.push(async () => stores.close());
  const zone = 'Europe/Oslo';
  await stores.prices.upsertSeries({
    symbol: 'Y15',
    name: 'a year of quarter hours',
    kind: 'electricity',
    currency: 'EUR',
    unit: 'MWh',
    timezone: zone,
    resolution: 'PT15M',
  });
  const from = dayBounds('2025-01-01', zone).start;
  const to = dayBounds('2025-12-31', zone).end;
  const points = [];
  for (let t = from; t < to; t += 900_000) {
    points.push({ start: t, price: ((((t / 900_000) * 7919) % 20_000) / 100 - 20).toFixed(2) });
  }
  await stores.prices.upsertPrices('Y15', points);
  const service = createPriceService({
    prices: stores.prices,
    clock: () => Date.parse('2026-11-24T10:00:00Z'),
  });
  const answers = createAnswerCache({ maxBytes: 64 * 1024 * 1024 });
  const tier = DEFAULT_TIERS.pro as Tier;

  const steps: Record<string, number[]> = { read: [], json: [], csv: [], br: [], gzip: [], cpu: [] };
  // CPU time (all threads) of what one JSON request asking for Brotli costs: read, JSON, Brotli.
  let cpuSpent = 0;
  let sizes = { json: 0, csv: 0, br: 0, gzip: 0 };
  for (let run = 0; run <= RUNS; run++) {
    let cpu = process.cpuUsage();
    cpuSpent = 0;
    let t = performance.now();
    const lap = (name: string) => {
      const now = performance.now();
      steps[name]?.push(now - t);
      t = now;
    };
    const plan = await service.plan(
      tier,
      { symbols: ['Y15'] },
      { date: '2025-01-01' },
      { date: '2025-12-31' },
    );
    const answer = await service.read(plan);
    lap('read');
    const seriesJson = await renderSeriesDaysJson(answer.series);
    const body = Buffer.from(renderDayJson(answer, seriesJson));
    const etag = entityTag('json', seriesJson);
    lap('json');
    const spent = process.cpuUsage(cpu);
    cpuSpent += spent.user + spent.system;
    const csv = Buffer.from(await renderDayCsv(answer));
    entityTag('csv', csv.toString());
    lap('csv');
    cpu = process.cpuUsage();
    const content = {
      etag,
      maxAge: 86_400,
      type: 'application/json',
      body,
      tags: ['Y15'],
      validUntil: Infinity,
    };
    const cached = answers.keep(undefined, { ...content, route: '/api/v1/prices' }, 0);
    const br = await answers.encoded(cached, 'br');
    lap('br');
    const brSpent = process.cpuUsage(cpu);
    cpuSpent += brSpent.user + brSpent.system;
    const gz = await answers.encoded(cached, 'gzip');
    lap('gzip');
    steps.cpu?.push(cpuSpent / 1000);
    sizes = { json: body.length, csv: csv.length, br: br.length, gzip: gz.length };
  }
  const row = (label: string, name: string, size?: number) => {
    const values = steps[name] as number[];
    const [cold, ...warm] = values;
    const bytes = size === undefined ? '' : `${(size / 1024).toFixed(0)} KiB`;
    return `| ${label} | ${ms(cold ?? 0)} | ${ms(median(warm))} | ${ms(Math.max(...warm))} | ${bytes} |`;
  };
  return [
    `One year (2025) of one PT15M series in Europe/Oslo, 35,040 points, in process (${RUNS} runs after a cold one):`,
    '',
    '| step | cold ms | median ms | slowest ms | size |',
    '| --- | ---: | ---: | ---: | ---: |',
    row('plan and read: a query per month, cut into 365 local days, each interval written RFC 3339', 'read'),
    row('JSON, its ETag (SHA-256) and the body as bytes', 'json', sizes.json),
    row('CSV', 'csv', sizes.csv),
    row('Brotli, as the answer cache compresses it', 'br', sizes.br),
    row('gzip, as the answer cache compresses it', 'gzip', sizes.gzip),
    row('CPU time (all threads) of one JSON request with Brotli: read, JSON, Brotli', 'cpu'),
  ];
}

interface LoopFigures {
  sent: number;
  behind: number;
  errors: number;
  ok: number;
  statuses: Record<string, number>;
  p50: number;
  p99: number;
  max: number;
}

/** Part 2: the light client's latency alone and beside the heavy key. */
async function fairness(): Promise<string[]> {
  const tiers = {
    'bench-light': { limits: [{ name: 'second', limit: 1_000_000, windowSeconds: 1 }], countPer: 'key' },
    // 20 years a second at 12 units each: what the pro key got when every request took one unit.
    'bench-unweighted': {
      limits: [{ name: 'second', limit: 240, windowSeconds: 1 }],
      countPer: 'key',
      historyDays: 3653,
    },
  };
  const { dir, settings, server, caFile, ca } = await startEmbeddedServer('pricepoint-bench-range-', tiers);
  const agent = new Agent({ keepAlive: false });
  cleanups.push(async () => agent.destroy());
  const pid = server.child.pid;
  const origin = `https://127.0.0.1:${server.port}`;

  console.error(`importing two years of ${SERIES} PT15M series`);
  for (let s = 0; s < SERIES; s++) {
    await cli(
      [
        'series',
        'upsert',
        symbolOf(s),
        '--name',
        `bench ${s}`,
        '--kind',
        'electricity',
        '--currency',
        'EUR',
      ].concat(['--unit', 'MWh', '--timezone', 'Europe/Berlin', '--resolution', 'PT15M']),
      settings,
    );
  }
  const file = join(dir, 'prices.csv');
  await writePricesCsv(file, SERIES, Date.UTC(2023, 11, 31), Date.UTC(2026, 0, 2));
  await cli(['import', file], settings);

  const key = async (tier: string) =>
    (
      JSON.parse(await cli(['keys', 'create', '--tier', tier, '--name', tier, '--json'], settings)) as {
        key: string;
      }
    ).key;
  const light = await key('bench-light');
  const pro = await key('pro');
  const unweighted = await key('bench-unweighted');
  // A year starting on each day of 2024, series after series: no two requests of a run ask the same.
  const years: string[] = [];
  for (let d = 0; d < 366; d++) {
    for (let s = 0; s < SERIES; s++) {
      const first = new Date(Date.UTC(2024, 0, 1) + d * 86_400_000);
      const last = new Date(first.getTime() + 364 * 86_400_000);
      const day = (date: Date) => date.toISOString().slice(0, 10);
      years.push(`/api/v1/prices?from=${day(first)}&to=${day(last)}&symbols=${symbolOf(s)}`);
    }
  }
  let offset = 0;

  async function phase(name: string, heavyKey: string | undefined, seconds = SECONDS) {
    const spec = {
      origin,
      caFile,
      seconds,
      light: {
        key: light,
        rate: LIGHT_RATE,
        connections: 4,
        paths: ['/api/v1/prices/today?symbols=NO1', '/api/v1/prices/latest?symbols=NO1'],
      },
      heavy: heavyKey && {
        key: heavyKey,
        rate: HEAVY_RATE,
        connections: 8,
        paths: years.slice(offset).concat(years.slice(0, offset)),
      },
    };
    offset = (offset + Math.ceil(HEAVY_RATE * seconds) + 1) % years.length;
    const specFile = join(dir, 'load.json');
    await writeFile(specFile, JSON.stringify(spec));
    console.error(`${name}: ${seconds} s`);
    await eventLoopDelay(); // starts the server's measurement afresh
    const cpuBefore = cpuSeconds(pid);
    const result = await lastJsonLine<{ light: LoopFigures; heavy?: LoopFigures }>([
      join(REPO, 'bench', 'setups', 'range-load.mjs'),
      specFile,
    ]);
    const cpu = (cpuSeconds(pid) - cpuBefore) / seconds;
    return { name, ...result, cpu, delay: await eventLoopDelay() };
  }

  /**
   * The longest the server's event loop was held since the last call, in ms, as its /metrics tell
   * (prom-client samples every 10 ms and starts afresh at every scrape).
   */
  async function eventLoopDelay(): Promise<number> {
    const { body } = await httpsCall(server.port, ca, agent, 'GET', '/metrics', {});
    const line = body.split('\n').find((l) => l.startsWith('pricepoint_nodejs_eventloop_lag_max_seconds '));
    return Number(line?.split(' ')[1] ?? Number.NaN) * 1000;
  }

  await phase('warm-up', pro, 3);
  // The phases take turns, so that a shared machine's drift hits all of them alike.
  type Phase = Awaited<ReturnType<typeof phase>>;
  const rounds: { alone: Phase; weighted: Phase; before: Phase }[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    rounds.push({
      alone: await phase(`${round}: light client alone`, undefined),
      weighted: await phase(`${round}: beside a pro key sending 20 year ranges a second`, pro),
      before: await phase(`${round}: beside the same load if each year took one unit`, unweighted),
    });
  }

  const rows = rounds
    .flatMap((r) => [r.alone, r.weighted, r.before])
    .map(({ name, light: l, heavy: h, cpu, delay }) => {
      const served = h ? `${((h.statuses['200'] ?? 0) / SECONDS).toFixed(1)}` : '-';
      const refused = h ? `${((h.statuses['429'] ?? 0) / SECONDS).toFixed(1)}` : '-';
      const heavyP50 = h && h.ok > 0 ? ms(h.p50) : '-';
      const lost = l.errors + l.behind + (h ? h.errors + h.behind : 0);
      return `| ${name} | ${ms(l.p50)} | ${ms(l.p99)} | ${ms(l.max)} | ${served} | ${refused} | ${heavyP50} | ${cpu.toFixed(2)} | ${ms(delay)} | ${lost} |`;
    });
  const ratios = (pick: (r: (typeof rounds)[number]) => Phase) =>
    rounds.map((r) => pick(r).light.p99 / r.alone.light.p99);
  const weightedRatios = ratios((r) => r.weighted);
  const beforeRatios = ratios((r) => r.before);
  const list = (values: number[]) => values.map((v) => v.toFixed(2)).join(', ');
  return [
    `A light client at ${LIGHT_RATE} requests a second (today's NO1 and its latest price, in turn), ${ROUNDS} rounds of`,
    `three phases of ${SECONDS} s, against \`pricepoint serve\` on the embedded default with two years of four PT15M series:`,
    '',
    '| round: phase | light p50 ms | light p99 ms | light max ms | years served /s | 429 /s | year p50 ms | server CPU s/s | longest event-loop delay ms | errors or late |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
    `Light client p99 beside the pro key at its limit / alone, per round: ${list(weightedRatios)}; median **${median(weightedRatios).toFixed(2)}**`,
    `(beside the same load if each year took one unit / alone: ${list(beforeRatios)}; median ${median(beforeRatios).toFixed(2)}).`,
  ];
}

await runBench(async () => {
  const started = new Date().toISOString();
  const build = await buildSteps();
  console.log(build.join('\n'));
  const fair = await fairness();
  console.log(`\n${fair.join('\n')}`);
  const text = `# bench:range, ${started} (Node ${process.version})\n\n${build.join('\n')}\n\n${fair.join('\n')}\n`;
  await writeFile(join(REPO, 'bench', 'results-range.md'), text);
});
