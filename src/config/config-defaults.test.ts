/** What Pricepoint runs with when nothing is set, and which source wins when several are. */
import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { DEFAULT_TIERS } from '../domain/limits/tiers.js';
import { loadConfig } from './config.js';

describe('loadConfig defaults', () => {
  test('without any setting: HTTPS with a self-signed certificate on 127.0.0.1:8443 and the default tiers', () => {
    const config = loadConfig({});
    const dataDir = resolve(process.cwd(), '.pricepoint');
    assert.deepEqual(config, {
      dataDir,
      databasePath: join(dataDir, 'pricepoint.db'),
      host: '127.0.0.1',
      port: 8443,
      publicUrl: undefined,
      tls: { mode: 'self-signed' },
      trustProxy: [],
      logLevel: 'info',
      tiers: DEFAULT_TIERS,
      keySecret: undefined,
      devData: false,
      fastPath: true,
      fx: {},
      tariffs: {},
      authFailuresPerMinute: 20,
      auditRetentionDays: 400,
      maxConnectionsPerAddress: 256,
      maxUnsentBytesPerAddress: 32 * 1024 * 1024,
      idleSeconds: 30,
      keyCacheMs: 2000,
      shutdownGraceMs: 10_000,
      databaseUrl: undefined,
      databaseTimeoutMs: 1000,
      redisUrl: undefined,
      redisPrefix: 'pricepoint',
      redisFallback: 'local',
      redisTimeoutMs: 200,
      readCacheMs: 3_600_000,
      changeCheckMs: 5_000,
      heavyReadsInFlight: 2,
      buildThreads: 1,
      heavyReadsPerClient: 2,
      tzData: { systemDir: '/usr/share/zoneinfo' },
      sources: [],
      webhookAllowPrivate: false,
      webhookAllowHttp: false,
      webhookTimeoutMs: 10_000,
      usageHistory: true,
      usageFlushSeconds: 5,
      usageRetentionDays: 400,
    });
  });

  test('scale-out settings: PostgreSQL and Redis URLs, the Redis prefix and fallback policy', () => {
    const config = loadConfig({
      PRICEPOINT_DATABASE_URL: 'postgres://pricepoint:secret@db.internal:5432/prices',
      PRICEPOINT_REDIS_URL: 'redis://cache.internal:6379/2',
      PRICEPOINT_REDIS_PREFIX: 'pp-eu',
      PRICEPOINT_REDIS_FALLBACK: 'closed',
    });
    assert.equal(config.databaseUrl, 'postgres://pricepoint:secret@db.internal:5432/prices');
    assert.equal(config.redisUrl, 'redis://cache.internal:6379/2');
    assert.equal(config.redisPrefix, 'pp-eu');
    assert.equal(config.redisFallback, 'closed');
    assert.equal(config.readCacheMs, 3_600_000, 'days read from PostgreSQL live until they change');
    assert.equal(config.changeCheckMs, 5_000, 'a change whose notice was lost is seen within 5 s');
  });

  test('a bad scale-out setting names it and never repeats a URL that may hold a password', () => {
    const refused = (env: Record<string, string>, pattern: RegExp) => {
      assert.throws(
        () => loadConfig(env),
        (error: Error) => {
          assert.match(error.message, pattern);
          assert.ok(!error.message.includes('secret'), `the password stays out: ${error.message}`);
          return true;
        },
      );
    };
    refused(
      { PRICEPOINT_DATABASE_URL: 'mysql://u:secret@h/db' },
      /^PRICEPOINT_DATABASE_URL: must start with postgres/,
    );
    refused({ PRICEPOINT_DATABASE_URL: 'not a url secret' }, /^PRICEPOINT_DATABASE_URL: not a URL/);
    refused({ PRICEPOINT_REDIS_URL: 'http://u:secret@h' }, /^PRICEPOINT_REDIS_URL: must start with redis/);
    refused(
      { PRICEPOINT_REDIS_FALLBACK: 'maybe' },
      /^PRICEPOINT_REDIS_FALLBACK: must be one of local, open, closed/,
    );
    refused({ PRICEPOINT_REDIS_PREFIX: 'has space' }, /^PRICEPOINT_REDIS_PREFIX/);
  });

  test('a verified key is cached for less than the 5 s within which a revocation must be seen', () => {
    assert.ok(loadConfig({}).keyCacheMs < 5000, 'the default key cache time is under 5 s');
  });

  test('cache times and the Redis command timeout: defaults, and what the environment sets', () => {
    const defaults = loadConfig({ PRICEPOINT_DATABASE_URL: 'postgres://db.internal/prices' });
    assert.deepEqual(
      {
        key: defaults.keyCacheMs,
        read: defaults.readCacheMs,
        check: defaults.changeCheckMs,
        redis: defaults.redisTimeoutMs,
      },
      { key: 2000, read: 3_600_000, check: 5000, redis: 200 },
      'the defaults on PostgreSQL',
    );
    const set = loadConfig({
      PRICEPOINT_DATABASE_URL: 'postgres://db.internal/prices',
      PRICEPOINT_KEY_CACHE_MS: '60000',
      PRICEPOINT_READ_CACHE_MS: '0',
      PRICEPOINT_CHANGE_CHECK_MS: '250',
      PRICEPOINT_REDIS_TIMEOUT_MS: '2000',
    });
    assert.deepEqual(
      { key: set.keyCacheMs, read: set.readCacheMs, check: set.changeCheckMs, redis: set.redisTimeoutMs },
      { key: 60_000, read: 0, check: 250, redis: 2000 },
      'each setting replaces its default; 0 turns the read cache off',
    );
    assert.equal(
      loadConfig({ PRICEPOINT_READ_CACHE_MS: '1500' }).readCacheMs,
      1500,
      'the read cache time is set on SQLite too',
    );
  });

  test('an empty environment value counts as not set', () => {
    const config = loadConfig({
      PRICEPOINT_PORT: '',
      PRICEPOINT_HOST: '',
      PRICEPOINT_LOG_LEVEL: '',
      PRICEPOINT_DATA_DIR: '',
      PRICEPOINT_INSECURE_HTTP: '',
      PRICEPOINT_TRUST_PROXY: ' ',
      PRICEPOINT_KEY_SECRET: '',
      PRICEPOINT_CONFIG: '',
    });
    assert.equal(config.port, 8443);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.logLevel, 'info');
    assert.deepEqual(config.tls, { mode: 'self-signed' });
    assert.deepEqual(config.trustProxy, []);
    assert.equal(config.keySecret, undefined);
  });

  test('overrides from the CLI or a test win over every other source', () => {
    const config = loadConfig({ PRICEPOINT_DEV_DATA: 'false' }, { devData: true, databasePath: ':memory:' });
    assert.equal(config.devData, true);
    assert.equal(config.databasePath, ':memory:');
  });
});
