/** The config file (`PRICEPOINT_CONFIG`, JSON or YAML): what it sets, and that the environment wins. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_TIERS } from '../domain/limits/tiers.js';
import { loadConfig } from './config.js';
import { configFiles, refuses } from './config-fixtures.js';

const files = configFiles();
const configFile = files.write;

describe('loadConfig reads the PRICEPOINT_CONFIG file', () => {
  const partner = {
    limits: [
      { name: 'minute', limit: 300, windowSeconds: 60 },
      { name: 'day', limit: 100_000, windowSeconds: 86_400 },
    ],
    countPer: 'key',
    kinds: ['electricity'],
    historyDays: 365,
    streams: 10,
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
      streams: 50,
      selfRotate: false,
    });
    assert.deepEqual(config.tiers['partner'], { name: 'partner', ...partner, selfRotate: false });
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
        '    streams: 4',
        '  partner:',
        '    limits:',
        '      - { name: minute, limit: 300, windowSeconds: 60 }',
        '      - name: day',
        '        limit: 100000',
        '        windowSeconds: 86400',
        '    countPer: key',
        '    kinds: [electricity]',
        '    historyDays: 365',
        '    streams: 10',
        '',
      ].join('\n'),
    );
    const config = loadConfig({ PRICEPOINT_CONFIG: path });
    assert.equal(config.port, 8445);
    assert.deepEqual(config.tls, { mode: 'off' });
    assert.equal(config.tiers['free']?.countPer, 'key+ip');
    assert.equal(config.tiers['free']?.historyDays, null);
    assert.equal(config.tiers['free']?.streams, 4);
    assert.deepEqual(config.tiers['free']?.limits, DEFAULT_TIERS['free']?.limits);
    assert.deepEqual(config.tiers['partner'], { name: 'partner', ...partner, selfRotate: false });
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

  test('the Redis prefix and fallback policy come from the file too, checked as in the environment', () => {
    const config = loadConfig({ PRICEPOINT_CONFIG: configFile('redisPrefix: pp-eu\nredisFallback: open\n') });
    assert.equal(config.redisPrefix, 'pp-eu');
    assert.equal(config.redisFallback, 'open');
    refuses({ PRICEPOINT_CONFIG: configFile('redisPrefix: has space\n') }, /setting "redisPrefix"/);
    refuses({ PRICEPOINT_CONFIG: configFile('redisFallback: maybe\n') }, /setting "redisFallback"/);
  });

  test('a setting without a file key in docs/settings.md is refused in the file, not ignored', () => {
    // Only the environment sets these: a key here would otherwise look set and do nothing.
    for (const key of ['keySecret', 'databaseUrl', 'readCacheMs']) {
      refuses({ PRICEPOINT_CONFIG: configFile(`${key}: x\n`) }, new RegExp(`setting "${key}"`));
    }
  });
});
