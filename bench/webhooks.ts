/**
 * Webhook benchmark, not a test, on the embedded default (SQLite, one process on 127.0.0.1), with
 * receivers on loopback (bench/webhook-server.ts). Two servers, one after the other:
 *
 * 1. Deliveries per second to 100 endpoints: one per receiver answering 200 at once, then one `PUT`
 *    of BENCH_WEBHOOK_DAYS complete days of one series: that many `day.published` events, each to
 *    every endpoint. Counted from the import's commit (the events' `time`) to the last delivery
 *    received; every delivery must arrive once, and the server's delivery log must say `delivered`.
 * 2. Receivers that never answer: one healthy endpoint gets BENCH_WEBHOOK_HANGING_DAYS events
 *    alone (the baseline), then again with 99 more endpoints whose receivers read every request and
 *    never answer. Prints the healthy endpoint's event → arrival latency (max, p99, p50) of both and
 *    their ratio.
 *
 * Prints a Markdown section and writes bench/results-webhooks.md. Run with `npm run bench:webhooks`
 * (it builds first). Settings: BENCH_WEBHOOK_DAYS (30), BENCH_WEBHOOK_ENDPOINTS (100, the most a
 * server accepts), BENCH_WEBHOOK_HANGING_DAYS (150).
 */
import { writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { cpuSeconds, median, REPO, runBench } from './lib.js';
import { type Receiver, startReceiver, startWebhookServer, waitFor } from './webhook-server.js';

const DAYS = Number(process.env.BENCH_WEBHOOK_DAYS ?? 30);
const ENDPOINTS = Number(process.env.BENCH_WEBHOOK_ENDPOINTS ?? 100);
const HANGING_DAYS = Number(process.env.BENCH_WEBHOOK_HANGING_DAYS ?? 150);
const HANGING = 99;
const WAIT_MS = 300_000;

async function throughput(): Promise<string[]> {
  const server = await startWebhookServer();
  const receivers: Receiver[] = [];
  const endpointIds: string[] = [];
  for (let i = 0; i < ENDPOINTS; i++) {
    const receiver = await startReceiver();
    endpointIds.push(await server.addEndpoint(receiver.url));
    receivers.push(receiver);
  }
  const cpuBefore = cpuSeconds(server.pid);
  await server.importDays('HOOKED', DAYS);
  const expected = DAYS * ENDPOINTS;
  const count = () => receivers.reduce((sum, r) => sum + r.received.size, 0);
  await waitFor(() => count() >= expected, WAIT_MS, `${expected} deliveries (${count()} arrived)`);
  const cpu = cpuSeconds(server.pid) - cpuBefore;
  const arrivals = receivers.flatMap((r) => [...r.received.values()]);
  const commitAt = Math.min(...arrivals.map((a) => a.eventTime));
  const last = Math.max(...arrivals.map((a) => a.at));
  const first = Math.min(...arrivals.map((a) => a.at));
  const duplicates = receivers.reduce((sum, r) => sum + r.duplicates, 0);

  // The server's delivery log for every endpoint.
  let undelivered = 0;
  const latencies: number[] = [];
  for (const id of endpointIds) {
    const log = JSON.parse((await server.call('GET', `/api/v1/webhooks/${id}/deliveries`)).body) as {
      state: string;
      latencyMs: number | null;
    }[];
    for (const d of log) if (d.latencyMs !== null) latencies.push(d.latencyMs);
    // The log is written just after each answer: a delivery still `pending` a moment is not a failure.
    undelivered += log.filter((d) => d.state === 'failed').length;
    if (log.length !== DAYS)
      throw new Error(`endpoint ${id} has ${log.length} deliveries in its log, not ${DAYS}`);
  }
  const seconds = (last - commitAt) / 1000;
  return [
    `## Webhooks: ${expected.toLocaleString('en')} deliveries to ${ENDPOINTS} endpoints`,
    '',
    `${new Date().toISOString().slice(0, 16)} UTC, Node ${process.version}, ${cpus().length} CPUs; server, ` +
      'receivers and bench on one machine. `npm run bench:webhooks`, bench/webhooks.ts.',
    '',
    '| measure | value |',
    '| --- | --- |',
    `| events | ${DAYS} \`day.published\` (${DAYS} days imported in one \`PUT\`) |`,
    `| deliveries received | ${expected.toLocaleString('en')} (${ENDPOINTS} endpoints × ${DAYS}), ${duplicates} twice, ${undelivered} failed |`,
    `| import commit → first delivery | ${first - commitAt} ms |`,
    `| import commit → last delivery | ${(seconds * 1000).toFixed(0)} ms |`,
    `| send latency p50 / max (the server's delivery log) | ${median(latencies)} ms / ${Math.max(...latencies)} ms |`,
    `| **deliveries per second** | **${(expected / seconds).toFixed(0)}** |`,
    `| server CPU time | ${cpu.toFixed(1)} s (${((cpu / expected) * 1000).toFixed(2)} ms a delivery) |`,
    '',
    'Each delivery is signed (HMAC-SHA256), sent over its own HTTP request to a receiver on loopback,',
    'and its outcome written to the delivery log; up to 4 sends are under way at once per endpoint.',
    '',
  ];
}

/** The healthy receiver's event → arrival latencies of the events of `symbol`, sorted. */
function latenciesOf(receiver: Receiver, ids: ReadonlySet<string>): number[] {
  return [...receiver.received]
    .filter(([id]) => ids.has(id))
    .map(([, r]) => r.at - r.eventTime)
    .sort((a, b) => a - b);
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.ceil((p / 100) * sorted.length) - 1] ?? Number.NaN;

async function deadReceivers(): Promise<string[]> {
  const server = await startWebhookServer();
  const healthy = await startReceiver();
  await server.addEndpoint(healthy.url);
  const arrived = (n: number) => () => healthy.received.size >= n;

  await server.importDays('ALONE', HANGING_DAYS);
  await waitFor(arrived(HANGING_DAYS), WAIT_MS, `${HANGING_DAYS} deliveries alone`);
  const alone = latenciesOf(healthy, new Set(healthy.received.keys()));

  const hanging: Receiver[] = [];
  for (let i = 0; i < HANGING; i++) {
    const receiver = await startReceiver(true);
    await server.addEndpoint(receiver.url);
    hanging.push(receiver);
  }
  const before = new Set(healthy.received.keys());
  await server.importDays('BESIDE', HANGING_DAYS);
  await waitFor(arrived(2 * HANGING_DAYS), WAIT_MS, `${HANGING_DAYS} deliveries beside hanging receivers`);
  const beside = latenciesOf(healthy, new Set([...healthy.received.keys()].filter((id) => !before.has(id))));
  const held = hanging.reduce((sum, r) => sum + r.received.size, 0);
  const heldBy = hanging.filter((r) => r.received.size > 0).length;
  const row = (name: string, l: number[]) =>
    `| ${name} | ${l.length} | ${Math.max(...l)} ms | ${percentile(l, 99)} ms | ${percentile(l, 50)} ms |`;
  const ratio = (p: number) => (percentile(beside, p) / percentile(alone, p)).toFixed(2);
  return [
    `## Webhooks: a healthy endpoint beside ${HANGING} receivers that never answer`,
    '',
    `${HANGING_DAYS} days imported in one \`PUT\` (${HANGING_DAYS} \`day.published\` events), first with the`,
    `healthy endpoint alone, then with ${HANGING} more endpoints whose receivers read each request and never`,
    `answer (the timeout is the default 10 s). Event → arrival is the receiver's clock at arrival minus the`,
    "event's `time` (the import's commit), on the one machine.",
    '',
    '| healthy endpoint | events received | max | p99 | p50 |',
    '| --- | ---: | ---: | ---: | ---: |',
    row('alone (baseline)', alone),
    row(`beside ${HANGING} hanging receivers`, beside),
    '',
    `Beside them / alone: max ${(Math.max(...beside) / Math.max(...alone)).toFixed(2)}, p99 ${ratio(99)}, p50 ${ratio(50)}.`,
    `The hanging receivers held ${held} requests (${heldBy} of ${HANGING} receivers) while the healthy one was served.`,
    '',
  ];
}

async function main(): Promise<void> {
  const section = [...(await throughput()), ...(await deadReceivers())].join('\n');
  console.log(section);
  await writeFile(join(REPO, 'bench', 'results-webhooks.md'), section);
}

await runBench(main);
