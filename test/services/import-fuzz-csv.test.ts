/**
 * Imports of valid and broken CSV files into a SQLite file store: exactly the points of a valid
 * file, exactly the broken lines of a broken one. See import-fuzz-basics.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { cutsArb, runs, utf8 } from './import-fuzz-basics.js';
import { breakCsv, brokenCsvArb } from './import-fuzz-csv-breaks.js';
import { buildCsv, renderCsv } from './import-fuzz-csv-files.js';
import { anyFileSpec, storedPoint } from './import-fuzz-files.js';
import { importFile, listed, plus, useFuzzStore } from './import-fuzz-store.js';

useFuzzStore();

describe('imports of hostile files, into a SQLite file store', () => {
  test('a valid CSV file, however written and cut, imports exactly its points', async () => {
    await fc.assert(
      fc.asyncProperty(anyFileSpec(), cutsArb, async (spec, cuts) => {
        const { text } = renderCsv(buildCsv(spec));
        const { result, before, after } = await importFile('csv', utf8(text), cuts, spec.mode);
        assert.ok(result.ok, `a valid file imports: ${JSON.stringify(result)}\n${text}`);
        assert.equal(result.written, spec.points.length, 'every row is written');
        const touched = [...new Set(spec.points.map((p) => p.series.symbol))].sort();
        assert.deepEqual(result.series, touched, 'the series it wrote to');
        const expected = plus(before, spec.points.map(storedPoint));
        assert.deepEqual(listed(after), listed(expected), 'the store holds what it held plus the file');
      }),
      runs(100),
    );
  });

  test('a broken CSV file names exactly its broken lines and writes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(brokenCsvArb, cutsArb, async (input, cuts) => {
        const { text, expected } = breakCsv(input);
        const { result } = await importFile('csv', utf8(text), cuts, input.spec.mode);
        assert.ok(!result.ok, `a broken file is refused:\n${text}`);
        const reported = result.errors.map((e) => e.line);
        if (expected.kind === 'format') {
          assert.deepEqual(
            reported,
            [expected.line],
            `one error, at line ${expected.line}: ${JSON.stringify(result)}`,
          );
          assert.match(result.errors[0]?.reason ?? '', expected.reason, 'the error says what is wrong');
          return;
        }
        const { lines, stray, multiLine } = expected;
        if (stray === undefined) {
          assert.deepEqual(
            reported,
            lines,
            `exactly the broken lines: ${JSON.stringify(result.errors)}\n${text}`,
          );
          assert.equal(result.errorCount, lines.length, 'one error per broken line');
          return;
        }
        // An unbalanced quote swallows what follows it; the lines before it are still told apart.
        assert.deepEqual(
          reported.filter((l) => l < stray),
          lines.filter((l) => l < stray),
          `the broken lines before the stray quote at ${stray}: ${JSON.stringify(result.errors)}\n${text}`,
        );
        if (!multiLine) {
          assert.deepEqual(
            reported.filter((l) => l >= stray),
            [stray],
            `the stray quote's line: ${JSON.stringify(result.errors)}`,
          );
        }
      }),
      runs(150),
    );
  });
});
