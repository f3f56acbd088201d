/**
 * `signup:` and `publicUrl` in the config file (docs/invitations.md): sign-up is off without it, its
 * defaults fill what is left out, and a bad entry is refused, named by its path in the file.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from './config.js';
import { configFiles, refuses } from './config-fixtures.js';

const files = configFiles();
const signupFile = (signup: unknown, more: object = {}) =>
  files.write(JSON.stringify({ signup, ...more }), 'json');

describe('open sign-up in the config file', () => {
  test('is off without a signup: entry', () => {
    assert.equal(loadConfig({}).signup, undefined);
  });

  test('names one tier; scopes, the per-address limit and key expiry have defaults', () => {
    const config = loadConfig({ PRICEPOINT_CONFIG: signupFile({ tier: 'free' }) });
    assert.deepEqual(config.signup, {
      tier: 'free',
      scopes: ['read'],
      perAddress: { limit: 3, windowSeconds: 86_400 },
      keyExpiresInMs: null,
    });
  });

  test('takes its own limit, scopes and key lifetime, and a tier the file defines', () => {
    const path = files.write(
      [
        'tiers:',
        '  trial:',
        '    limits: [{ name: minute, limit: 10, windowSeconds: 60 }]',
        'signup:',
        '  tier: trial',
        '  scopes: [read, write]',
        '  perAddress: { limit: 5, windowSeconds: 3600 }',
        '  keyExpiresIn: 30d',
      ].join('\n'),
    );
    assert.deepEqual(loadConfig({ PRICEPOINT_CONFIG: path }).signup, {
      tier: 'trial',
      scopes: ['read', 'write'],
      perAddress: { limit: 5, windowSeconds: 3600 },
      keyExpiresInMs: 30 * 86_400_000,
    });
  });

  test('a tier that is not configured, or a misspelt field, is refused and named', () => {
    refuses(
      { PRICEPOINT_CONFIG: signupFile({ tier: 'gold' }) },
      /setting "signup\.tier" must name a tier.*"gold"/,
    );
    refuses({ PRICEPOINT_CONFIG: signupFile({ tier: '__proto__' }) }, /setting "signup\.tier"/);
    refuses(
      { PRICEPOINT_CONFIG: signupFile({ tier: 'free', perAdress: {} }) },
      /setting "signup\.perAdress"/,
    );
    refuses({ PRICEPOINT_CONFIG: signupFile({}) }, /signup/);
    refuses(
      { PRICEPOINT_CONFIG: signupFile({ tier: 'free', scopes: ['root'] }) },
      /setting "signup\.scopes\.0"/,
    );
    refuses(
      { PRICEPOINT_CONFIG: signupFile({ tier: 'free', perAddress: { limit: 0, windowSeconds: 60 } }) },
      /setting "signup\.perAddress\.limit"/,
    );
    refuses(
      { PRICEPOINT_CONFIG: signupFile({ tier: 'free', keyExpiresIn: '1 month' }) },
      /setting "signup\.keyExpiresIn"/,
    );
  });
});

describe('the public URL', () => {
  test('is read from the environment or the file', () => {
    assert.equal(
      loadConfig({ PRICEPOINT_PUBLIC_URL: 'https://prices.example.com' }).publicUrl,
      'https://prices.example.com',
    );
    const path = files.write('publicUrl: https://example.com/pricepoint');
    assert.equal(loadConfig({ PRICEPOINT_CONFIG: path }).publicUrl, 'https://example.com/pricepoint');
  });

  test('anything but an http(s) address without query or fragment is refused', () => {
    for (const bad of [
      'prices.example.com',
      'ftp://example.com',
      'https://example.com/?x=1',
      'https://u:p@example.com',
    ]) {
      refuses({ PRICEPOINT_PUBLIC_URL: bad }, /^PRICEPOINT_PUBLIC_URL: /);
    }
    refuses({ PRICEPOINT_CONFIG: files.write('publicUrl: "https://example.com/#x"') }, /setting "publicUrl"/);
  });
});
