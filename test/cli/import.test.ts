/**
 * `pricepoint import FILE` as a real process (docs/operating.md "Importing prices"): CSV and JSON files, --dry-run,
 * a bad file that names its bad rows and writes nothing, a large file, and a server on the same data
 * folder that serves what an import wrote at once.
 */
import assert from 'node:assert/strict';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { DEMO_API_KEY } from '../../src/dev-data/dev-data.js';
import { dayBounds, dayIntervals, formatInstant, localDate } from '../../src/domain/time/days.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import type { StoredPrice } from '../../src/stores/types.js';
import {
  cleanUp,
  httpsClient,
  onlyJson,
  runCli,
  type Settings,
  startServer,
  tempDir,
} from '../helpers/process.js';

after(cleanUp);

const ZONE = 'Europe/Oslo';

function quarterHours(date: string): string[] {
  return dayIntervals(date, ZONE, 'PT15M').map((i) => formatInstant(i.start, ZONE));
}

/** The stored points of NO1 on a local day, read from the data folder's database. */
async function stored(dataDir: string, date: string, symbol = 'NO1'): Promise<StoredPrice[]> {
  const stores = await openEmbeddedStores(join(dataDir, 'pricepoint.db'));
  try {
    const { start, end } = dayBounds(date, ZONE);
    return await stores.prices.pricesBetween(symbol, start, end);
  } finally {
    await stores.close();
  }
}

describe('pricepoint import', () => {
  let dataDir: string;
  let settings: Settings;
  const cli = (...args: string[]) => runCli(args, settings);

  before(async () => {
    dataDir = await tempDir();
    settings = { PRICEPOINT_DATA_DIR: dataDir };
    const loaded = await cli('dev-data');
    assert.equal(loaded.code, 0, loaded.stderr);
  });

  test('a CSV file imports all its rows', async () => {
    const starts = quarterHours('2025-03-30'); // the spring DST day: 92 quarter hours
    assert.equal(starts.length, 92);
    const file = join(dataDir, 'spring.csv');
    writeFileSync(file, `symbol,start,price\n${starts.map((s, i) => `NO1,${s},${i}.25`).join('\n')}\n`);
    const output = await cli('import', file, '--json');
    assert.equal(output.code, 0, output.stderr);
    assert.deepEqual(onlyJson(output), { written: 92, checked: 92, series: ['NO1'], dryRun: false });
    const points = await stored(dataDir, '2025-03-30');
    assert.deepEqual(
      points.map((p) => p.price),
      starts.map((_, i) => `${i}.25`),
    );
    const text = await cli('import', file);
    assert.equal(text.code, 0, text.stderr);
    assert.equal(text.stdout.trim(), 'imported 92 points of NO1');
    assert.deepEqual(await stored(dataDir, '2025-03-30'), points, 'a second import changes nothing');
  });

  test('a JSON file (one point per line) imports, several series at once', async () => {
    const [a, b] = quarterHours('2025-04-01');
    const file = join(dataDir, 'points.json');
    writeFileSync(
      file,
      `{"symbol":"NO1","start":"${a}","price":41.270}\n{"symbol":"DE-LU","start":"2025-04-01T00:00:00+02:00","price":-5}\n{"symbol":"NO1","start":"${b}","price":42}\n`,
    );
    const output = await cli('import', file, '--json');
    assert.equal(output.code, 0, output.stderr);
    assert.deepEqual(onlyJson(output), { written: 3, checked: 3, series: ['DE-LU', 'NO1'], dryRun: false });
    assert.deepEqual(
      (await stored(dataDir, '2025-04-01')).map((p) => p.price),
      ['41.270', '42'],
    );
  });

  test('--dry-run checks the file and writes nothing', async () => {
    const starts = quarterHours('2025-05-01');
    const file = join(dataDir, 'dry.csv');
    writeFileSync(file, `symbol,start,price\n${starts.map((s) => `NO1,${s},1`).join('\n')}\n`);
    const output = await cli('import', file, '--dry-run', '--json');
    assert.equal(output.code, 0, output.stderr);
    assert.deepEqual(onlyJson(output), { written: 0, checked: 96, series: ['NO1'], dryRun: true });
    assert.deepEqual(await stored(dataDir, '2025-05-01'), []);
  });

  test('a bad file exits 1, names every bad row with its line, and writes nothing', async () => {
    const starts = quarterHours('2025-06-01');
    const file = join(dataDir, 'bad.csv');
    const rows = starts.map((s, i) => `NO1,${s},${i}`);
    rows[10] = `NO1,${starts[10]},1e5`; // line 12
    rows[50] = `NOPE,${starts[50]},1`; // line 52
    rows[90] = `NO1,${starts[0]},1`; // line 92: the interval of line 2 again
    writeFileSync(file, `symbol,start,price\n${rows.join('\n')}\n`);
    const text = await cli('import', file);
    assert.equal(text.code, 1, text.stdout);
    assert.match(text.stderr, /has 3 bad rows; nothing was written/);
    assert.match(text.stderr, /line 12: price "1e5" is not a plain decimal/);
    assert.match(text.stderr, /line 52: unknown series NOPE/);
    assert.match(text.stderr, /line 92: start \S+ names an interval of NO1 already in this import/);
    const json = await cli('import', file, '--json');
    assert.equal(json.code, 1);
    const error = JSON.parse(json.stderr.trim()).error;
    assert.equal(error.code, 'invalid_prices');
    assert.deepEqual(
      error.errors.map((e: { line: number }) => e.line),
      [12, 52, 92],
    );
    assert.deepEqual(await stored(dataDir, '2025-06-01'), []);
  });

  test('a missing file or an unknown extension is exit 1 with a message', async () => {
    const missing = await cli('import', join(dataDir, 'nothing.csv'));
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read/);
    const file = join(dataDir, 'points.txt');
    writeFileSync(file, 'symbol,start,price\n');
    const unknown = await cli('import', file);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /--format csv, json or jsonl/);
  });

  test('a file of 200,000 rows imports', async () => {
    const file = join(dataDir, 'large.csv');
    const out = createWriteStream(file);
    out.write('symbol,start,price\n');
    const from = Date.parse('2019-01-01T00:00:00Z');
    for (let i = 0; i < 200_000; i += 1000) {
      let chunk = '';
      for (let j = i; j < i + 1000; j++) {
        chunk += `NO1,${new Date(from + j * 900_000).toISOString().slice(0, 19)}Z,${(j % 997) / 4}\n`;
      }
      out.write(chunk);
    }
    await new Promise((done) => out.end(done));
    const output = await cli('import', file, '--json');
    assert.equal(output.code, 0, output.stderr);
    assert.equal((onlyJson(output) as { written: number }).written, 200_000);
    const points = await stored(dataDir, '2019-01-02');
    assert.equal(points.length, 96);
  });
});

describe('an import while a server runs on the same data folder', () => {
  test('GET /api/v1/prices/today serves the imported values at once', async () => {
    const dataDir = await tempDir();
    const settings = { PRICEPOINT_DATA_DIR: dataDir };
    const server = await startServer(['serve', '--dev-data'], settings);
    const client = httpsClient(join(dataDir, 'tls', 'localhost-cert.pem'));
    const url = `${server.url}/api/v1/prices/today?symbols=NO1`;
    const headers = { 'x-api-key': DEMO_API_KEY };
    const date = localDate(Date.now(), ZONE);
    const before = await client.get(url, headers);
    assert.equal(before.status, 200, before.text);

    const starts = quarterHours(date);
    const file = join(dataDir, 'today.csv');
    writeFileSync(file, `symbol,start,price\n${starts.map((s, i) => `NO1,${s},${1000 + i}.5`).join('\n')}\n`);
    const output = await runCli(['import', file], settings);
    assert.equal(output.code, 0, output.stderr);

    const after_ = await client.get(url, headers);
    assert.equal(after_.status, 200, after_.text);
    const prices = JSON.parse(after_.text).series[0].prices as { start: string; price: number }[];
    assert.deepEqual(
      prices.map((p) => p.price),
      starts.map((_, i) => 1000 + i + 0.5),
    );

    // The same through the API of that server, on its file database.
    const created = await runCli(
      ['keys', 'create', '--tier', 'pro', '--name', 'writer', '--scopes', 'write', '--json'],
      settings,
    );
    assert.equal(created.code, 0, created.stderr);
    const writeKey = (onlyJson(created) as { key: string }).key;
    const agent = new Agent({
      connect: { ca: readFileSync(join(dataDir, 'tls', 'localhost-cert.pem')), servername: 'localhost' },
    });
    const put = await request(`${server.url}/api/v1/series/NO1/prices`, {
      method: 'PUT',
      headers: { 'x-api-key': writeKey, 'content-type': 'application/json' },
      body: `{"start":"${starts[0]}","price":-1.125}\n`,
      dispatcher: agent,
    });
    assert.equal(put.statusCode, 200, await put.body.text());
    await agent.close();
    const afterPut = await client.get(url, headers);
    const first = (JSON.parse(afterPut.text).series[0].prices as { price: number }[])[0];
    assert.equal(first?.price, -1.125);

    await client.close();
    const stopped = await server.stop();
    assert.equal(stopped.code, 0, stopped.stderr);
  });
});
