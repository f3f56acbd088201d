/**
 * `npm start` builds only what changed (tsconfig.build.json is incremental), so a start with nothing
 * changed goes straight to serving: its build step runs here on the suite's fresh build, rewrites
 * nothing in dist/, and the time it took is printed (a figure to read, not a timed assertion).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO, runCommand } from '../helpers/process.js';

/** Every file under dist/ with its modification time. */
function stamps(dir = join(REPO, 'dist')): Map<string, number> {
  const found = new Map<string, number>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) for (const [file, at] of stamps(path)) found.set(file, at);
    else found.set(path, statSync(path).mtimeMs);
  }
  return found;
}

test("npm start's build step with nothing changed rewrites nothing in dist/", async (t) => {
  const manifest = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const start = manifest.scripts.start;
  assert.match(start ?? '', /^npm run build:server --silent && /, 'npm start builds the server only');
  const before = stamps();
  assert.ok(before.size > 100, 'dist/ was built before the suite (npm test builds it first)');
  const began = performance.now();
  const built = await runCommand('npm', ['run', '--silent', 'build:server'], process.env, {
    cwd: REPO,
    timeoutMs: 300_000,
  });
  t.diagnostic(`npm run build:server with nothing changed: ${Math.round(performance.now() - began)} ms`);
  assert.equal(built.code, 0, built.stderr);
  const after = stamps();
  const rewritten = [...after].filter(([file, at]) => before.get(file) !== at).map(([file]) => file);
  assert.deepEqual(rewritten, []);
});
