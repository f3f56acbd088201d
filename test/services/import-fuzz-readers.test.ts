/**
 * The CSV and JSON readers on hostile input (SECURITY.md): random bytes, soups, broken and valid
 * files, cut at random places. See import-fuzz-basics.ts for what the fuzz tests check.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { ImportFormat } from '../../src/services/import-formats.js';
import {
  catchEscapes,
  checkReading,
  cutsArb,
  decode,
  MAX_RECORD,
  nothingEscaped,
  read,
  runs,
  utf8,
} from './import-fuzz-basics.js';
import { breakCsv, brokenCsvArb } from './import-fuzz-csv-breaks.js';
import { buildCsv, expectedCsvRows, renderCsv } from './import-fuzz-csv-files.js';
import { anyFileSpec, type FileSpec } from './import-fuzz-files.js';
import { breakJson, brokenJsonArb } from './import-fuzz-json-breaks.js';
import { buildJson, expectedJsonRows, renderJson } from './import-fuzz-json-files.js';
import { byteSoup, csvSoup, jsonSoup, tokenSoup } from './import-fuzz-values.js';

catchEscapes();

describe('the CSV and JSON readers, on hostile input', () => {
  const anyBytes = fc.oneof(
    fc.uint8Array({ maxLength: 300 }),
    byteSoup,
    tokenSoup,
    csvSoup.map(utf8),
    jsonSoup.map(utf8),
    brokenCsvArb.map((input) => utf8(breakCsv(input).text)),
    brokenJsonArb.map((input) => utf8(breakJson(input).text)),
  );

  test('throw nothing but FormatError, name real lines, and read the same rows however the stream is cut', async () => {
    await fc.assert(
      fc.asyncProperty(
        anyBytes,
        fc.constantFrom<ImportFormat>('csv', 'jsonl'),
        fc.boolean(),
        cutsArb,
        async (bytes, format, needSymbol, cuts) => {
          fc.pre(bytes.length < MAX_RECORD);
          const whole = await read(format, bytes, [], needSymbol);
          checkReading(format, decode(bytes), whole);
          const cut = await read(format, bytes, cuts, needSymbol);
          assert.deepEqual(cut, whole, 'the same rows and the same error, however the stream is cut');
          await nothingEscaped();
        },
      ),
      runs(300),
    );
  });

  /** Each format's way from a spec to its text and the rows a reader must give for it. */
  const writers = {
    csv: (spec: FileSpec) => {
      const file = buildCsv(spec);
      const rendered = renderCsv(file);
      return { text: rendered.text, rows: expectedCsvRows(file, rendered) };
    },
    jsonl: (spec: FileSpec) => {
      const file = buildJson(spec);
      const rendered = renderJson(file);
      return { text: rendered.text, rows: expectedJsonRows(file, rendered) };
    },
  };
  for (const format of ['csv', 'jsonl'] as const) {
    test(`a valid file, cut anywhere, reads as exactly the rows it was written with (${format.toUpperCase()})`, async () => {
      await fc.assert(
        fc.asyncProperty(anyFileSpec(), cutsArb, async (spec, cuts) => {
          const { text, rows } = writers[format](spec);
          const bytes = utf8(text);
          const expected = { rows, failure: undefined };
          assert.deepEqual(await read(format, bytes, [], spec.mode === 'cli'), expected, 'in one chunk');
          assert.deepEqual(
            await read(format, bytes, cuts, spec.mode === 'cli'),
            expected,
            'in random chunks',
          );
        }),
        runs(200),
      );
    });
  }
});
