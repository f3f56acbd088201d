/** Webhook secrets at rest (docs/webhooks.md "How the secret is kept"). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newSecret, openSecret, sealSecret } from '../../src/webhooks/secrets.js';

const KEY_SECRET = 'a-key-secret-of-the-operator-0123';

test('a secret is the Standard Webhooks form: whsec_ and 32 random bytes in base64', () => {
  const [a, b] = [newSecret(), newSecret()];
  assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.equal(Buffer.from(a.slice(6), 'base64').length, 32);
  assert.notEqual(a, b);
});

test('sealed under the key secret it comes back only with that key secret', () => {
  const secret = newSecret();
  const sealed = sealSecret(secret, KEY_SECRET);
  assert.match(sealed, /^v1:/);
  assert.ok(!sealed.includes(secret.slice(6)));
  assert.notEqual(sealSecret(secret, KEY_SECRET), sealed, 'a fresh nonce each time');
  assert.equal(openSecret(sealed, KEY_SECRET), secret);
  assert.throws(() => openSecret(sealed, `${KEY_SECRET}x`));
  assert.throws(() => openSecret(sealed, undefined), /PRICEPOINT_KEY_SECRET/);
  const tampered = `v1:${Buffer.from(Buffer.from(sealed.slice(3), 'base64').map((byte, i) => (i === 40 ? byte ^ 1 : byte))).toString('base64')}`;
  assert.throws(() => openSecret(tampered, KEY_SECRET));
});

test('without a key secret it is kept as it is, and says so', () => {
  const secret = newSecret();
  assert.equal(sealSecret(secret, undefined), `plain:${secret}`);
  assert.equal(openSecret(`plain:${secret}`, KEY_SECRET), secret);
});
