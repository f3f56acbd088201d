/**
 * Imports of random bytes, soups of rows and timestamps at the edges of the calendar into a SQLite
 * file store: the import answers and writes nothing unless it succeeds. See import-fuzz-basics.ts.
 */
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { ImportFormat } from '../../src/services/import-formats.js';
import { cutsArb, type Mode, runs, SERIES, utf8 } from './import-fuzz-basics.js';
import { checkWritten, importFile, useFuzzStore } from './import-fuzz-store.js';
import { byteSoup, csvSoup, edgeTimestamp, jsonSoup, tokenSoup, validPrice } from './import-fuzz-values.js';

useFuzzStore();

describe('imports of hostile files, into a SQLite file store', () => {
  const modeArb = fc.constantFrom<Mode>('cli', 'http');

  test('random bytes and soups: the import answers, names real lines, and writes nothing unless it succeeds', async () => {
    const input = fc.oneof(
      fc.tuple(fc.constantFrom<ImportFormat>('csv', 'jsonl'), fc.uint8Array({ maxLength: 300 })),
      fc.tuple(fc.constantFrom<ImportFormat>('csv', 'jsonl'), byteSoup),
      fc.tuple(fc.constantFrom<ImportFormat>('csv', 'jsonl'), tokenSoup),
      fc.tuple(fc.constant<ImportFormat>('csv'), csvSoup.map(utf8)),
      fc.tuple(fc.constant<ImportFormat>('jsonl'), jsonSoup.map(utf8)),
    );
    await fc.assert(
      fc.asyncProperty(input, modeArb, cutsArb, async ([format, bytes], mode, cuts) => {
        const outcome = await importFile(format, bytes, cuts, mode);
        await checkWritten(format, bytes, mode, outcome);
      }),
      runs(150),
    );
  });

  test('timestamps at the edges (years 0100 and 9999, impossible days, 24:00, :60, far offsets) never throw', async () => {
    const rows = fc.array(
      fc.record({ series: fc.constantFrom(...SERIES), start: edgeTimestamp, price: validPrice }),
      {
        minLength: 1,
        maxLength: 4,
      },
    );
    await fc.assert(
      fc.asyncProperty(rows, fc.constantFrom<ImportFormat>('csv', 'jsonl'), async (points, format) => {
        const text =
          format === 'csv'
            ? `symbol,start,price\n${points.map((p) => `${p.series.symbol},${p.start},${p.price}`).join('\n')}\n`
            : points
                .map((p) => JSON.stringify({ symbol: p.series.symbol, start: p.start, price: p.price }))
                .join('\n');
        const bytes = utf8(text);
        const outcome = await importFile(format, bytes, [], 'cli');
        await checkWritten(format, bytes, 'cli', outcome);
      }),
      runs(150),
    );
  });
});
