/**
 * Request ids (docs/settings.md "Logs", the `X-Request-Id` header): random version 4 UUIDs, from the same
 * cryptographic source and batching as `crypto.randomUUID()`, written as one flat string.
 *
 * `randomUUID()` joins its text from 20 pieces, and V8 copies them into one string again for each
 * kind of reading: quoted into the log line, written into the head, nearly doubling what the id
 * costs (bench/README.md, "Smaller costs cut after the run of 2026-11-25"). Here the 36 characters are written into bytes and read out as
 * one string.
 */
import { randomFillSync } from 'node:crypto';

/** Ids made from one fill of random bytes (as Node's `randomUUID` batches its entropy). */
const BATCH = 128;
const DIGITS = '0123456789abcdef';
/** The first and the second hex digit of each byte, as character codes. */
const HIGH = new Uint8Array(256);
const LOW = new Uint8Array(256);
for (let byte = 0; byte < 256; byte++) {
  HIGH[byte] = DIGITS.charCodeAt(byte >> 4);
  LOW[byte] = DIGITS.charCodeAt(byte & 0x0f);
}
/** Where each byte's two hex digits go in `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`. */
const PLACES = new Uint8Array([0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34]);

export interface RequestIds {
  /**
   * A new random UUID (RFC 9562, version 4), in lower case.
   * @example ids.next() // '0b6f1a8e-3c1d-4f6e-9a0b-5d2c7e8f9a10'
   */
  next(): string;
  /**
   * The bytes of `id` if it is the id made last (the request line, written just after the head,
   * copies them instead of reading its text), else `undefined`. Valid until the next id is made.
   */
  lastBytes(id: string): Uint8Array | undefined;
}

/** A maker of request ids, with its own batch of random bytes. */
export function createRequestIds(): RequestIds {
  const random = Buffer.alloc(16 * BATCH);
  let used = BATCH;
  const text = Buffer.from('00000000-0000-4000-8000-000000000000', 'latin1');
  /** The id made last, whose bytes `text` still holds. */
  let last = '';

  /** A new batch of random bytes, each id's version (4) and variant (binary 10) set in its 16. */
  function refill(): void {
    randomFillSync(random);
    for (let at = 0; at < random.length; at += 16) {
      random[at + 6] = ((random[at + 6] as number) & 0x0f) | 0x40;
      random[at + 8] = ((random[at + 8] as number) & 0x3f) | 0x80;
    }
    used = 0;
  }

  return {
    next() {
      if (used === BATCH) refill();
      const at = used * 16;
      used += 1;
      // Typed arrays throughout: with plain arrays for the places and digits this loop cost three times more.
      for (let i = 0; i < 16; i++) {
        const byte = random[at + i] as number;
        const place = PLACES[i] as number;
        text[place] = HIGH[byte] as number;
        text[place + 1] = LOW[byte] as number;
      }
      last = text.toString('latin1', 0, 36);
      return last;
    },
    lastBytes: (id) => (id === last ? text : undefined),
  };
}
