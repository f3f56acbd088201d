/**
 * The worked example of docs/operating.md is run as written (only its data folder and port are swapped
 * for a temporary folder and a free port), so the example a newcomer pastes keeps working.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

const root = join(import.meta.dirname, '..', '..');

function exampleScript(): string {
  const page = readFileSync(join(root, 'docs', 'operating.md'), 'utf8');
  const section = page.split('## A worked example')[1] ?? '';
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block, 'docs/operating.md has a worked example in a sh block');
  return block;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address !== null ? address.port : 0;
}

const dataDir = mkdtempSync(join(tmpdir(), 'pricepoint-readme-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

test('the worked example runs as written: series, import, key, call, rotate, revoke', async () => {
  const port = await freePort();
  const script = exampleScript().replaceAll('.pricepoint/example', dataDir).replaceAll('8444', String(port));
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PRICEPOINT_'))),
    // With an empty npx cache (a fresh machine), `npx pricepoint` installs this folder into the cache
    // and so runs its `prepare` script: a rebuild of dist/ in place, under every other test file that
    // runs the compiled CLI at that moment. `npm test` built dist/ already (pretest).
    npm_config_ignore_scripts: 'true',
    npm_config_update_notifier: 'false',
  };
  // Its own process group, so the server it starts in the background is stopped even if it fails.
  const child = spawn('bash', ['-e', '-c', script], { cwd: root, env, detached: true });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  // Generous: each step starts a CLI process, which takes seconds on a loaded machine.
  const timer = setTimeout(() => process.kill(-(child.pid ?? 0), 'SIGKILL'), 300_000);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearTimeout(timer);
  // The server drains and exits after `kill %1`; give it a few seconds, then stop what is left.
  let serverLeft = true;
  for (let i = 0; i < 50 && serverLeft; i++) {
    try {
      process.kill(-(child.pid ?? 0), 0);
      await new Promise((resolve) => setTimeout(resolve, 200));
    } catch {
      serverLeft = false; // the group is empty: the example stopped its server itself
    }
  }
  if (serverLeft) process.kill(-(child.pid ?? 0), 'SIGKILL');
  assert.equal(code, 0, output);
  assert.equal(serverLeft, false, 'the example stops the server it started');
  assert.match(output, /imported 4 points of SPOT/, output);
  const today = /\{"generatedAt".*?\]\}\]\}/.exec(output)?.[0];
  assert.ok(today, `the first call answered prices: ${output}`);
  const prices = (
    JSON.parse(today) as { series: { symbol: string; prices: { start: string; price: number }[] }[] }
  ).series;
  // What the text says: 40.25 EUR/MWh from 00:00 UTC, 41.25 from 01:00, and so on.
  assert.deepEqual(
    prices[0]?.prices.map((p) => [p.start.slice(11, 16), p.price]),
    [
      ['00:00', 40.25],
      ['01:00', 41.25],
      ['02:00', 42.25],
      ['03:00', 43.25],
    ],
  );
  assert.match(output, /"tier":"free"/, 'the rotated key reads its usage');
  assert.match(output, /revoked key_\w+/, output);
});
