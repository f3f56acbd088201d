/**
 * For bench/webhooks.ts: `pricepoint serve --json` in a temporary data folder with deliveries to
 * loopback over plain HTTP allowed, an admin key to register endpoints and import prices with, and
 * local receivers (each its own HTTP server in this process) that answer 200 at once or never.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import { Agent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, cleanups, cli, envWith, httpsCall, startChild } from './lib.js';

export interface Receiver {
  readonly url: string;
  /** Of each delivery received, by webhook-id: Date.now() at its arrival and its event's `time`. */
  readonly received: Map<string, { at: number; eventTime: number }>;
  duplicates: number;
}

/** A receiver answering 200 at once, checking nothing; with `hang`, one that reads each request and never answers. */
export async function startReceiver(hang = false): Promise<Receiver> {
  const receiver: Receiver = { url: '', received: new Map(), duplicates: 0 };
  const held: ServerResponse[] = [];
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
      else
        receiver.received.set(id, { at, eventTime: Date.parse((JSON.parse(body) as { time: string }).time) });
      if (hang) held.push(res);
      else res.end('ok');
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

export async function startWebhookServer() {
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
  cleanups.push(async () => agent.destroy());
  const call = (method: string, path: string, type?: string, body?: string) =>
    httpsCall(
      server.port,
      ca,
      agent,
      method,
      path,
      { 'x-api-key': admin, ...(type && { 'content-type': type }) },
      body,
    );
  return {
    pid: server.child.pid,
    call,
    /** Registers an endpoint for `day.published` of every symbol: its id. */
    async addEndpoint(url: string): Promise<string> {
      const body = JSON.stringify({ url, events: ['day.published'] });
      const created = await call('POST', '/api/v1/webhooks', 'application/json', body);
      if (created.status !== 201)
        throw new Error(`POST /api/v1/webhooks answered ${created.status}: ${created.body}`);
      return (JSON.parse(created.body) as { id: string }).id;
    },
    /** Creates the hourly series `symbol` and imports `days` complete days into it in one `PUT`: that many events. */
    async importDays(symbol: string, days: number): Promise<void> {
      const series = JSON.stringify({
        name: symbol,
        kind: 'electricity',
        currency: 'EUR',
        unit: 'MWh',
        timezone: 'UTC',
        resolution: 'PT1H',
      });
      const created = await call('PUT', `/api/v1/series/${symbol}`, 'application/json', series);
      if (created.status !== 201) throw new Error(`PUT series answered ${created.status}: ${created.body}`);
      const from = Date.parse('2026-01-01T00:00:00Z');
      const rows: string[] = [];
      for (let h = 0; h < days * 24; h++) {
        rows.push(
          `${new Date(from + h * 3_600_000).toISOString().slice(0, 19)}Z,${(30 + (h % 24)).toFixed(2)}`,
        );
      }
      const put = await call(
        'PUT',
        `/api/v1/series/${symbol}/prices`,
        'text/csv',
        `start,price\n${rows.join('\n')}\n`,
      );
      if (put.status !== 200) throw new Error(`the import answered ${put.status}: ${put.body}`);
    },
  };
}

/** Waits until `check` holds, polling every 20 ms; throws with `what` after `ms`. */
export async function waitFor(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
