/** The retry schedule of webhook deliveries (docs/webhooks.md "Delivery guarantees"). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_ATTEMPTS, RETRY_DELAYS_S, retryDelayMs } from '../../src/webhooks/limits.js';

test('delays grow exponentially, with ±20% jitter, and every retry ends within 24 hours', () => {
  assert.equal(MAX_ATTEMPTS, 11, 'the documented number of attempts');
  let longest = 0;
  let shortest = 0;
  let previous = 0;
  for (let failed = 1; failed < MAX_ATTEMPTS; failed += 1) {
    const base = (RETRY_DELAYS_S[failed - 1] ?? Number.NaN) * 1000;
    assert.ok(base >= previous, `the delay after ${failed} failures does not shrink`);
    previous = base;
    assert.equal(
      retryDelayMs(failed, () => 0),
      Math.round(base * 0.8),
    );
    assert.equal(
      retryDelayMs(failed, () => 0.5),
      base,
    );
    assert.equal(
      retryDelayMs(failed, () => 0.999999),
      Math.round(base * 1.2 - base * 0.4 * 0.000001),
    );
    longest += retryDelayMs(failed, () => 0.999999);
    shortest += retryDelayMs(failed, () => 0);
  }
  assert.ok(longest <= 24 * 3_600_000, `the last attempt comes within 24 hours (${longest} ms)`);
  assert.ok(shortest >= 15 * 3_600_000, `and retries go on for most of them (${shortest} ms)`);
  const spread = new Set(Array.from({ length: 50 }, () => retryDelayMs(3)));
  assert.ok(spread.size > 1, 'real randomness spreads the retries');
});
