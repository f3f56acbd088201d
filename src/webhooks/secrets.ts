/**
 * Webhook signing secrets. The server must sign with them, so unlike API keys they cannot be kept as
 * a hash: with `PRICEPOINT_KEY_SECRET` set they are sealed with AES-256-GCM under a key derived from
 * it, so a copy of the database alone does not give them away; without it they are kept as they are,
 * protected only by the database's owner-only file mode (docs/webhooks.md).
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/** A new secret as the Standard Webhooks specification writes it: `whsec_` + base64 of 32 random bytes. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

// A key of its own for this use, so the key hashes' HMAC key is never used as a cipher key too.
const sealingKey = (keySecret: string) =>
  createHmac('sha256', keySecret).update('pricepoint webhook secrets').digest();

/** The secret as stored: `v1:` + base64(iv, tag, ciphertext), or `plain:` + the secret without a key secret. */
export function sealSecret(secret: string, keySecret: string | undefined): string {
  if (keySecret === undefined) return `plain:${secret}`;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(keySecret), iv);
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return `v1:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64')}`;
}

/** The secret back; throws when it was sealed under another key secret (or none is set now). */
export function openSecret(stored: string, keySecret: string | undefined): string {
  if (stored.startsWith('plain:')) return stored.slice('plain:'.length);
  if (!stored.startsWith('v1:') || keySecret === undefined) {
    throw new Error('the webhook secret was sealed with PRICEPOINT_KEY_SECRET, which is not set now');
  }
  const bytes = Buffer.from(stored.slice(3), 'base64');
  const decipher = createDecipheriv('aes-256-gcm', sealingKey(keySecret), bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
}
