/**
 * Test harness: a real app over in-memory SQLite with the development data set, a fake clock, and
 * captured log lines. `app.inject` for behaviour where HTTP is incidental; `listenHttps` for real
 * TLS requests where connections, headers or concurrency are the point.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { generate } from 'selfsigned';
import { Agent, request } from 'undici';
import { type Config, loadConfig } from '../../src/config/config.js';
import { DEMO_API_KEY, loadDevData } from '../../src/dev-data/dev-data.js';
import type { AppDeps } from '../../src/http/app.js';
import { composeApp } from '../../src/server/compose.js';
import { createImportService } from '../../src/services/import-service.js';
import type { NewKey } from '../../src/services/key-service.js';
import { plannedScheduler } from '../../src/sources/scheduler.js';
import { openSources } from '../../src/sources/sources.js';
import { MemoryNoticeBus } from '../../src/stores/memory/notice-bus.js';
import { MemoryRateLimitStore } from '../../src/stores/memory/rate-limit-store.js';
import { openPostgresStores } from '../../src/stores/postgres/index.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import type { Stores } from '../../src/stores/types.js';
import { postgresSchemaUrl } from './postgres.js';

/** A clock tests move by hand. */
export class FakeClock {
  constructor(public now: number) {}
  readonly read = (): number => this.now;
  advance(ms: number): void {
    this.now += ms;
  }
  set(iso: string): void {
    this.now = Date.parse(iso);
  }
}

export interface Harness {
  readonly app: FastifyInstance;
  readonly stores: Stores & {
    rateLimits: import('../../src/stores/memory/rate-limit-store.js').MemoryRateLimitStore;
  };
  readonly clock: FakeClock;
  readonly config: Config;
  readonly demoKey: string;
  /** Every log line the app wrote, parsed. */
  readonly logs: Record<string, unknown>[];
  /** Every log line the app wrote, raw. */
  readonly rawLogs: string[];
  /** Creates a key in a tier; returns the clear key and its id. */
  createKey(spec?: Partial<NewKey>): Promise<{ key: string; id: string }>;
  /**
   * Imports `points` of existing series in one batch, as `pricepoint import` would (all or nothing),
   * recorded as coming from `source` (default `import`); fails the test when the import is refused.
   */
  importPoints(points: readonly ImportedPoint[], source?: string): Promise<void>;
  close(): Promise<void>;
}

/** A price of an existing series: `start` as RFC 3339 text, `price` as decimal text. */
export interface ImportedPoint {
  readonly symbol: string;
  readonly start: string;
  readonly price: string;
}

export interface HarnessOptions {
  /** Start time; default 2026-11-22T10:15:03.120Z (a Sunday). */
  readonly now?: string;
  /** Settings as environment variables (`PRICEPOINT_*`). */
  readonly env?: Record<string, string>;
  readonly config?: Partial<Config>;
  /** Load the development data set and demo key (default true). */
  readonly devData?: boolean;
  /** Serve over TLS (for `listenHttps`). */
  readonly https?: boolean;
  /**
   * Keys and prices in in-memory SQLite (default), or in PostgreSQL in a fresh schema that `close`
   * drops (helpers/postgres.ts; rejects when PostgreSQL is unreachable, so check it first to skip).
   */
  readonly engine?: 'sqlite' | 'postgres';
  /** Shorter connection deadlines than the defaults (src/http/transport/connections.ts), for timeout tests. */
  readonly connections?: AppDeps['connections'];
  /** Event stream heartbeats and bounds (src/events/stream-limits.ts), for event stream tests. */
  readonly eventStreams?: AppDeps['eventStreams'];
}

/** PostgreSQL stores in a fresh schema, with in-process counters and notices; `close` drops the schema. */
async function openPostgresHarnessStores(): Promise<Harness['stores']> {
  const target = await postgresSchemaUrl();
  if ('skip' in target) throw new Error(target.skip);
  try {
    const stores = await openPostgresStores(target.url, { schema: target.schema });
    return {
      ...stores,
      rateLimits: new MemoryRateLimitStore(),
      notices: new MemoryNoticeBus(),
      async close() {
        try {
          await stores.close();
        } finally {
          await target.drop();
        }
      },
    };
  } catch (error) {
    await target.drop();
    throw error;
  }
}

let tlsPair: Promise<{ key: string; cert: string }> | undefined;

/** One self-signed localhost certificate per test process. */
export function testTls(): Promise<{ key: string; cert: string }> {
  tlsPair ??= generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  }).then((p) => ({ key: p.private, cert: p.cert }));
  return tlsPair;
}

export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const clock = new FakeClock(Date.parse(options.now ?? '2026-11-22T10:15:03.120Z'));
  const config = loadConfig(
    { PRICEPOINT_LOG_LEVEL: 'info', ...options.env },
    { databasePath: ':memory:', devData: options.devData ?? true, ...options.config },
  );
  const stores =
    options.engine === 'postgres' ? await openPostgresHarnessStores() : await openEmbeddedStores(':memory:');
  const rawLogs: string[] = [];
  const logs: Record<string, unknown>[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        rawLogs.push(line);
        logs.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  const https = options.https ? await testTls() : undefined;
  // Sources of `config.sources` run only when asked (POST /api/v1/sources/{name}/run).
  const sources =
    config.sources.length > 0
      ? await openSources(config.sources, { prices: stores.prices, scheduler: plannedScheduler() })
      : undefined;
  const { app, services } = await composeApp(config, {
    stores,
    clock: clock.read,
    logStream,
    ...(https && { https }),
    ...(options.connections && { connections: options.connections }),
    ...(sources && { sources }),
    ...(options.eventStreams && { eventStreams: options.eventStreams }),
  });
  const keys = services.keys;
  if (options.devData ?? true) await loadDevData({ prices: stores.prices, keys, now: clock.now });
  await app.ready();
  return {
    app,
    stores,
    clock,
    config,
    demoKey: DEMO_API_KEY,
    logs,
    rawLogs,
    async createKey(spec = {}) {
      const { key, record } = await keys.create({ name: 'test key', tier: 'free', ...spec });
      return { key, id: record.id };
    },
    async importPoints(points, source = 'import') {
      const rows = points.map((p, n) => ({
        line: n + 1,
        ...p,
        currency: undefined,
        unit: undefined,
        error: undefined,
      }));
      const imported = await createImportService(stores).run(
        (async function* () {
          yield rows;
        })(),
        { source },
      );
      if (!imported.ok) throw new Error(`the test import was refused: ${JSON.stringify(imported)}`);
    },
    async close() {
      await app.close();
      await sources?.close();
      await stores.close();
    },
  };
}

/** Listens on 127.0.0.1 over TLS; returns the base URL and a request function that trusts the test certificate. */
export async function listenHttps(harness: Harness, connections = 128) {
  await harness.app.listen({ host: '127.0.0.1', port: 0 });
  const address = harness.app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const { cert } = await testTls();
  const agent = new Agent({ connect: { ca: cert, servername: 'localhost' }, connections, pipelining: 0 });
  const base = `https://localhost:${port}`;
  return {
    base,
    port,
    agent,
    async get(path: string, headers: Record<string, string> = {}) {
      const response = await request(`${base}${path}`, { method: 'GET', headers, dispatcher: agent });
      const text = await response.body.text();
      return { status: response.statusCode, headers: response.headers, text };
    },
    /** Any method; `raw` is the body's bytes as sent (a compressed body is not decoded). */
    async request(
      method: 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE',
      path: string,
      options: { headers?: Record<string, string>; body?: string } = {},
    ) {
      const response = await request(`${base}${path}`, { method, dispatcher: agent, ...options });
      const raw = Buffer.from(await response.body.arrayBuffer());
      return { status: response.statusCode, headers: response.headers, raw, text: raw.toString() };
    },
    close: () => agent.close(),
  };
}
