/**
 * A skipped suite is counted as a skip in the summary the test run ends with (helpers/skip.ts):
 * a plain `describe` with `skip` is printed as SKIP but counted nowhere, so a run that skipped the
 * nginx suite said `skipped 0`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

const helper = new URL('./skip.ts', import.meta.url).href;

/** Runs `body` as a test file of its own and returns the runner's summary counts. */
function summaryOf(body: string): Record<string, number> {
  const dir = mkdtempSync(join(tmpdir(), 'pricepoint-skip-count-'));
  try {
    const file = join(dir, 'suite.test.mts');
    writeFileSync(
      file,
      `import { describe, test } from 'node:test';\nimport { describeOrSkip } from '${helper}';\n${body}\n`,
    );
    // Without the runner's own context, which would make the child report to it instead of in text.
    const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', file], {
      encoding: 'utf8',
      env,
    });
    const counts: Record<string, number> = {};
    for (const [, name, count] of run.stdout.matchAll(/^# (\w+) (\d+)$/gm))
      counts[name as string] = Number(count);
    counts.reasonShown = run.stdout.includes('# SKIP nginx is not installed') ? 1 : 0;
    return counts;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a suite skipped with describeOrSkip is counted as skipped, with its reason', () => {
  const counts = summaryOf(
    "describeOrSkip('nginx in front', { skip: 'nginx is not installed' }, () => { test('a', () => {}); });",
  );
  assert.equal(counts.skipped, 1);
  assert.equal(counts.reasonShown, 1);
  assert.equal(counts.pass, 0);
});

test('a suite with nothing to skip runs its tests', () => {
  const counts = summaryOf(
    "describeOrSkip('nginx in front', { skip: undefined }, () => { test('a', () => {}); test('b', () => {}); });",
  );
  assert.equal(counts.pass, 2);
  assert.equal(counts.skipped, 0);
});

test('why the helper exists: a plain describe with skip is left out of the count', () => {
  const counts = summaryOf(
    "describe('nginx in front', { skip: 'nginx is not installed' }, () => { test('a', () => {}); });",
  );
  assert.equal(counts.skipped, 0);
});
