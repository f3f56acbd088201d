import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  generateKey,
  isWellFormedKey,
  keyFromRandom,
  keyHash,
  keyKind,
  keyLast4,
  maskKeys,
  maskKeysInUrl,
} from './key-format.js';

describe('the key format pp_<kind>_<random><checksum>', () => {
  test('a generated key has the prefix, 22 random base62 characters (131 bits) and a 6-character checksum', () => {
    const key = generateKey('live');
    assert.match(key, /^pp_live_[0-9A-Za-z]{28}$/);
    assert.ok(isWellFormedKey(key));
    assert.equal(keyKind(key), 'live');
  });

  test('keys are random: 1,000 keys are all different', () => {
    assert.equal(new Set(Array.from({ length: 1000 }, () => generateKey('test'))).size, 1000);
  });

  test('any changed character breaks the checksum', () => {
    const key = generateKey('live');
    for (let i = 8; i < key.length; i++) {
      const c = key[i] === 'a' ? 'b' : 'a';
      assert.equal(isWellFormedKey(key.slice(0, i) + c + key.slice(i + 1)), false, `position ${i}`);
    }
  });

  test('other shapes are not keys', () => {
    for (const bad of [
      '',
      'pp_live_',
      'pp_prod_abcdefghijklmnopqrstuvwxyz0123',
      'Bearer x',
      `${generateKey('live')} `,
      'pp_live_abc-def',
    ]) {
      assert.equal(isWellFormedKey(bad), false, bad);
    }
  });

  test('a fixed random part gives a fixed key (the demo key)', () => {
    assert.equal(
      keyFromRandom('demo', 'TryPricepointDemo2026x'),
      keyFromRandom('demo', 'TryPricepointDemo2026x'),
    );
  });

  test('the stored hash is SHA-256, or HMAC-SHA-256 with a server secret', () => {
    const key = generateKey('live');
    assert.equal(keyHash(key), createHash('sha256').update(key).digest('hex'));
    assert.equal(
      keyHash(key, 'a-server-secret-1'),
      createHmac('sha256', 'a-server-secret-1').update(key).digest('hex'),
    );
    assert.notEqual(keyHash(key), keyHash(key, 'a-server-secret-1'));
    assert.equal(keyLast4(key), key.slice(-4));
  });

  test('maskKeys hides every key-like run in a text', () => {
    const key = generateKey('test');
    assert.equal(maskKeys(`/api/v1/${key}?x=${key}`), '/api/v1/pp_***?x=pp_***');
  });

  test('maskKeysInUrl hides keys also when percent-encoded, and gives back a URL without any as it is', () => {
    const key = generateKey('live');
    const encoded = key.replace(/_/g, '%5F').replace('p', '%70');
    assert.equal(maskKeysInUrl(`/api/v1/prices/today?x=${key}`), '/api/v1/prices/today?x=pp_***');
    assert.equal(maskKeysInUrl(`/api/v1/prices/today?x=${encoded}`), '/api/v1/prices/today?x=pp_***');
    const clean = '/api/v1/prices/today?symbols=NO1&tz=Europe%2FOslo';
    assert.equal(maskKeysInUrl(clean), clean);
    assert.equal(maskKeysInUrl('/api/v1/prices/today?symbols=NO1'), '/api/v1/prices/today?symbols=NO1');
  });
});
