import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_TIERS } from '../domain/limits/tiers.js';
import { ConfigError, loadConfig } from './config.js';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'pricepoint-config-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** Writes a config file into the temp folder and returns its absolute path. */
function configFile(text: string, extension = 'yaml'): string {
  const path = join(dir, `config-${++files}.${extension}`);
  writeFileSync(path, text);
  return path;
}

/** Asserts that loading refuses with a ConfigError whose message matches `names` (the setting). */
function refuses(env: Record<string, string>, names: RegExp): void {
  assert.throws(
    () => loadConfig(env),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
      assert.match(error.message, names);
      return true;
    },
  );
}

describe('loadConfig defaults', () => {
  test('without any setting: HTTPS with a self-signed certificate on 127.0.0.1:8443 and the default tiers', () => {
    const config = loadConfig({});
    const dataDir = resolve(process.cwd(), '.pricepoint');
    assert.deepEqual(config, {
      dataDir,
      databasePath: join(dataDir, 'pricepoint.db'),
      host: '127.0.0.1',
      port: 8443,
      tls: { mode: 'self-signed' },
      trustProxy: [],
      logLevel: 'info',
      tiers: DEFAULT_TIERS,
      keySecret: undefined,
      devData: false,
      authFailuresPerMinute: 20,
      maxConnectionsPerAddress: 256,
      keyCacheMs: 2000,
      shutdownGraceMs: 10_000,
      databaseUrl: undefined,
      redisUrl: undefined,
      redisPrefix: 'pricepoint',
      redisFallback: 'local',
      redisTimeoutMs: 200,
      readCacheMs: 3_600_000,
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
    assert.equal(config.readCacheMs, 5_000, 'days read from PostgreSQL are reused for 5 s');
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
      { key: defaults.keyCacheMs, read: defaults.readCacheMs, redis: defaults.redisTimeoutMs },
      { key: 2000, read: 5000, redis: 200 },
      'the defaults on PostgreSQL',
    );
    const set = loadConfig({
      PRICEPOINT_DATABASE_URL: 'postgres://db.internal/prices',
      PRICEPOINT_KEY_CACHE_MS: '60000',
      PRICEPOINT_READ_CACHE_MS: '0',
      PRICEPOINT_REDIS_TIMEOUT_MS: '2000',
    });
    assert.deepEqual(
      { key: set.keyCacheMs, read: set.readCacheMs, redis: set.redisTimeoutMs },
      { key: 60_000, read: 0, redis: 2000 },
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

describe('loadConfig reads every PRICEPOINT_* setting', () => {
  test('host, port, data folder, log level, proxies, dev data, key secret and the numeric limits', () => {
    const config = loadConfig({
      PRICEPOINT_HOST: '0.0.0.0',
      PRICEPOINT_PORT: '9443',
      PRICEPOINT_DATA_DIR: '/var/lib/pricepoint',
      PRICEPOINT_LOG_LEVEL: 'warn',
      PRICEPOINT_TRUST_PROXY: '10.0.0.1, 10.0.0.2 ,192.168.0.0/16',
      PRICEPOINT_DEV_DATA: 'true',
      PRICEPOINT_KEY_SECRET: 'a-secret-of-16-chars',
      PRICEPOINT_AUTH_FAILURES_PER_MINUTE: '5',
      PRICEPOINT_MAX_CONNECTIONS_PER_ADDRESS: '0',
      PRICEPOINT_SHUTDOWN_GRACE_SECONDS: '30',
    });
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.port, 9443);
    assert.equal(config.dataDir, '/var/lib/pricepoint');
    assert.equal(config.databasePath, '/var/lib/pricepoint/pricepoint.db');
    assert.equal(config.logLevel, 'warn');
    assert.deepEqual(config.trustProxy, ['10.0.0.1', '10.0.0.2', '192.168.0.0/16']);
    assert.equal(config.devData, true);
    assert.equal(config.keySecret, 'a-secret-of-16-chars');
    assert.equal(config.authFailuresPerMinute, 5);
    assert.equal(config.maxConnectionsPerAddress, 0, '0: no bound on connections per address');
    assert.equal(config.shutdownGraceMs, 30_000);
  });

  test('port 0 (any free port) and 65535 are both accepted', () => {
    assert.equal(loadConfig({ PRICEPOINT_PORT: '0' }).port, 0);
    assert.equal(loadConfig({ PRICEPOINT_PORT: '65535' }).port, 65535);
  });

  test('PRICEPOINT_TRUST_PROXY takes addresses, CIDR ranges of both families and the named ranges', () => {
    const entries = ['10.0.0.1', '192.168.0.0/16', '::1', '2001:db8::/32', '::ffff:10.0.0.1', 'loopback'];
    assert.deepEqual(loadConfig({ PRICEPOINT_TRUST_PROXY: entries.join(',') }).trustProxy, entries);
  });

  test('every log level pino knows is accepted', () => {
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) {
      assert.equal(loadConfig({ PRICEPOINT_LOG_LEVEL: level }).logLevel, level);
    }
  });

  test('PRICEPOINT_TLS_CERT and PRICEPOINT_TLS_KEY together serve the operator certificate, as absolute paths', () => {
    const config = loadConfig({ PRICEPOINT_TLS_CERT: 'tls/cert.pem', PRICEPOINT_TLS_KEY: '/etc/pp/key.pem' });
    assert.deepEqual(config.tls, {
      mode: 'files',
      certFile: resolve(process.cwd(), 'tls/cert.pem'),
      keyFile: '/etc/pp/key.pem',
    });
  });

  test('PRICEPOINT_INSECURE_HTTP turns TLS off; true and false have their usual spellings', () => {
    for (const yes of ['true', 'TRUE', '1', 'yes', 'on', ' True ']) {
      assert.deepEqual(loadConfig({ PRICEPOINT_INSECURE_HTTP: yes }).tls, { mode: 'off' }, yes);
    }
    for (const no of ['false', 'False', '0', 'no', 'off']) {
      assert.deepEqual(loadConfig({ PRICEPOINT_INSECURE_HTTP: no }).tls, { mode: 'self-signed' }, no);
    }
  });

  test('PRICEPOINT_DEV_DATA=false leaves the development data set out', () => {
    assert.equal(loadConfig({ PRICEPOINT_DEV_DATA: 'false' }).devData, false);
  });
});

describe('loadConfig reads the PRICEPOINT_CONFIG file', () => {
  const partner = {
    limits: [
      { name: 'minute', limit: 300, windowSeconds: 60 },
      { name: 'day', limit: 100_000, windowSeconds: 86_400 },
    ],
    countPer: 'key',
    kinds: ['electricity'],
    historyDays: 365,
  };

  test('a JSON file: its settings apply and its tiers are merged over the defaults by name', () => {
    const path = configFile(
      JSON.stringify({
        host: '::',
        port: 8444,
        dataDir: '/srv/pp',
        logLevel: 'debug',
        tlsCert: '/etc/pp/cert.pem',
        tlsKey: '/etc/pp/key.pem',
        trustProxy: ['10.0.0.1'],
        devData: true,
        tiers: { demo: { limits: [{ name: 'minute', limit: 5, windowSeconds: 60 }] }, partner },
      }),
      'json',
    );
    const config = loadConfig({ PRICEPOINT_CONFIG: path });
    assert.equal(config.host, '::');
    assert.equal(config.port, 8444);
    assert.equal(config.dataDir, '/srv/pp');
    assert.equal(config.logLevel, 'debug');
    assert.deepEqual(config.tls, { mode: 'files', certFile: '/etc/pp/cert.pem', keyFile: '/etc/pp/key.pem' });
    assert.deepEqual(config.trustProxy, ['10.0.0.1']);
    assert.equal(config.devData, true);
    assert.deepEqual(config.tiers['demo'], {
      name: 'demo',
      limits: [{ name: 'minute', limit: 5, windowSeconds: 60 }],
      countPer: 'key+ip',
      kinds: null,
      historyDays: 31,
    });
    assert.deepEqual(config.tiers['partner'], { name: 'partner', ...partner });
    assert.deepEqual(config.tiers['free'], DEFAULT_TIERS['free']);
  });

  test('a YAML file works the same', () => {
    const path = configFile(
      [
        'port: 8445',
        'insecureHttp: true',
        'tiers:',
        '  free:',
        '    countPer: key+ip',
        '    historyDays: null',
        '  partner:',
        '    limits:',
        '      - { name: minute, limit: 300, windowSeconds: 60 }',
        '      - name: day',
        '        limit: 100000',
        '        windowSeconds: 86400',
        '    countPer: key',
        '    kinds: [electricity]',
        '    historyDays: 365',
        '',
      ].join('\n'),
    );
    const config = loadConfig({ PRICEPOINT_CONFIG: path });
    assert.equal(config.port, 8445);
    assert.deepEqual(config.tls, { mode: 'off' });
    assert.equal(config.tiers['free']?.countPer, 'key+ip');
    assert.equal(config.tiers['free']?.historyDays, null);
    assert.deepEqual(config.tiers['free']?.limits, DEFAULT_TIERS['free']?.limits);
    assert.deepEqual(config.tiers['partner'], { name: 'partner', ...partner });
  });

  test('an empty file changes nothing', () => {
    assert.deepEqual(loadConfig({ PRICEPOINT_CONFIG: configFile('') }).tiers, DEFAULT_TIERS);
  });

  test('environment variables win over the file', () => {
    const path = configFile(
      JSON.stringify({ port: 8444, logLevel: 'debug', host: '::', devData: true }),
      'json',
    );
    const config = loadConfig({
      PRICEPOINT_CONFIG: path,
      PRICEPOINT_PORT: '9000',
      PRICEPOINT_LOG_LEVEL: 'error',
      PRICEPOINT_HOST: '127.0.0.2',
      PRICEPOINT_DEV_DATA: 'no',
    });
    assert.equal(config.port, 9000);
    assert.equal(config.logLevel, 'error');
    assert.equal(config.host, '127.0.0.2');
    assert.equal(config.devData, false);
  });
});

describe('a bad setting stops the start with a message that names it', () => {
  test('PRICEPOINT_PORT that is not a number', () => {
    refuses({ PRICEPOINT_PORT: 'abc' }, /^PRICEPOINT_PORT: .*"abc"/);
    refuses({ PRICEPOINT_PORT: '80.5' }, /^PRICEPOINT_PORT/);
    refuses({ PRICEPOINT_PORT: '-1' }, /^PRICEPOINT_PORT/);
    refuses({ PRICEPOINT_PORT: '0x50' }, /^PRICEPOINT_PORT/);
  });

  test('PRICEPOINT_PORT out of range', () => {
    refuses(
      { PRICEPOINT_PORT: '70000' },
      /^PRICEPOINT_PORT: must be a whole number from 0 to 65535, got "70000"/,
    );
  });

  test('PRICEPOINT_TRUST_PROXY with something that is not an address or CIDR range', () => {
    // Fastify would refuse these too, but only later and without naming the setting.
    for (const bad of ['proxy.internal', '10.0.0.0/33', '10.0.0.0/0', '::1/129', '10.0.0.1/']) {
      refuses({ PRICEPOINT_TRUST_PROXY: `10.0.0.1,${bad}` }, new RegExp(`^PRICEPOINT_TRUST_PROXY: "${bad}"`));
    }
    const file = configFile(JSON.stringify({ trustProxy: ['10.0.0.0/64'] }), 'json');
    refuses({ PRICEPOINT_CONFIG: file }, /^PRICEPOINT_CONFIG: .*: setting "trustProxy": "10\.0\.0\.0\/64"/);
  });

  test('PRICEPOINT_LOG_LEVEL that pino does not know', () => {
    refuses({ PRICEPOINT_LOG_LEVEL: 'loud' }, /^PRICEPOINT_LOG_LEVEL: must be one of .*got "loud"/);
  });

  test('PRICEPOINT_INSECURE_HTTP and PRICEPOINT_DEV_DATA that are neither true nor false', () => {
    refuses(
      { PRICEPOINT_INSECURE_HTTP: 'maybe' },
      /^PRICEPOINT_INSECURE_HTTP: must be true or false, got "maybe"/,
    );
    refuses({ PRICEPOINT_DEV_DATA: 'sure' }, /^PRICEPOINT_DEV_DATA/);
  });

  test('only one of PRICEPOINT_TLS_CERT and PRICEPOINT_TLS_KEY', () => {
    refuses(
      { PRICEPOINT_TLS_CERT: '/etc/pp/cert.pem' },
      /PRICEPOINT_TLS_CERT and PRICEPOINT_TLS_KEY: set both/,
    );
    refuses(
      { PRICEPOINT_TLS_KEY: '/etc/pp/key.pem' },
      /PRICEPOINT_TLS_CERT and PRICEPOINT_TLS_KEY: set both/,
    );
    const onlyKeyInFile = configFile(JSON.stringify({ tlsKey: '/etc/pp/key.pem' }), 'json');
    refuses({ PRICEPOINT_CONFIG: onlyKeyInFile }, /PRICEPOINT_TLS_CERT and PRICEPOINT_TLS_KEY/);
  });

  test('PRICEPOINT_INSECURE_HTTP together with a certificate', () => {
    refuses(
      { PRICEPOINT_INSECURE_HTTP: 'true', PRICEPOINT_TLS_CERT: '/c.pem', PRICEPOINT_TLS_KEY: '/k.pem' },
      /^PRICEPOINT_INSECURE_HTTP/,
    );
  });

  test('a PRICEPOINT_KEY_SECRET shorter than 16 characters', () => {
    refuses({ PRICEPOINT_KEY_SECRET: 'short' }, /^PRICEPOINT_KEY_SECRET: must be at least 16 characters/);
    assert.equal(loadConfig({ PRICEPOINT_KEY_SECRET: 'x'.repeat(16) }).keySecret, 'x'.repeat(16));
  });

  test('numeric limits of zero or out of range', () => {
    refuses({ PRICEPOINT_AUTH_FAILURES_PER_MINUTE: '0' }, /^PRICEPOINT_AUTH_FAILURES_PER_MINUTE/);
    refuses({ PRICEPOINT_SHUTDOWN_GRACE_SECONDS: '0' }, /^PRICEPOINT_SHUTDOWN_GRACE_SECONDS/);
    refuses({ PRICEPOINT_MAX_CONNECTIONS_PER_ADDRESS: '-1' }, /^PRICEPOINT_MAX_CONNECTIONS_PER_ADDRESS/);
    refuses({ PRICEPOINT_SHUTDOWN_GRACE_SECONDS: '3601' }, /^PRICEPOINT_SHUTDOWN_GRACE_SECONDS/);
  });

  test('a Redis timeout or cache time that is not a whole number of milliseconds in range', () => {
    refuses(
      { PRICEPOINT_REDIS_TIMEOUT_MS: '5' },
      /^PRICEPOINT_REDIS_TIMEOUT_MS: must be a whole number from 10 to 60000, got "5"/,
    );
    refuses({ PRICEPOINT_REDIS_TIMEOUT_MS: '60001' }, /^PRICEPOINT_REDIS_TIMEOUT_MS/);
    refuses({ PRICEPOINT_REDIS_TIMEOUT_MS: '1.5s' }, /^PRICEPOINT_REDIS_TIMEOUT_MS/);
    refuses({ PRICEPOINT_KEY_CACHE_MS: '-1' }, /^PRICEPOINT_KEY_CACHE_MS/);
    refuses({ PRICEPOINT_KEY_CACHE_MS: '3600001' }, /^PRICEPOINT_KEY_CACHE_MS/);
    refuses({ PRICEPOINT_READ_CACHE_MS: 'long' }, /^PRICEPOINT_READ_CACHE_MS/);
  });

  test('PRICEPOINT_CONFIG pointing to a file that does not exist', () => {
    const missing = join(dir, 'no-such-file.yaml');
    refuses({ PRICEPOINT_CONFIG: missing }, new RegExp(`^PRICEPOINT_CONFIG: cannot read ${missing}`));
  });

  test('PRICEPOINT_CONFIG pointing to a file that is neither JSON nor YAML', () => {
    const yaml = configFile('tiers:\n  demo: [unclosed\n');
    refuses(
      { PRICEPOINT_CONFIG: yaml },
      new RegExp(`^PRICEPOINT_CONFIG: ${yaml} is neither valid JSON nor YAML`),
    );
    const json = configFile('{"tiers": {', 'json');
    refuses({ PRICEPOINT_CONFIG: json }, /^PRICEPOINT_CONFIG: .* is neither valid JSON nor YAML/);
    const twice = configFile('port: 1\nport: 2\n');
    refuses({ PRICEPOINT_CONFIG: twice }, /^PRICEPOINT_CONFIG: .* is neither valid JSON nor YAML/);
  });

  test('a config file that is not a map of settings', () => {
    refuses(
      { PRICEPOINT_CONFIG: configFile('just a string\n') },
      /PRICEPOINT_CONFIG: .*setting "\(top level\)"/,
    );
    refuses({ PRICEPOINT_CONFIG: configFile('[1, 2]\n') }, /PRICEPOINT_CONFIG: .*setting "\(top level\)"/);
  });

  test('a misspelt or badly typed setting in the file, named by its path', () => {
    refuses({ PRICEPOINT_CONFIG: configFile('prot: 8443\n') }, /PRICEPOINT_CONFIG: .*setting "prot"/);
    refuses({ PRICEPOINT_CONFIG: configFile('port: 70000\n') }, /PRICEPOINT_CONFIG: .*setting "port"/);
    refuses({ PRICEPOINT_CONFIG: configFile('logLevel: loud\n') }, /PRICEPOINT_CONFIG: .*setting "logLevel"/);
    refuses({ PRICEPOINT_CONFIG: configFile('insecureHttp: maybe\n') }, /setting "insecureHttp"/);
  });

  describe('a bad tier in the file', () => {
    const tierFile = (tiers: unknown) => configFile(JSON.stringify({ tiers }), 'json');
    const minute = { name: 'minute', limit: 30, windowSeconds: 60 };

    test('a limit of 0', () => {
      const path = tierFile({ partner: { limits: [{ ...minute, limit: 0 }] } });
      refuses(
        { PRICEPOINT_CONFIG: path },
        /^PRICEPOINT_CONFIG: .*setting "tiers\.partner\.limits\.0\.limit"/,
      );
    });

    test('a limit that is not a whole number, or a window of 0 seconds', () => {
      refuses(
        { PRICEPOINT_CONFIG: tierFile({ demo: { limits: [{ ...minute, limit: 2.5 }] } }) },
        /setting "tiers\.demo\.limits\.0\.limit"/,
      );
      refuses(
        {
          PRICEPOINT_CONFIG: tierFile({
            demo: { limits: [minute, { ...minute, name: 'x', windowSeconds: 0 }] },
          }),
        },
        /setting "tiers\.demo\.limits\.1\.windowSeconds"/,
      );
    });

    test('an unknown field such as limitz', () => {
      const path = tierFile({ partner: { limitz: [minute] } });
      refuses({ PRICEPOINT_CONFIG: path }, /^PRICEPOINT_CONFIG: .*setting "tiers\.partner\.limitz"/);
      const inRule = tierFile({ partner: { limits: [{ ...minute, windowSecs: 60 }] } });
      refuses({ PRICEPOINT_CONFIG: inRule }, /setting "tiers\.partner\.limits\.0\.windowSecs"/);
    });

    test('countPer other than key or key+ip', () => {
      const path = tierFile({ partner: { limits: [minute], countPer: 'ip' } });
      refuses({ PRICEPOINT_CONFIG: path }, /^PRICEPOINT_CONFIG: .*setting "tiers\.partner\.countPer"/);
    });

    test('a new tier without limits', () => {
      const path = tierFile({ partner: { countPer: 'key', historyDays: 365 } });
      refuses({ PRICEPOINT_CONFIG: path }, /^PRICEPOINT_CONFIG: .*tiers\.partner\.limits is required/);
    });

    test('an empty list of limits, also for a default tier', () => {
      refuses({ PRICEPOINT_CONFIG: tierFile({ demo: { limits: [] } }) }, /setting "tiers\.demo\.limits"/);
    });

    test('a negative historyDays or an empty kind', () => {
      refuses(
        { PRICEPOINT_CONFIG: tierFile({ free: { historyDays: -1 } }) },
        /setting "tiers\.free\.historyDays"/,
      );
      refuses({ PRICEPOINT_CONFIG: tierFile({ free: { kinds: [''] } }) }, /setting "tiers\.free\.kinds/);
    });

    test('a tier or limit name outside lower-case letters, digits, _ and -', () => {
      // Names end up in headers, logs and problem details: a quote or space there would break them.
      refuses(
        { PRICEPOINT_CONFIG: tierFile({ 'Partner Tier': { limits: [minute] } }) },
        /setting "tiers\.Partner Tier"/,
      );
      refuses(
        { PRICEPOINT_CONFIG: tierFile({ partner: { limits: [{ ...minute, name: 'per "minute"' }] } }) },
        /setting "tiers\.partner\.limits\.0\.name"/,
      );
    });

    test('two limits of one tier with the same name', () => {
      // RateLimit-Policy and violated-policies identify a limit by its name alone.
      const path = tierFile({
        partner: { limits: [minute, { ...minute, limit: 500, windowSeconds: 3600 }] },
      });
      refuses(
        { PRICEPOINT_CONFIG: path },
        /^PRICEPOINT_CONFIG: .*setting "tiers\.partner\.limits".*"minute"/,
      );
    });
  });
});

test('a misspelt PRICEPOINT_ variable stops the start and names itself', () => {
  assert.throws(
    () => loadConfig({ PRICEPOINT_PROT: '8080' }),
    (error: unknown) =>
      error instanceof ConfigError && /^PRICEPOINT_PROT: not a Pricepoint setting/.test(error.message),
  );
});
