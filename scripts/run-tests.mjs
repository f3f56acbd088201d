#!/usr/bin/env node
// Runs every `*.test.ts` under src/ and test/ with Node's own test runner (through tsx), so that
// the runner's summary lines are what CI reads. Node 20's `--test` cannot expand globs itself.
// A test, and a whole test file, may take up to 10 minutes: the suite runs on shared and often loaded
// machines, and the bound is there to end a hang, not to time work.
// Extra arguments are passed on: `npm test -- --test-name-pattern=DST`, or file paths to run only those.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function findTests(dir) {
  let found = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found = found.concat(findTests(path));
    else if (name.endsWith('.test.ts')) found.push(path);
  }
  return found;
}

const args = process.argv.slice(2);
const named = args.filter((a) => a.endsWith('.ts'));
const flags = args.filter((a) => !a.endsWith('.ts'));
const files = named.length > 0 ? named : ['src', 'test'].flatMap((d) => findTests(d)).sort();
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=600000', ...flags, ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
