/**
 * docs/python.md runs as written against a real server started as `npm start` starts it: the page
 * shows examples/prices.py as it is, the program reads a month of two series as JSON and as CSV into
 * the same rows, and the pandas statement runs where pandas is installed (a skip where it is not).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEMO_API_KEY } from '../../src/dev-data/dev-data.js';
import { cleanUp, REPO, runCommand, type ServerProcess, startServer, tempDir } from '../helpers/process.js';

const page = readFileSync(join(REPO, 'docs', 'python.md'), 'utf8');
const blocks = (language: string) =>
  [...page.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1] ?? '');

/** A python3 that can `import module`: the one on PATH, else Debian's; undefined when neither can. */
async function pythonWith(module: string): Promise<string | undefined> {
  for (const python of ['python3', '/usr/bin/python3']) {
    const tried = await runCommand(python, ['-c', `import ${module}`], process.env).catch(() => undefined);
    if (tried?.code === 0) return python;
  }
  return undefined;
}

describe('docs/python.md', () => {
  let server: ServerProcess;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    dataDir = await tempDir('pricepoint-python-');
    server = await startServer(['serve', '--dev-data'], { PRICEPOINT_DATA_DIR: dataDir });
    env = {
      ...process.env,
      PRICEPOINT_URL: `https://localhost:${server.port}`,
      PRICEPOINT_API_KEY: DEMO_API_KEY,
      SSL_CERT_FILE: join(dataDir, 'tls', 'localhost-cert.pem'),
    };
  });
  after(cleanUp);

  test('shows examples/prices.py as it is, and its command runs it', () => {
    assert.equal(blocks('python')[0], readFileSync(join(REPO, 'examples', 'prices.py'), 'utf8'));
    const [command] = blocks('sh');
    assert.match(command ?? '', /python3 examples\/prices\.py/);
    assert.match(command ?? '', new RegExp(DEMO_API_KEY));
  });

  test('the program reads a month of two series as JSON and as CSV into the same aware rows', async () => {
    const python = await pythonWith('decimal');
    assert.ok(python, 'python3 is installed');
    const run = await runCommand(python, [join(REPO, 'examples', 'prices.py')], env, { timeoutMs: 60_000 });
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const lines = run.stdout.trim().split('\n');
    assert.equal(lines.length, 2, run.stdout);
    for (const [line, symbol] of [
      [lines[0], 'NO1'],
      [lines[1], 'DE-LU'],
    ]) {
      // 31 days of quarter hours (one fewer or more hour over a DST change), offsets on every timestamp.
      const match = new RegExp(
        `^${symbol}: (\\d+) intervals from \\S+[+-]\\d\\d:\\d\\d to \\S+[+-]\\d\\d:\\d\\d; cheapest -?\\d+(\\.\\d+)? at \\S+[+-]\\d\\d:\\d\\d$`,
      ).exec(line ?? '');
      assert.ok(match, line);
      assert.ok(Math.abs(Number(match[1]) - 31 * 96) <= 4, line);
    }
  });

  test('the pandas statement gives UTC timestamps, where pandas is installed', async (t) => {
    const python = await pythonWith('pandas');
    if (python === undefined) {
      t.skip('pandas is not installed (apt-get install python3-pandas); the pandas statement did not run');
      return;
    }
    const script = `${blocks('python')[1]}\nprint("ROWS", len(df), df.start.dt.tz, df.symbol.unique().tolist())\n`;
    const run = await runCommand(python, ['-c', script], env, { timeoutMs: 120_000 });
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const match = /^ROWS (\d+) UTC \['NO1', 'DE-LU'\]$/m.exec(run.stdout);
    assert.ok(match, run.stdout);
    assert.ok(Math.abs(Number(match[1]) - 2 * 3 * 96) <= 8, run.stdout);
  });
});
