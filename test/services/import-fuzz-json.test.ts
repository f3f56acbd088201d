/**
 * Imports of valid and broken JSON files (lines or an array) into a SQLite file store: exactly the
 * points of a valid file, exactly the broken lines of a broken or truncated one. See import-fuzz-basics.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { cutsArb, runs, utf8 } from './import-fuzz-basics.js';
import { anyFileSpec, storedPoint } from './import-fuzz-files.js';
import { breakJson, brokenJsonArb } from './import-fuzz-json-breaks.js';
import { buildJson, renderJson } from './import-fuzz-json-files.js';
import { importFile, listed, plus, useFuzzStore } from './import-fuzz-store.js';

useFuzzStore();

describe('imports of hostile files, into a SQLite file store', () => {
  test('a valid JSON file (lines or an array), however written and cut, imports exactly its points', async () => {
    await fc.assert(
      fc.asyncProperty(anyFileSpec(), cutsArb, async (spec, cuts) => {
        const { text } = renderJson(buildJson(spec));
        const { result, before, after } = await importFile('jsonl', utf8(text), cuts, spec.mode);
        assert.ok(result.ok, `a valid file imports: ${JSON.stringify(result)}\n${text}`);
        assert.equal(result.written, spec.points.length, 'every row is written');
        const expected = plus(before, spec.points.map(storedPoint));
        assert.deepEqual(listed(after), listed(expected), 'the store holds what it held plus the file');
      }),
      runs(100),
    );
  });

  test('a broken JSON file names exactly its broken lines and writes nothing; a truncated one too', async () => {
    await fc.assert(
      fc.asyncProperty(brokenJsonArb, cutsArb, async (input, cuts) => {
        const { text, lines, written } = breakJson(input);
        const { result } = await importFile('jsonl', utf8(text), cuts, input.spec.mode);
        if (written !== undefined) {
          // Truncated between rows: what is left is a valid file.
          assert.ok(result.ok, `whole rows import: ${JSON.stringify(result)}\n${text}`);
          assert.equal(result.written, written, 'the rows before the cut');
          return;
        }
        assert.ok(!result.ok, `a broken file is refused:\n${text}`);
        assert.deepEqual(
          result.errors.map((e) => e.line),
          lines,
          `exactly the broken lines: ${JSON.stringify(result.errors)}\n${text.slice(0, 3000)}`,
        );
        assert.equal(result.errorCount, lines.length, 'one error per broken line');
      }),
      runs(150),
    );
  });
});
