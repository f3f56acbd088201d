/**
 * The API key format (docs/keys-and-tiers.md): `pp_<kind>_<random base62, 22 chars = 131 bits><checksum>`,
 * where the checksum is the CRC32 of everything before it, written as 6 base62 characters. The
 * checksum lets a typo or a made-up key be refused without touching a store.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const KEY_KINDS = ['live', 'test', 'demo'] as const;
export type KeyKind = (typeof KEY_KINDS)[number];

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 22;
const CHECKSUM_LENGTH = 6;
const KEY_PATTERN = /^pp_(live|test|demo)_([0-9A-Za-z]{22,64})$/;

function toBase62(value: bigint, width: number): string {
  let out = '';
  let rest = value;
  while (rest > 0n) {
    out = BASE62[Number(rest % 62n)] + out;
    rest /= 62n;
  }
  return out.padStart(width, '0');
}

function checksum(body: string): string {
  return toBase62(BigInt(crc32(body)), CHECKSUM_LENGTH);
}

/**
 * A new random key of the given kind.
 * @example generateKey('live') // 'pp_live_3xK9...' (36 characters after the prefix)
 */
export function generateKey(kind: KeyKind): string {
  return keyFromRandom(kind, randomBase62(RANDOM_LENGTH));
}

/** Uniform base62 characters from the CSPRNG (bytes >= 248 are dropped, so no character is favoured). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** A key with a given random part: used for the fixed, documented demo key of the development data. */
export function keyFromRandom(kind: KeyKind, random: string): string {
  const body = `pp_${kind}_${random}`;
  return body + checksum(body);
}

/**
 * Whether `candidate` has the shape of a key and a correct checksum. Cheap and store-free, so a
 * malformed or mistyped key is refused before any lookup.
 */
export function isWellFormedKey(candidate: string): boolean {
  const match = KEY_PATTERN.exec(candidate);
  if (match === null) return false;
  const body = candidate.slice(0, candidate.length - CHECKSUM_LENGTH);
  return checksum(body) === candidate.slice(-CHECKSUM_LENGTH);
}

/** The kind a well-formed key names. */
export function keyKind(key: string): KeyKind | undefined {
  const kind = KEY_PATTERN.exec(key)?.[1];
  return kind as KeyKind | undefined;
}

/**
 * The stored form of a key: SHA-256, or HMAC-SHA-256 when the operator set a server secret, so a
 * leaked database does not hand out working keys.
 */
export function keyHash(key: string, secret?: string): string {
  return secret
    ? createHmac('sha256', secret).update(key).digest('hex')
    : createHash('sha256').update(key).digest('hex');
}

/** The last four characters, kept to let people tell their keys apart. */
export function keyLast4(key: string): string {
  return key.slice(-4);
}

/**
 * Anything in a text that looks like a key, so it can be masked before logging or echoing. A run
 * stops where another key begins: a key pasted twice in a row (`pp_live_…pp_live_…`) is two keys,
 * and the second must not survive as `_live_…` after the first run swallowed its `pp`.
 */
export const KEY_LIKE = /pp_(?:live|test|demo)_(?:(?!pp_(?:live|test|demo)_)[0-9A-Za-z])+/g;

/** `text` with every key-like run replaced by `pp_***`. */
export function maskKeys(text: string): string {
  return text.replace(KEY_LIKE, 'pp_***');
}

/**
 * Whether `text` holds anything key-like. Text that is stored and shown back (a key's or a series'
 * name) must not: a key pasted there would be kept in clear and handed to everyone who lists it.
 * @example holdsKey('dashboard') // false; holdsKey('for pp_live_3xK9...') // true
 */
export function holdsKey(text: string): boolean {
  return maskKeys(text) !== text;
}

/**
 * A URL with every key-like run masked, also one hidden by percent-encoding (`pp%5Flive%5F…`).
 * Decoding is lenient (byte by byte), so a URL that is not valid UTF-8 is masked too.
 * @example maskKeysInUrl('/x?k=pp%5Flive%5Fabc') // '/x?k=pp_***'
 */
export function maskKeysInUrl(url: string): string {
  // Nearly every URL holds neither a key's prefix nor a percent-encoded byte: nothing to mask.
  if (!url.includes('pp_') && !url.includes('%')) return url;
  const decoded = url.replace(/%[0-9A-Fa-f]{2}/g, (m) =>
    String.fromCharCode(Number.parseInt(m.slice(1), 16)),
  );
  const masked = maskKeys(decoded);
  return masked === decoded ? maskKeys(url) : masked;
}
