/** What the import fuzz tests found, shrunk to the smallest input, kept as plain tests. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { read, utf8 } from './import-fuzz-basics.js';
import { importFile, useFuzzStore } from './import-fuzz-store.js';

useFuzzStore();

describe('regressions the fuzzer found, shrunk', () => {
  test('a header whose quote never closes is one format error at its line, not "the file is empty"', async () => {
    // Shrunk from `{"`: the header's open quote swallowed the file, which then had "no header row".
    const text = '\n\nsymbol,"start,price\nNO1,2026-03-29T00:00:00+01:00,1\n';
    const message = 'the header row has a quoted field that is never closed';
    assert.deepEqual(
      await read('csv', utf8(text), [], true),
      { rows: [], failure: { line: 3, message } },
      'the reader fails at the header line',
    );
    const { result } = await importFile('csv', utf8(text), [], 'cli');
    assert.deepEqual(
      result,
      { ok: false, errorCount: 1, errors: [{ line: 3, reason: message }] },
      'one error',
    );
  });

  test('a start whose local date would pass 9999-12-31 is a bad row, not a RangeError out of the import', async () => {
    // Shrunk from 9999-12-31T03:00:00-12:00 for XAU (P1D in Asia/Tokyo): 15:00Z is midnight of the
    // year 10000 there, a date the day arithmetic cannot write, so the grid check threw.
    const text = [
      'symbol,start,price',
      'XAU,9999-12-31T15:00:00Z,1', // line 2: local date 10000-01-01
      'XAU,9999-12-30T15:00:00Z,1', // line 3: local midnight of 9999-12-31, still fine
      'NO1,9999-12-31T00:00:00Z,1', // line 4: the limit itself
    ].join('\n');
    const { result } = await importFile('csv', utf8(text), [], 'cli');
    assert.ok(!result.ok, 'the file is refused');
    assert.deepEqual(
      result.errors.map((e) => e.line),
      [2, 4],
      `lines 2 and 4 are out of range: ${JSON.stringify(result.errors)}`,
    );
    for (const e of result.errors) assert.match(e.reason, /out of range/, `line ${e.line} says why`);
  });

  test('a quoted field of 300,000 line breaks is read in linear time', async () => {
    // Found by reading the reader, not by the fuzzer (its inputs are small): the quotes of the whole
    // open record were counted again at each of its lines, so a 300 KB body held the event loop
    // for minutes.
    const text = `symbol,start,price,end\nNO1,2026-03-29T00:00:00+01:00,1,"${'\n'.repeat(300_000)}"\n`;
    const bytes = utf8(text);
    const cuts = Array.from({ length: Math.ceil(bytes.length / 65536) }, (_, i) => i * 65536);
    const started = performance.now();
    const reading = await read('csv', bytes, cuts, true);
    const ms = performance.now() - started;
    assert.deepEqual(
      reading.rows.map((r) => [r.line, r.price]),
      [[2, '1']],
      'one row, on the line it starts on',
    );
    assert.ok(ms < 5000, `read in ${Math.round(ms)} ms; before the fix, minutes`);
  });
});
