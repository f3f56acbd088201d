/**
 * Webhook benchmark, not a test: deliveries per second to 100 webhook endpoints on the embedded
 * default (SQLite, one process on 127.0.0.1).
 *
 * Starts `pricepoint serve --json` in a temporary data folder with deliveries to loopback over plain
 * HTTP allowed, and 100 local receivers (each its own HTTP server in this process, answering 200 at
 * once and checking nothing). Registers one endpoint per receiver through `POST /api/v1/webhooks`,
 * then imports BENCH_WEBHOOK_DAYS complete days of one series in one `PUT`: that many `day.published`
 * events, each to every endpoint. Deliveries per second are the deliveries received divided by the
 * time from the import's commit (the events' `time`) to the last one received; every delivery must
 * arrive once, and the server's delivery log must say `delivered` for each. Prints a Markdown
 * section and writes bench/results-webhooks.md.
 *
 * Run with `npm run bench:webhooks` (it builds first). Settings: BENCH_WEBHOOK_DAYS (30),
 * BENCH_WEBHOOK_ENDPOINTS (100, the most a server accepts).
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { Agent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CLI,
  cleanups,
  cli,
  cpuSeconds,
  envWith,
  httpsCall,
  median,
  REPO,
  runBench,
  startChild,
} from './lib.js';

const DAYS = Number(process.env.BENCH_WEBHOOK_DAYS ?? 30);
const ENDPOINTS = Number(process.env.BENCH_WEBHOOK_ENDPOINTS ?? 100);
const SYMBOL = 'HOOKED';
const WAIT_MS = 300_000;

/** The commit time of the import: the `time` of its events, as the receivers got them. */
let committedAt = Number.POSITIVE_INFINITY;

interface Receiver {
  readonly url: string;
  /** Date.now() of each delivery received, by webhook-id. */
  readonly received: Map<string, number>;
  duplicates: number;
}

async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = { url: '', received: new Map(), duplicates: 0 };
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      const at = Date.now();
      const id = String(req.headers['webhook-id']);
      if (receiver.received.has(id)) receiver.duplicates += 1;
      else receiver.received.set(id, at);
      // Every event of the import carries its commit time.
      const time = Date.parse((JSON.parse(body) as { time: string }).time);
      if (time < committedAt) committedAt = time;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return Object.assign(receiver, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` });
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'pricepoint-webhooks-bench-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const config = join(dir, 'config.json');
  const huge = [{ name: 'day', limit: 1_000_000_000, windowSeconds: 86_400 }];
  await writeFile(config, JSON.stringify({ tiers: { enterprise: { limits: huge } } }));
  const settings = {
    PRICEPOINT_CONFIG: config,
    PRICEPOINT_PORT: '0',
    PRICEPOINT_HOST: '127.0.0.1',
    PRICEPOINT_DATA_DIR: join(dir, 'data'),
    // The receivers are on loopback, over plain HTTP (docs/webhooks.md, "Where deliveries may go").
    PRICEPOINT_WEBHOOK_ALLOW_PRIVATE: 'true',
    PRICEPOINT_WEBHOOK_ALLOW_HTTP: 'true',
  };
  const server = await startChild([CLI, 'serve', '--json'], envWith(settings), 'stderr');
  const pid = server.child.pid;
  const ca = readFileSync(join(dir, 'data', 'tls', 'localhost-cert.pem'), 'utf8');
  const admin = (
    JSON.parse(
      await cli(
        ['keys', 'create', '--tier', 'enterprise', '--scopes', 'admin', '--name', 'hooks', '--json'],
        settings,
      ),
    ) as { key: string }
  ).key;
  const agent = new Agent({ keepAlive: true, ca });
  const call = (method: string, path: string, type: string, body: string) =>
    httpsCall(server.port, ca, agent, method, path, { 'x-api-key': admin, 'content-type': type }, body);

  const series = await call(
    'PUT',
    `/api/v1/series/${SYMBOL}`,
    'application/json',
    JSON.stringify({
      name: 'Hooked',
      kind: 'electricity',
      currency: 'EUR',
      unit: 'MWh',
      timezone: 'UTC',
      resolution: 'PT1H',
    }),
  );
  if (series.status !== 201) throw new Error(`PUT series answered ${series.status}: ${series.body}`);
  const receivers: Receiver[] = [];
  const endpointIds: string[] = [];
  for (let i = 0; i < ENDPOINTS; i++) {
    const receiver = await startReceiver();
    const created = await call(
      'POST',
      '/api/v1/webhooks',
      'application/json',
      JSON.stringify({ url: receiver.url, events: ['day.published'] }),
    );
    if (created.status !== 201)
      throw new Error(`POST /api/v1/webhooks answered ${created.status}: ${created.body}`);
    receivers.push(receiver);
    endpointIds.push((JSON.parse(created.body) as { id: string }).id);
  }

  const from = Date.parse('2026-01-01T00:00:00Z');
  const rows: string[] = [];
  for (let h = 0; h < DAYS * 24; h++) {
    rows.push(`${new Date(from + h * 3_600_000).toISOString().slice(0, 19)}Z,${(30 + (h % 24)).toFixed(2)}`);
  }
  const cpuBefore = cpuSeconds(pid);
  const put = await call(
    'PUT',
    `/api/v1/series/${SYMBOL}/prices`,
    'text/csv',
    `start,price\n${rows.join('\n')}\n`,
  );
  if (put.status !== 200) throw new Error(`the import answered ${put.status}: ${put.body}`);
  const expected = DAYS * ENDPOINTS;
  const count = () => receivers.reduce((sum, r) => sum + r.received.size, 0);
  const deadline = Date.now() + WAIT_MS;
  while (count() < expected) {
    if (Date.now() > deadline) throw new Error(`only ${count()} of ${expected} deliveries arrived`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const cpu = cpuSeconds(pid) - cpuBefore;
  const last = Math.max(...receivers.flatMap((r) => [...r.received.values()]));
  const first = Math.min(...receivers.flatMap((r) => [...r.received.values()]));
  const duplicates = receivers.reduce((sum, r) => sum + r.duplicates, 0);

  // The server's delivery log for every endpoint.
  let undelivered = 0;
  const latencies: number[] = [];
  for (const id of endpointIds) {
    const log = JSON.parse(
      (
        await httpsCall(server.port, ca, agent, 'GET', `/api/v1/webhooks/${id}/deliveries`, {
          'x-api-key': admin,
        })
      ).body,
    ) as { eventId: string; state: string; latencyMs: number | null }[];
    for (const d of log) if (d.latencyMs !== null) latencies.push(d.latencyMs);
    // The log is written just after each answer: a delivery still `pending` a moment is not a failure.
    undelivered += log.filter((d) => d.state === 'failed').length;
    if (log.length !== DAYS)
      throw new Error(`endpoint ${id} has ${log.length} deliveries in its log, not ${DAYS}`);
  }
  agent.destroy();
  const commitAt = committedAt;
  const seconds = (last - commitAt) / 1000;
  const perSecond = expected / seconds;

  const section = [
    `## Webhooks: ${expected.toLocaleString('en')} deliveries to ${ENDPOINTS} endpoints`,
    '',
    `${new Date().toISOString().slice(0, 16)} UTC, Node ${process.version}, ${cpus().length} CPUs; server, ` +
      `receivers and bench on one machine. \`npm run bench:webhooks\`, bench/webhooks.ts.`,
    '',
    '| measure | value |',
    '| --- | --- |',
    `| events | ${DAYS} \`day.published\` (${DAYS} days imported in one \`PUT\`) |`,
    `| deliveries received | ${expected.toLocaleString('en')} (${ENDPOINTS} endpoints × ${DAYS}), ${duplicates} twice, ${undelivered} failed |`,
    `| import commit → first delivery | ${first - commitAt} ms |`,
    `| import commit → last delivery | ${(seconds * 1000).toFixed(0)} ms |`,
    `| send latency p50 / max (the server's delivery log) | ${median(latencies)} ms / ${Math.max(...latencies)} ms |`,
    `| **deliveries per second** | **${perSecond.toFixed(0)}** |`,
    `| server CPU time | ${cpu.toFixed(1)} s (${((cpu / expected) * 1000).toFixed(2)} ms a delivery) |`,
    '',
    'Each delivery is signed (HMAC-SHA256), sent over its own HTTP request to a receiver on loopback,',
    'and its outcome written to the delivery log; up to 100 sends are under way at once per instance.',
    '',
  ].join('\n');
  console.log(section);
  await writeFile(join(REPO, 'bench', 'results-webhooks.md'), section);
}

await runBench(main);
