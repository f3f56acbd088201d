/**
 * Event streams whose clients never read, not a test: 500 `GET /api/v1/events` streams resumed with
 * `Last-Event-ID: evt_000000000000` from the start of a backlog of 20,000 events, against one
 * `pricepoint serve --json` process on 127.0.0.1, and the server's memory idle and with them open
 * (goal: under 64 MiB above idle; docs/events.md, "What a stream may hold").
 *
 * The backlog is a daily series of 20,000 complete days imported through the API (one
 * `day.published` each). Each stream is a TLS connection from one of ten loopback addresses
 * (127.0.0.2 to .11, 50 each, so the default per-address bounds hold) that sends its request and
 * never reads. The server's VmRSS, V8 heap and external memory are read idle (after the import) and
 * once all streams are open and what they hold has settled, each time after a full collection asked
 * through the server's inspector: without it, VmRSS mostly shows the garbage of the megabytes of text
 * each stream made for the kernel's socket buffers before its client's stopped taking any, waiting
 * for a collection (the figures before it are printed too). Then the bench waits for the server's
 * idle deadline (set to 120 s, so that all are open at once) to close them. Prints a Markdown section
 * and writes bench/results-event-streams.md.
 *
 * Run with `npm run bench:event-streams` (it builds first). Settings: BENCH_STREAMS (500),
 * BENCH_BACKLOG (20000).
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent } from 'node:https';
import { type AddressInfo, createServer, connect as netConnect } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';
import { type MessageEvent, WebSocket } from 'undici';
import {
  CLI,
  cleanups,
  cli,
  envWith,
  httpsCall,
  peakRssMiB,
  REPO,
  rssMiB,
  runBench,
  serverHeapMiB,
  startChild,
} from './lib.js';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 500);
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 20_000);
const ADDRESSES = 10;
/** Streams opened at once (TLS handshakes in flight). */
const OPENING = 50;
const GOAL_MIB = 64;
const SYMBOL = 'BACKLOG';
const WAIT_MS = 300_000;
/**
 * The idle deadline (PRICEPOINT_IDLE_SECONDS, 30 s by default), long enough that the first streams
 * are still open when the last have opened on a busy machine: every stream is held at once.
 */
const IDLE_SECONDS = 120;

/** A TLS connection from `localAddress` that asks for the stream from the first event and never reads. */
async function neverReading(port: number, ca: string, key: string, localAddress: string): Promise<TLSSocket> {
  const socket = tlsConnect({
    socket: netConnect({ host: '127.0.0.1', port, localAddress }),
    servername: 'localhost',
    ca,
  });
  socket.on('error', () => {});
  await new Promise((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('close', () => reject(new Error(`the connection from ${localAddress} closed`)));
  });
  socket.pause();
  socket.write(
    `GET /api/v1/events HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${key}\r\n` +
      'last-event-id: evt_000000000000\r\n\r\n',
  );
  return socket;
}

/** A free port on 127.0.0.1 for the server's inspector. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * A full garbage collection in the server, through its inspector (Chrome DevTools Protocol,
 * `HeapProfiler.collectGarbage`): what is left is what the server holds, not garbage waiting for
 * its next collection.
 */
async function collectGarbage(inspectPort: number): Promise<void> {
  const targets = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const url = targets[0]?.webSocketDebuggerUrl;
  if (url === undefined) throw new Error('the server has no inspector target');
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  for (let id = 1; id <= 2; id++) {
    const answered = new Promise((resolve) => {
      const listener = (event: MessageEvent) => {
        if ((JSON.parse(String(event.data)) as { id?: number }).id !== id) return;
        socket.removeEventListener('message', listener);
        resolve(undefined);
      };
      socket.addEventListener('message', listener);
    });
    socket.send(JSON.stringify({ id, method: 'HeapProfiler.collectGarbage' }));
    await answered;
  }
  socket.close();
}

/** The server's memory after a full collection, in MiB. */
async function heldMiB(pid: number | undefined, port: number, ca: string, inspectPort: number) {
  await collectGarbage(inspectPort);
  await sleep(1_000);
  return { rss: rssMiB(pid), ...(await serverHeapMiB(port, ca)) };
}

/** The server's own figures on /metrics: open streams and the bytes they hold. */
async function streamFigures(port: number, ca: string) {
  const agent = new Agent();
  try {
    const { body } = await httpsCall(port, ca, agent, 'GET', '/metrics', {});
    const value = (line: string) =>
      Number(body.match(new RegExp(`^${line} (\\S+)$`, 'm'))?.[1] ?? Number.NaN);
    return {
      open: value('pricepoint_event_streams_open'),
      connections: value('pricepoint_unsent_answer_bytes\\{of="all"\\}'),
      unsent: value('pricepoint_event_stream_unsent_bytes\\{of="all"\\}'),
      largest: value('pricepoint_event_stream_unsent_bytes\\{of="largest_stream"\\}'),
    };
  } finally {
    agent.destroy();
  }
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'pricepoint-event-streams-bench-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const config = join(dir, 'config.json');
  const huge = [{ name: 'day', limit: 1_000_000_000, windowSeconds: 86_400 }];
  await writeFile(config, JSON.stringify({ tiers: { enterprise: { limits: huge, streams: STREAMS } } }));
  const settings = {
    PRICEPOINT_CONFIG: config,
    PRICEPOINT_PORT: '0',
    PRICEPOINT_HOST: '127.0.0.1',
    PRICEPOINT_DATA_DIR: join(dir, 'data'),
  };
  const serving = { ...settings, PRICEPOINT_IDLE_SECONDS: String(IDLE_SECONDS) };
  // The inspector only to ask for a full collection before each reading (collectGarbage).
  const inspectPort = await freePort();
  const server = await startChild(
    [CLI, 'serve', '--json'],
    envWith(serving),
    'stderr',
    [],
    [`--inspect=127.0.0.1:${inspectPort}`],
  );
  const pid = server.child.pid;
  const ca = readFileSync(join(dir, 'data', 'tls', 'localhost-cert.pem'), 'utf8');
  const created = await cli(
    ['keys', 'create', '--tier', 'enterprise', '--scopes', 'admin', '--name', 'streams', '--json'],
    settings,
  );
  const key = (JSON.parse(created) as { key: string }).key;
  const calls = new Agent({ keepAlive: true, ca });
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  const series = JSON.stringify({
    name: 'Backlog',
    kind: 'electricity',
    currency: 'EUR',
    unit: 'MWh',
    timezone: 'UTC',
    resolution: 'P1D',
  });
  const upsert = await httpsCall(server.port, ca, calls, 'PUT', `/api/v1/series/${SYMBOL}`, headers, series);
  if (upsert.status !== 201) throw new Error(`PUT series answered ${upsert.status}: ${upsert.body}`);
  const rows = Array.from(
    { length: BACKLOG },
    (_, n) => `${new Date(n * 86_400_000).toISOString().slice(0, 10)}T00:00:00Z,${n}.5`,
  );
  const put = await httpsCall(
    server.port,
    ca,
    calls,
    'PUT',
    `/api/v1/series/${SYMBOL}/prices`,
    { 'x-api-key': key, 'content-type': 'text/csv' },
    `start,price\n${rows.join('\n')}\n`,
  );
  if (put.status !== 200) throw new Error(`the import answered ${put.status}: ${put.body}`);
  calls.destroy();

  // Settled before the streams: what they add is the difference.
  await sleep(3_000);
  const idle = await heldMiB(pid, server.port, ca, inspectPort);

  console.error(`opening ${STREAMS} streams from ${ADDRESSES} addresses, none of them reading`);
  const sockets: TLSSocket[] = [];
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
  });
  let next = 0;
  await Promise.all(
    Array.from({ length: OPENING }, async () => {
      while (next < STREAMS) {
        const address = `127.0.0.${2 + (next++ % ADDRESSES)}`;
        sockets.push(await neverReading(server.port, ca, key, address));
      }
    }),
  );
  // Held once every connection is open and what the server holds for them has stopped moving: each
  // stream either queued what it may or sent its catch-up share and ended (docs/events.md), and
  // the connections stay open, unread, until the idle deadline.
  const closedByServer = () =>
    sockets.filter((socket) => socket.destroyed || socket.readyState !== 'open').length;
  const deadline = Date.now() + WAIT_MS;
  let figures = await streamFigures(server.port, ca);
  for (;;) {
    await sleep(1_000);
    const now = await streamFigures(server.port, ca);
    console.error(
      `${now.open} streams open, connections holding ${now.connections} bytes, streams ${now.unsent}, the largest ${now.largest}`,
    );
    if (closedByServer() > 0) throw new Error(`${closedByServer()} connections closed before they settled`);
    if (
      now.open === figures.open &&
      Math.abs(now.connections - figures.connections) <= now.connections / 50 &&
      Math.abs(now.unsent - figures.unsent) <= now.unsent / 50
    )
      break;
    if (Date.now() > deadline) throw new Error(`the streams did not settle: ${JSON.stringify(now)}`);
    figures = now;
  }
  const rssAtOnce = rssMiB(pid);
  const heapAtOnce = await serverHeapMiB(server.port, ca);
  const held = await heldMiB(pid, server.port, ca, inspectPort);
  const peak = peakRssMiB(pid);
  const openedAt = Date.now();
  figures = await streamFigures(server.port, ca);
  console.error(`${figures.open} streams open, holding ${(figures.unsent / 2 ** 20).toFixed(1)} MiB`);

  // Then the idle deadline closes them: nothing moves on their connections. Once it has passed, the
  // clients read what reached them: how much each was sent, and whether the server had closed it.
  await sleep((IDLE_SECONDS + 15) * 1_000 - (Date.now() - openedAt));
  const received = await Promise.all(
    sockets.map(
      (socket) =>
        new Promise<{ bytes: number; closed: boolean }>((resolve) => {
          let bytes = 0;
          const timer = setTimeout(() => resolve({ bytes, closed: false }), 30_000);
          socket.on('data', (chunk: Buffer) => (bytes += chunk.length));
          socket.once('close', () => {
            clearTimeout(timer);
            resolve({ bytes, closed: true });
          });
          socket.resume();
        }),
    ),
  );
  const left = received.filter((r) => !r.closed).length;
  const mostSent = Math.max(...received.map((r) => r.bytes));
  const closedSeconds = (Date.now() - openedAt) / 1000;

  const added = held.rss - idle.rss;
  const row = (what: string, before: number, open: number) =>
    `| ${what} | ${before.toFixed(0)} MiB | ${open.toFixed(0)} MiB | ${(open - before).toFixed(1)} MiB |`;
  const section = [
    `## Event streams that never read: ${STREAMS} resumed from the start of ${BACKLOG.toLocaleString('en')} events`,
    '',
    `${new Date().toISOString().slice(0, 16)} UTC, Node ${process.version}, ${cpus().length} CPUs; bench and ` +
      'server on one machine. `npm run bench:event-streams`, bench/event-streams.ts.',
    '',
    '| server memory, after a full collection | idle | with the streams | added |',
    '| --- | --- | --- | --- |',
    row('**VmRSS**', idle.rss, held.rss),
    row('V8 heap used', idle.heapUsed, held.heapUsed),
    row('external (buffers)', idle.external, held.external),
    '',
    '| measure | value |',
    '| --- | --- |',
    `| connections open, unread | ${STREAMS} (${ADDRESSES} addresses, ${OPENING} opened at a time); their streams still open: ${figures.open}, the others ended after their catch-up share |`,
    `| held for the clients (pricepoint_unsent_answer_bytes) | ${(figures.connections / 2 ** 20).toFixed(1)} MiB |`,
    `| held for the clients (pricepoint_event_stream_unsent_bytes) | ${(figures.unsent / 2 ** 20).toFixed(1)} MiB in all, ${(figures.largest / 1024).toFixed(1)} KiB the largest stream |`,
    `| VmRSS added per stream | ${((added * 1024) / STREAMS).toFixed(1)} KiB |`,
    `| **goal: under ${GOAL_MIB} MiB of VmRSS above idle** | **${added < GOAL_MIB ? 'met' : 'NOT met'}** (${added.toFixed(1)} MiB) |`,
    `| before the collection: VmRSS, V8 heap used | ${rssAtOnce.toFixed(0)} MiB, ${heapAtOnce.heapUsed.toFixed(0)} MiB |`,
    `| peak VmRSS of the run (VmHWM) | ${peak.toFixed(0)} MiB |`,
    `| connections left open ${closedSeconds.toFixed(0)} s after they settled (idle deadline ${IDLE_SECONDS} s) | ${left} |`,
    `| the most one client was sent, read after the deadline | ${(mostSent / 1024).toFixed(0)} KiB |`,
    '',
  ].join('\n');
  console.log(section);
  await writeFile(join(REPO, 'bench', 'results-event-streams.md'), section);
}

await runBench(main);
