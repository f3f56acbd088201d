/**
 * `pricepoint import` of a JSON file whose one line is hundreds of megabytes long: a bad row at that
 * line, exit status 1, in a heap a quarter the size of that line, because the reader never holds more
 * of a line than a point can be (docs/operating.md "Importing prices"). Before, the line was built whole: 400 MB
 * took 1.38 GB, 600 MB crashed with `RangeError: Invalid string length`.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MAX_JSON_LINE } from '../../src/services/import-formats.js';
import { MAX_JSON_VALUE } from '../../src/services/import-json-document.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import { BIN, cleanUp, cliEnv, runCli, runCommand, type Settings, tempDir } from '../helpers/process.js';

after(cleanUp);

/** The giant line: held whole, it would show in memory many times over; written in about a second. */
const HUGE = 256 * 1024 * 1024;
/**
 * The old-generation heap the import runs in: a quarter of the line. Held whole, as a string, the
 * line alone would not fit, so an import that finishes with its error did not hold it. (Peak RSS
 * is not compared: its headroom follows V8's heuristics more than the work done.)
 */
const HEAP_CAP_MB = 64;

const POINT_A = '{"symbol":"NO1","start":"2026-11-20T00:00:00+01:00","price":1}';
const POINT_B = '{"symbol":"NO1","start":"2026-11-20T00:15:00+01:00","price":2}';

/** Writes `head`, `size` bytes of `x`, then `tail`, streaming: the test never holds the line either. */
async function writeHuge(file: string, head: string, size: number, tail: string): Promise<void> {
  const out = createWriteStream(file);
  const block = Buffer.alloc(1024 * 1024, 'x');
  out.write(head);
  for (let left = size; left > 0; left -= block.length) {
    if (!out.write(left >= block.length ? block : block.subarray(0, left))) await once(out, 'drain');
  }
  out.end(tail);
  await once(out, 'finish');
}

describe('pricepoint import of a hostile JSON file', () => {
  let dataDir: string;
  let settings: Settings;

  before(async () => {
    dataDir = await tempDir();
    settings = { PRICEPOINT_DATA_DIR: dataDir };
    const loaded = await runCli(['dev-data'], settings);
    assert.equal(loaded.code, 0, loaded.stderr);
  });

  /** The stored points of NO1 on the day the files write. */
  async function storedNo1() {
    const stores = await openEmbeddedStores(join(dataDir, 'pricepoint.db'));
    try {
      const start = Date.parse('2026-11-20T00:00:00+01:00');
      return await stores.prices.pricesBetween('NO1', start, start + 30 * 60_000);
    } finally {
      await stores.close();
    }
  }

  /** `pricepoint import FILE --json` in a heap of `HEAP_CAP_MB`. */
  function importCapped(file: string) {
    return runCommand(
      process.execPath,
      [`--max-old-space-size=${HEAP_CAP_MB}`, BIN, 'import', file, '--json'],
      cliEnv(settings),
      { timeoutMs: 120_000 },
    );
  }

  // JSON Lines (.jsonl) limit the line; a JSON document (.json, read by a streaming tokenizer) each value.
  const kinds = [
    { ext: 'jsonl', reason: `is longer than ${MAX_JSON_LINE} characters; a point is one short line` },
    { ext: 'json', reason: `has a value longer than ${MAX_JSON_VALUE} characters` },
  ];
  for (const { ext, reason } of kinds) {
    test(`a ${HUGE / 1024 / 1024} MiB line in a .${ext} file is a bad row at its line, exit 1, in a ${HEAP_CAP_MB} MiB heap`, async () => {
      const before = await storedNo1();
      const huge = join(dataDir, `huge.${ext}`);
      let output: Awaited<ReturnType<typeof importCapped>>;
      try {
        await writeHuge(huge, `${POINT_A}\n{"symbol":"NO1","start":"`, HUGE, `","price":1}\n${POINT_B}\n`);
        output = await importCapped(huge);
      } finally {
        await rm(huge, { force: true });
      }
      assert.equal(output.code, 1, output.stderr.slice(0, 2000));
      assert.equal(output.signal, null);
      assert.doesNotMatch(output.stderr, /RangeError|heap|at .*\.js:/, 'no crash, no stack');
      const { error } = JSON.parse(output.stderr.trim()) as {
        error: { code: string; errorCount: number; errors: { line: number; reason: string }[] };
      };
      assert.equal(error.code, 'invalid_prices');
      assert.deepEqual(error.errors, [{ line: 2, reason }]);
      assert.deepEqual(await storedNo1(), before, 'nothing was written');
    });
  }
});
