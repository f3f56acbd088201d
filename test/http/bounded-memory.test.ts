/**
 * No memory a client can grow (docs/decisions.md): 20,000 read requests, each different from every
 * other (zones and links in random letter case, symbols in any case and order, dates, ranges,
 * resolutions, formats, parameters in any order), fill every cache to its bound, and past that
 * bound memory stays where it is. Before zones were keyed on the zone a spelling resolves to, each
 * new spelling of `US/Pacific` kept a formatter and an offset table for good.
 *
 * The load runs in a child process with `--expose-gc` (bounded-memory-load.ts), so memory is
 * measured after full collections, in a heap no other test shares.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { REPO } from '../helpers/process.js';

const run = promisify(execFile);
const MiB = 1024 * 1024;
const LOAD = fileURLToPath(new URL('./bounded-memory-load.ts', import.meta.url));

/** Our environment without the test runner's marker, which would make the child report to it. */
function childEnv(): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  return env;
}

interface Memory {
  readonly heap: number;
  readonly rss: number;
}

test('20,000 distinct spellings of zones, symbols, dates and queries: memory stays bounded', {
  timeout: 600_000,
}, async (t) => {
  const fill = 12_000;
  const check = 8_000;
  const { stdout } = await run(
    process.execPath,
    ['--expose-gc', '--max-old-space-size=1024', '--import', 'tsx', LOAD, String(fill), String(check)],
    { cwd: REPO, maxBuffer: 1024 * 1024, env: childEnv() },
  );
  const result = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as {
    warm: Memory;
    filled: Memory;
    after: Memory;
    statuses: Record<string, number>;
  };
  const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;
  const report = JSON.stringify({
    heap: [result.warm.heap, result.filled.heap, result.after.heap].map(mib),
    rss: [result.warm.rss, result.filled.rss, result.after.rss].map(mib),
  });

  t.diagnostic(report);
  assert.deepEqual(
    Object.keys(result.statuses),
    ['200'],
    `every spelling is valid: ${JSON.stringify(result.statuses)}`,
  );
  // Every cache is full after the first 12,000: the next 8,000 requests, all new keys, add nothing
  // (measured: under 1 MiB). Each zone spelling kept for good cost more than 1 KiB of heap (10 MiB).
  assert.ok(result.after.heap - result.filled.heap < 4 * MiB, `heap grew past the caches' bounds: ${report}`);
  // A zone formatter lives in ICU, outside the heap (about 29 KiB each): resident memory tells, if
  // only roughly (the allocator keeps what it was given).
  assert.ok(result.after.rss - result.filled.rss < 96 * MiB, `resident memory kept growing: ${report}`);
  // And what the caches hold at their bounds is modest.
  assert.ok(result.after.heap - result.warm.heap < 64 * MiB, `the caches hold too much: ${report}`);
});
