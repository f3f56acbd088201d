/**
 * `pricepoint import FILE.json` takes the JSON documents a price upload takes (docs/operating.md "Importing
 * prices"): an array of points, `{"prices": [...]}` and the read answer, compact or pretty-printed,
 * bad points named by path and line; and a compact array of 3 million points on one line imports
 * in the memory of one a tenth its size, because the document is streamed, never held.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createWriteStream, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { dayBounds, dayIntervals, formatInstant } from '../../src/domain/time/days.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import type { StoredPrice } from '../../src/stores/types.js';
import {
  BIN,
  cleanUp,
  cliEnv,
  onlyJson,
  runCli,
  runCommand,
  type Settings,
  tempDir,
} from '../helpers/process.js';

after(cleanUp);

const ZONE = 'Europe/Oslo';
/** The old-generation heap a large import must fit in: a third of the file it reads. */
const HEAP_CAP_MB = 64;

function quarterHours(date: string): string[] {
  return dayIntervals(date, ZONE, 'PT15M').map((i) => formatInstant(i.start, ZONE));
}

describe('pricepoint import of JSON documents', () => {
  let dataDir: string;
  let settings: Settings;
  const cli = (...args: string[]) => runCli(args, settings);

  before(async () => {
    dataDir = await tempDir();
    settings = { PRICEPOINT_DATA_DIR: dataDir };
    const loaded = await cli('dev-data');
    assert.equal(loaded.code, 0, loaded.stderr);
  });

  async function stored(date: string): Promise<StoredPrice[]> {
    const stores = await openEmbeddedStores(join(dataDir, 'pricepoint.db'));
    try {
      const { start, end } = dayBounds(date, ZONE);
      return await stores.prices.pricesBetween('NO1', start, end);
    } finally {
      await stores.close();
    }
  }

  async function importFile(name: string, text: string) {
    const file = join(dataDir, name);
    writeFileSync(file, text);
    return cli('import', file, '--json');
  }

  test('an array, {prices} and the read answer import, compact or pretty-printed; 41.270 stays 41.270', async () => {
    const [a, b, c, d] = quarterHours('2031-02-01');
    const array = await importFile('array.json', `[{"symbol":"NO1","start":"${a}","price":41.270}]`);
    assert.equal(array.code, 0, array.stderr);
    assert.deepEqual(onlyJson(array), { written: 1, checked: 1, series: ['NO1'], dryRun: false });

    const prices = { prices: [{ symbol: 'NO1', start: b, price: 2.5 }] };
    const wrapped = await importFile('prices.json', JSON.stringify(prices, null, 2));
    assert.equal(wrapped.code, 0, wrapped.stderr);

    // The read answer names the series once; its points take that symbol.
    const answer = {
      generatedAt: '2031-02-01T10:00:00.000Z',
      series: [
        {
          symbol: 'NO1',
          name: 'Oslo',
          timezone: ZONE,
          prices: [
            { start: c, end: d, price: 3 },
            { start: d, price: -4.25 },
          ],
        },
      ],
    };
    const read = await importFile('answer.json', JSON.stringify(answer, null, 2));
    assert.equal(read.code, 0, read.stderr);
    assert.deepEqual(onlyJson(read), { written: 2, checked: 2, series: ['NO1'], dryRun: false });
    assert.deepEqual(
      (await stored('2031-02-01')).map((p) => p.price),
      ['41.270', '2.5', '3', '-4.25'],
    );
  });

  test('a bad point is named by its path and line, and nothing is written', async () => {
    const [a, b] = quarterHours('2031-02-02');
    const text = JSON.stringify(
      {
        prices: [
          { symbol: 'NO1', start: a, price: 1 },
          { symbol: 'NO1', start: b },
        ],
      },
      null,
      2,
    );
    const output = await importFile('bad.json', text);
    assert.equal(output.code, 1, output.stderr);
    const { error } = JSON.parse(output.stderr.trim()) as {
      error: { errors: { line: number; reason: string }[] };
    };
    assert.deepEqual(error.errors, [{ line: 8, reason: 'prices[1]: price is missing' }]);
    assert.deepEqual(await stored('2031-02-02'), []);
  });

  test('JSON Lines import from .jsonl, .ndjson, --format jsonl, and from .json as before', async () => {
    const starts = quarterHours('2031-02-03');
    const lines = (from: number) =>
      `${starts
        .slice(from, from + 2)
        .map((start) => `{"symbol":"NO1","start":"${start}","price":7}`)
        .join('\n')}\n`;
    for (const [name, from, extra] of [
      ['a.jsonl', 0, []],
      ['b.ndjson', 2, []],
      ['c.txt', 4, ['--format', 'jsonl']],
      ['d.json', 6, []],
    ] as const) {
      const file = join(dataDir, name);
      writeFileSync(file, lines(from));
      const output = await cli('import', file, '--json', ...extra);
      assert.equal(output.code, 0, `${name}: ${output.stderr}`);
    }
    assert.equal((await stored('2031-02-03')).length, 8);
  });

  test('a compact array of 3,000,000 points (186 MB) imports with a 64 MiB heap', async () => {
    // Held in memory, 3,000,000 points are over 400 MiB of objects; a heap capped at 64 MiB can only
    // finish the import if the document is streamed. The cap is on V8's old generation, the part
    // that would hold them; peak RSS is not compared, as its headroom follows V8's heuristics.
    const measured = async (file: string) => {
      const output = await runCommand(
        process.execPath,
        [`--max-old-space-size=${HEAP_CAP_MB}`, BIN, 'import', file, '--json', '--dry-run'],
        cliEnv(settings),
        { timeoutMs: 240_000 },
      );
      assert.equal(output.code, 0, output.stderr.slice(0, 2000));
      assert.doesNotMatch(output.stderr, /heap|allocation failed/i);
      return output;
    };
    const days = Array.from({ length: 32_000 }, (_, i) => new Date(Date.UTC(2032, 0, 1) + i * 86_1_000_000));
    /** One line of `count` points of NO1, streamed to disk. */
    const write = async (file: string, count: number) => {
      const out = createWriteStream(file);
      out.write('[');
      let n = 0;
      for (const day of days) {
        const date = day.toISOString().slice(0, 10);
        const parts = quarterHours(date).map(
          (start, i) => `{"symbol":"NO1","start":"${start}","price":${i}.10}`,
        );
        const chunk = parts.slice(0, Math.min(parts.length, count - n));
        n += chunk.length;
        if (!out.write(`${n > chunk.length ? ',' : ''}${chunk.join(',')}`)) await once(out, 'drain');
        if (n >= count) break;
      }
      out.end(']');
      await once(out, 'finish');
      return n;
    };
    const large = join(dataDir, 'large-array.json');
    assert.equal(await write(large, 3_000_000), 3_000_000);
    try {
      assert.equal((onlyJson(await measured(large)) as { checked: number }).checked, 3_000_000);
    } finally {
      await rm(large, { force: true });
    }
  });
});
