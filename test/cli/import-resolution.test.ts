/**
 * `pricepoint import` refuses, as the upload API does, a file whose intervals are not its series'
 * own (docs/operating.md "Importing prices"): the hourly CSV a server exports for NO1 (`resolution=PT1H`),
 * imported back into NO1 (PT15M), names every row and writes nothing; the quarter-hour export
 * imports as it is. Before, `end` was ignored and each hourly mean replaced the quarter hour at :00.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { DEMO_API_KEY } from '../../src/dev-data/dev-data.js';
import { cleanUp, httpsClient, onlyJson, runCli, startServer, tempDir } from '../helpers/process.js';

after(cleanUp);

test('the hourly export of NO1 imported into NO1 exits 1 naming every row, and changes nothing', async () => {
  const dataDir = await tempDir();
  const settings = { PRICEPOINT_DATA_DIR: dataDir };
  const server = await startServer(['serve', '--dev-data'], settings);
  const client = httpsClient(join(dataDir, 'tls', 'localhost-cert.pem'));
  const get = async (query: string, accept: string) => {
    const answer = await client.get(
      `${server.url}/api/v1/prices?from=yesterday&to=tomorrow&symbols=NO1${query}`,
      {
        'x-api-key': DEMO_API_KEY,
        accept,
      },
    );
    assert.equal(answer.status, 200, answer.text);
    return answer.text;
  };
  const quarterHours = await get('', 'text/csv');
  const hourly = await get('&resolution=PT1H', 'text/csv');
  const hours = hourly.trimEnd().split('\r\n').length - 1;
  assert.ok(hours >= 71 && hours <= 73, `three days of hours: ${hours}`);

  const file = join(dataDir, 'no1-hourly.csv');
  writeFileSync(file, hourly);
  const text = await runCli(['import', file], settings);
  assert.equal(text.code, 1, text.stdout);
  assert.match(text.stderr, new RegExp(`has ${hours} bad rows; nothing was written`));
  assert.match(
    text.stderr,
    /line 2: end \S+ makes an interval of 60 minutes, not one of the PT15M intervals of NO1/,
  );
  const json = await runCli(['import', file, '--json'], settings);
  assert.equal(json.code, 1, json.stdout);
  const error = JSON.parse(json.stderr.trim()).error;
  assert.equal(error.code, 'invalid_prices');
  assert.deepEqual(
    error.errors.map((e: { line: number }) => e.line),
    Array.from({ length: hours }, (_, i) => i + 2),
  );

  // The read answer states its resolution: refused too, point by point.
  const answer = join(dataDir, 'no1-hourly.json');
  writeFileSync(answer, await get('&resolution=PT1H', 'application/json'));
  const stated = await runCli(['import', answer, '--json'], settings);
  assert.equal(stated.code, 1, stated.stdout);
  assert.equal(JSON.parse(stated.stderr.trim()).error.errorCount, hours);

  assert.equal(await get('', 'text/csv'), quarterHours, 'every quarter hour keeps its price');
  const back = join(dataDir, 'no1.csv');
  writeFileSync(back, quarterHours);
  const imported = await runCli(['import', back, '--json'], settings);
  assert.equal(imported.code, 0, imported.stderr);
  const rows = quarterHours.trimEnd().split('\r\n').length - 1;
  assert.deepEqual(onlyJson(imported), { written: rows, checked: rows, series: ['NO1'], dryRun: false });
  assert.equal(await get('', 'text/csv'), quarterHours, 'the quarter-hour export goes back as it is');
  await client.close();
  const stopped = await server.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
});
