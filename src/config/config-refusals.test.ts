/** A bad setting, in the environment or the file, stops the start with a message that names it. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadConfig } from './config.js';
import { configFiles, refuses } from './config-fixtures.js';

const files = configFiles();
const configFile = files.write;
const dir = files.dir;

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
    refuses({ PRICEPOINT_MAX_UNSENT_BYTES_PER_ADDRESS: '32MiB' }, /^PRICEPOINT_MAX_UNSENT_BYTES_PER_ADDRESS/);
    refuses({ PRICEPOINT_IDLE_SECONDS: '0' }, /^PRICEPOINT_IDLE_SECONDS/);
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
});
