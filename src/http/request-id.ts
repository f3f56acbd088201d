/**
 * Request ids (README "Logs", the `X-Request-Id` header): random version 4 UUIDs, from the same
 * cryptographic source and batching as `crypto.randomUUID()`, written as one flat string.
 *
 * `randomUUID()` joins its text from 20 pieces. Every request id is then read three times (quoted
 * into the log line, written into the head, logged again on an error), and V8 first copies the
 * pieces into one string for each kind of reading; on a cached answer that cost about 3,000
 * instructions, more than making the id (bench/README.md, "Request ids"). Here the 36 characters
 * are written into bytes and read out as one string.
 */
import { randomFillSync } from 'node:crypto';

/** Ids made from one fill of random bytes (as Node's `randomUUID` batches its entropy). */
const BATCH = 128;
const HEX = Buffer.from('0123456789abcdef', 'latin1');

const random = Buffer.alloc(16 * BATCH);
let used = BATCH;
const text = Buffer.alloc(36);

/**
 * A new random UUID (RFC 9562, version 4), in lower case.
 * @example requestId() // '0b6f1a8e-3c1d-4f6e-9a0b-5d2c7e8f9a10'
 */
export function requestId(): string {
  if (used === BATCH) {
    randomFillSync(random);
    used = 0;
  }
  const at = used * 16;
  used += 1;
  let out = 0;
  for (let i = 0; i < 16; i++) {
    let byte = random[at + i] as number;
    if (i === 6)
      byte = (byte & 0x0f) | 0x40; // version 4
    else if (i === 8) byte = (byte & 0x3f) | 0x80; // the RFC's variant
    if (i === 4 || i === 6 || i === 8 || i === 10) text[out++] = 0x2d; // '-'
    text[out++] = HEX[byte >> 4] as number;
    text[out++] = HEX[byte & 0x0f] as number;
  }
  return text.toString('latin1', 0, 36);
}
