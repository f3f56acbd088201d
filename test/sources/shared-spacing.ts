/**
 * The scenario both engines' run records must pass (docs/sources.md "Many instances"): two holders
 * of one source's lease, `a` and `b`, on the clock `clock`. A run of `a` spaces a manual run of `b`;
 * five minutes on, `b` runs and gets a 429 asking for 600 s; five minutes later `a` is held off by
 * that Retry-After until 09:15. The upstream is asked twice in all.
 */
import assert from 'node:assert/strict';
import type { SourceRunner } from '../../src/sources/source-runner.js';
import type { FakeScheduler } from './fake-scheduler.js';
import type { FakeUpstream } from './fake-upstream.js';

export async function assertSpacingShared(
  [a, b]: readonly [SourceRunner, SourceRunner],
  clock: FakeScheduler,
  upstream: FakeUpstream,
  calls: () => number,
): Promise<void> {
  assert.ok((await a.run()).ran);
  const spaced = await b.run();
  assert.ok(!spaced.ran && spaced.reason === 'too-soon' && spaced.wait.why === 'spacing');
  await clock.advanceTo(Date.parse('2026-11-23T09:05Z'));
  upstream.answer('/api', { status: 429, headers: { 'retry-after': '600' } });
  assert.ok((await b.run()).ran);
  await clock.advanceTo(Date.parse('2026-11-23T09:10Z'));
  const held = await a.run();
  assert.ok(!held.ran && held.reason === 'too-soon' && held.wait.why === 'retry-after');
  assert.equal(held.wait.until, Date.parse('2026-11-23T09:15Z'));
  assert.equal(calls(), 2, 'the upstream was asked twice');
}
