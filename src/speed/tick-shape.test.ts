/**
 * The tick object held by `holdTickShape` keeps `process.nextTick` on V8's fast path through full
 * collections (tick-shape.ts). Read from V8 itself: `%DebugPrint` of `nextTick` shows the state of
 * the caches that define the tick object's four properties, in a child Node started with
 * `--allow-natives-syntax`. Without the held object, the same steps leave them megamorphic.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';

const MODULE = new URL('../../dist/speed/tick-shape.js', import.meta.url).href;

/** The states of `nextTick`'s literal-define caches after ticks, a full collection and more ticks. */
function defineStates(hold: boolean): string[] {
  const script = `
    import { holdTickShape } from ${JSON.stringify(MODULE)};
    if (${hold}) await holdTickShape();
    const noop = () => {};
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 20; i++) process.nextTick(noop, i);
      await new Promise((resolve) => setImmediate(resolve));
    }
    // The tick queue is empty: a full collection may now drop what no tick object holds.
    globalThis.gc();
    for (let i = 0; i < 5; i++) process.nextTick(noop, i);
    await new Promise((resolve) => setImmediate(resolve));
    %DebugPrint(process.nextTick);
  `;
  const printed = execFileSync(
    process.execPath,
    ['--allow-natives-syntax', '--expose-gc', '--input-type=module', '-e', script],
    { encoding: 'utf8' },
  );
  return [...printed.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1] as string);
}

test('a held tick object keeps nextTick off the megamorphic path through a full collection', () => {
  const held = defineStates(true);
  assert.equal(held.length, 4, 'one cache per property of the tick object');
  assert.deepEqual(held, ['MONOMORPHIC', 'MONOMORPHIC', 'MONOMORPHIC', 'MONOMORPHIC']);

  // The same steps without it: what the held object prevents, so this test can fail.
  assert.ok(defineStates(false).includes('MEGAMORPHIC'));
});
