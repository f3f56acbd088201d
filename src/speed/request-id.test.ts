/**
 * Request ids are random version 4 UUIDs, as `crypto.randomUUID()` makes them: the same form, the
 * version and variant bits set, every one new, and each bit of the rest as often one as zero.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createRequestIds } from './request-id.js';

const ids = createRequestIds();
const requestId = () => ids.next();
const lastIdBytes = (id: string) => ids.lastBytes(id);

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('request ids', () => {
  test('are version 4 UUIDs, all different, over many batches of random bytes', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const id = requestId();
      assert.match(id, UUID_V4);
      seen.add(id);
    }
    assert.equal(seen.size, 20_000);
  });

  test('use every random bit outside the version and variant', () => {
    // 122 random bits: over 4,000 ids each is set in about half of them (well inside 40% to 60%).
    const ones = new Array<number>(128).fill(0);
    const count = 4_000;
    for (let i = 0; i < count; i++) {
      const bytes = Buffer.from(requestId().replaceAll('-', ''), 'hex');
      for (let bit = 0; bit < 128; bit++) {
        ones[bit] = (ones[bit] ?? 0) + (((bytes[bit >> 3] as number) >> (7 - (bit & 7))) & 1);
      }
    }
    const fixed = new Map([
      [48, 0],
      [49, 1],
      [50, 0],
      [51, 0], // version 4 in bits 48 to 51
      [64, 1],
      [65, 0], // the variant, 10
    ]);
    for (let bit = 0; bit < 128; bit++) {
      const share = (ones[bit] as number) / count;
      const expected = fixed.get(bit);
      if (expected === undefined) assert.ok(share > 0.4 && share < 0.6, `bit ${bit} set in ${share} of ids`);
      else assert.equal(share, expected, `bit ${bit}`);
    }
  });

  test('give the bytes of the id made last, and of no other', () => {
    const first = requestId();
    assert.equal(Buffer.from(lastIdBytes(first) as Uint8Array).toString('latin1'), first);
    // The same text, but not the id made last, and an id no longer the last.
    assert.equal(lastIdBytes(`${first.slice(0, 35)}${first.slice(35)}`), lastIdBytes(first));
    const second = requestId();
    assert.equal(lastIdBytes(first), undefined);
    assert.equal(Buffer.from(lastIdBytes(second) as Uint8Array).toString('latin1'), second);
    assert.equal(lastIdBytes('0b6f1a8e-3c1d-4f6e-9a0b-5d2c7e8f9a10'), undefined);
  });
});
