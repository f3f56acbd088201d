/**
 * The README's "First calls: curl, the client, a spreadsheet" run as written against a real server
 * started as `npm start` starts it (only the data folder and port are swapped), so the examples a
 * client developer pastes keep working.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEMO_API_KEY } from '../../src/dev-data/dev-data.js';
import { cleanUp, REPO, runCommand, type ServerProcess, startServer, tempDir } from '../helpers/process.js';

const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
const section = readme.split('## First calls: curl, the client, a spreadsheet')[1]?.split('\n## ')[0] ?? '';

function block(language: string): string {
  const found = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(section)?.[1];
  assert.ok(found, `the README examples have a ${language} block`);
  return found;
}

describe('README examples for clients', () => {
  let server: ServerProcess;
  let dataDir: string;
  before(async () => {
    dataDir = await tempDir('pricepoint-readme-clients-');
    server = await startServer(['serve', '--dev-data'], { PRICEPOINT_DATA_DIR: dataDir });
  });
  after(cleanUp);

  test('the curl block answers JSON, a 304 for a known ETag, and a CSV file a spreadsheet opens', async () => {
    const work = await tempDir('pricepoint-readme-curl-');
    const script = block('sh')
      .replaceAll('.pricepoint/', `${dataDir}/`)
      .replaceAll('localhost:8443', `localhost:${server.port}`);
    assert.ok(script.includes(DEMO_API_KEY), 'the examples use the documented demo key');
    const run = await runCommand('bash', ['-e', '-o', 'pipefail', '-c', script], process.env, {
      cwd: work,
      timeoutMs: 60_000,
    });
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const answers = run.stdout.split('\n').filter((line) => line.startsWith('{'));
    assert.equal(answers.length, 4, run.stdout);
    const [today, range, latest, catalogue] = answers.map((line) => JSON.parse(line));
    assert.deepEqual(
      today.series.map((s: { symbol: string; resolution: string }) => [s.symbol, s.resolution]),
      [
        ['NO1', 'PT1H'],
        ['DE-LU', 'PT1H'],
      ],
    );
    assert.equal(range.series.length, 3, 'yesterday, today and tomorrow of NO1');
    assert.ok(latest.series.length >= 8, 'the latest price of every series');
    assert.ok(
      catalogue.series.every((s: { coverage: unknown }) => s.coverage !== null),
      'the catalogue has coverage',
    );
    assert.match(run.stdout, /^304$/m, 'the ETag sent back answers 304');
    const csv = readFileSync(join(work, 'no1.csv'), 'utf8').trimEnd().split('\r\n');
    assert.equal(csv[0], 'symbol,date,start,end,price,currency,unit');
    // Three days of hours: 72, or one less or more over a DST change.
    assert.ok(csv.length - 1 >= 71 && csv.length - 1 <= 73, `hourly rows: ${csv.length - 1}`);
    assert.match(csv[1] ?? '', /^NO1,\d{4}-\d{2}-\d{2},[^,]+,[^,]+,-?\d+(\.\d+)?,EUR,MWh$/);
  });

  test('the client block is examples/client.mjs, and it runs', async () => {
    const file = readFileSync(join(REPO, 'examples', 'client.mjs'), 'utf8');
    assert.equal(block('js'), file, 'the README shows examples/client.mjs as it is');
    const run = await runCommand(
      process.execPath,
      [join(REPO, 'examples', 'client.mjs')],
      {
        ...process.env,
        PRICEPOINT_URL: `https://localhost:${server.port}`,
        PRICEPOINT_API_KEY: DEMO_API_KEY,
        NODE_EXTRA_CA_CERTS: join(dataDir, 'tls', 'localhost-cert.pem'),
      },
      { cwd: REPO, timeoutMs: 60_000 },
    );
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const hours = run.stdout
      .split('\n')
      .filter((line) => /^\d{4}-\d{2}-\d{2}T\d{2}:00:00[+-]\d{2}:\d{2} -?\d/.test(line));
    assert.ok(hours.length >= 23 && hours.length <= 25, `hourly prices of today: ${run.stdout}`);
    assert.match(run.stdout, /^404 unknown_series Unknown series: NOPE\.$/m);
    assert.match(run.stdout, /^requests left this minute: \d+$/m);
    assert.ok(!run.stdout.includes(DEMO_API_KEY), 'the example prints no key');
  });
});
