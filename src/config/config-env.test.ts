/** Each `PRICEPOINT_*` environment variable and the values it takes (docs/settings.md). */
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig, misspeltSetting } from './config.js';

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
      PRICEPOINT_MAX_UNSENT_BYTES_PER_ADDRESS: '1048576',
      PRICEPOINT_IDLE_SECONDS: '120',
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
    assert.equal(config.maxUnsentBytesPerAddress, 1_048_576);
    assert.equal(config.idleSeconds, 120);
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

test('a misspelt PRICEPOINT_ variable stops the start and names itself', () => {
  assert.throws(
    () => loadConfig({ PRICEPOINT_PROT: '8080' }),
    (error: unknown) =>
      error instanceof ConfigError && /^PRICEPOINT_PROT: not a Pricepoint setting/.test(error.message),
  );
});

test('names a few letters off a setting, or cut or extended at an underscore, are refused as misspelt', () => {
  for (const [name, meant] of [
    ['PRICEPOINT_PROT', 'PRICEPOINT_PORT'],
    ['PRICEPOINT_TLS_KY', 'PRICEPOINT_TLS_KEY'],
    ['PRICEPOINT_DATABASE', 'PRICEPOINT_DATABASE_URL'],
    ['PRICEPOINT_REDIS_URL_2', 'PRICEPOINT_REDIS_URL'],
    ['PRICEPOINT_KEY', 'PRICEPOINT_KEY_SECRET'],
  ]) {
    assert.equal(misspeltSetting(name as string), meant, name);
    assert.throws(
      () => loadConfig({ [name as string]: 'x' }),
      (error: unknown) => error instanceof ConfigError && error.message.includes(`did you mean ${meant}?`),
      name,
    );
  }
});

test("clients' own PRICEPOINT_ variables are left alone", () => {
  for (const name of [
    'PRICEPOINT_URL',
    'PRICEPOINT_API_KEY',
    'PRICEPOINT_WEBHOOK_SECRET',
    'PRICEPOINT_ADMIN_KEY',
  ]) {
    assert.equal(misspeltSetting(name), undefined, name);
    assert.equal(loadConfig({ [name]: 'x' }).port, 8443, name);
  }
});
