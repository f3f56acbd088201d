/**
 * Real apps for the failed-login budget tests, each given a key store that counts its lookups:
 * one embedded instance (SQLite, in-process counters), or several scaled-out instances that share
 * one PostgreSQL schema and one Redis key prefix, as separate processes would (each has its own
 * pool and Redis connection). Requests go in with `app.inject`.
 */

import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config/config.js';
import { type LimitDecision, windowOf } from '../../src/domain/limits/fixed-window.js';
import { composeApp } from '../../src/server/compose.js';
import { createKeyService, type KeyService } from '../../src/services/key-service.js';
import { MemoryNoticeBus } from '../../src/stores/memory/notice-bus.js';
import { openPostgresStores } from '../../src/stores/postgres/index.js';
import { redisCommandOptions } from '../../src/stores/redis/index.js';
import { RedisRateLimitStore } from '../../src/stores/redis/rate-limit-store.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import type { KeyStore, RateLimitStore, Stores } from '../../src/stores/types.js';
import { postgresSchemaUrl } from '../helpers/postgres.js';
import { deleteKeysUnder, inspectClient, REDIS_TEST_URL, testPrefix, whenReady } from '../helpers/redis.js';

/** A key store that counts `findByHash` calls and, like a store across a network, answers a little later. */
export class CountingKeyStore implements KeyStore {
  lookups = 0;
  constructor(
    private readonly inner: KeyStore,
    private readonly delayMs = 0,
  ) {}

  async findByHash(hash: string) {
    this.lookups += 1;
    if (this.delayMs > 0) await sleep(this.delayMs);
    return this.inner.findByHash(hash);
  }
  insert: KeyStore['insert'] = (record) => this.inner.insert(record);
  get: KeyStore['get'] = (id) => this.inner.get(id);
  list: KeyStore['list'] = () => this.inner.list();
  revoke: KeyStore['revoke'] = (id, at) => this.inner.revoke(id, at);
  setTier: KeyStore['setTier'] = (id, tier) => this.inner.setTier(id, tier);
  update: KeyStore['update'] = (id, changes) => this.inner.update(id, changes);
  rotate: KeyStore['rotate'] = (id, replacement, expiresBy) => this.inner.rotate(id, replacement, expiresBy);
  recordLastUsed: KeyStore['recordLastUsed'] = (batch) => this.inner.recordLastUsed(batch);
  ping: KeyStore['ping'] = () => this.inner.ping();
}

export interface BudgetInstances {
  readonly apps: readonly FastifyInstance[];
  /** Key-store lookups made so far, by every instance together. */
  lookups(): number;
  /** Creates a key in the `free` tier; returns it in clear, and its id. */
  createKey(): Promise<{ key: string; id: string }>;
  /** Revokes a key, as of now. */
  revoke(id: string): Promise<void>;
  /** Moves the apps' clock on (the counters of the scaled-out instances keep Redis' clock). */
  advance(ms: number): void;
  /** What is left of the failed-login budget of `ip` (an IPv4 address), by the shared counters. */
  budgetLeft(ip: string): Promise<number>;
  /** Resolves when at least `needMs` are left in the current minute of the counters' clock. */
  clearOfMinuteEnd(needMs: number): Promise<void>;
  close(): Promise<void>;
}

const NO_LOGS = new Writable({ write: (_chunk, _encoding, done) => done() });
const FAILURES = [{ name: 'auth-failures', limit: 20, windowSeconds: 60 }];

function configFor(env: Record<string, string>) {
  return loadConfig({ PRICEPOINT_LOG_LEVEL: 'warn', ...env }, { databasePath: ':memory:', devData: false });
}

async function created(service: KeyService): Promise<{ key: string; id: string }> {
  const { key, record } = await service.create({ name: 'budget test', tier: 'free' });
  return { key, id: record.id };
}

async function remainingOf(store: RateLimitStore, ip: string, now: number): Promise<number> {
  const decision: LimitDecision = await store.peek(`auth-failures:${ip}`, FAILURES, now);
  return decision.states[0]?.remaining ?? 0;
}

/** One embedded instance; its key store answers `lookupDelayMs` late, as a networked one would. */
export async function openEmbeddedInstance(
  lookupDelayMs: number,
  start: number,
  env: Record<string, string> = {},
): Promise<BudgetInstances> {
  let now = start;
  const config = configFor(env);
  const opened = await openEmbeddedStores(':memory:');
  const keys = new CountingKeyStore(opened.keys, lookupDelayMs);
  const stores: Stores = { ...opened, keys, close: () => opened.close() };
  const app = (await composeApp(config, { stores, clock: () => now, logStream: NO_LOGS })).app;
  await app.ready();
  const service = createKeyService({
    keys: opened.keys,
    tiers: config.tiers,
    keySecret: undefined,
    clock: () => now,
  });
  return {
    apps: [app],
    lookups: () => keys.lookups,
    createKey: () => created(service),
    revoke: async (id) => void (await service.revoke(id)),
    advance: (ms) => {
      now += ms;
    },
    budgetLeft: (ip) => remainingOf(opened.rateLimits, ip, now),
    clearOfMinuteEnd: async () => {},
    async close() {
      await app.close();
      await opened.close();
    },
  };
}

/** `count` instances over one PostgreSQL schema and one Redis prefix; rejects when either is unreachable. */
export async function openScaleOutInstances(
  count: number,
  env: Record<string, string> = {},
): Promise<BudgetInstances> {
  const target = await postgresSchemaUrl();
  if ('skip' in target) throw new Error(target.skip);
  const prefix = testPrefix();
  const inspect = inspectClient();
  const config = configFor(env);
  let skew = 0;
  const clock = () => Date.now() + skew;
  const counters: CountingKeyStore[] = [];
  const closers: (() => Promise<void>)[] = [];
  const apps: FastifyInstance[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const postgres = await openPostgresStores(target.url, { schema: target.schema, timeoutMs: 10_000 });
      closers.push(() => postgres.close());
      const client = new Redis(REDIS_TEST_URL, redisCommandOptions(5_000));
      client.on('error', () => {});
      closers.push(async () => void client.disconnect());
      await whenReady(client);
      const keys = new CountingKeyStore(postgres.keys);
      counters.push(keys);
      const stores: Stores = {
        prices: postgres.prices,
        keys,
        rateLimits: new RedisRateLimitStore(client, prefix),
        notices: new MemoryNoticeBus(),
        close: async () => {},
      };
      const app = (await composeApp(config, { stores, clock, logStream: NO_LOGS })).app;
      await app.ready();
      closers.push(() => app.close());
      apps.push(app);
    }
  } catch (error) {
    for (const close of closers.reverse()) await close().catch(() => {});
    await target.drop();
    inspect.disconnect();
    throw error;
  }
  const first = await openPostgresStores(target.url, { schema: target.schema, timeoutMs: 10_000 });
  const service = createKeyService({
    keys: first.keys,
    tiers: config.tiers,
    keySecret: undefined,
    clock: clock,
  });
  const shared = new RedisRateLimitStore(inspect, prefix);
  return {
    apps,
    lookups: () => counters.reduce((sum, c) => sum + c.lookups, 0),
    createKey: () => created(service),
    revoke: async (id) => void (await service.revoke(id)),
    advance: (ms) => {
      skew += ms;
    },
    budgetLeft: (ip) => remainingOf(shared, ip, Date.now()),
    async clearOfMinuteEnd(needMs) {
      const [seconds, micros] = await inspect.time();
      const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
      const left = windowOf(now, 60).resetAtMs - now;
      if (left < needMs) await sleep(left + 50);
    },
    async close() {
      // Apps first (they flush last-used times into PostgreSQL), then their connections.
      for (const close of [...closers].reverse()) await close().catch(() => {});
      await first.close();
      await deleteKeysUnder(inspect, prefix);
      inspect.disconnect();
      await target.drop();
    },
  };
}
