/**
 * Imports whose stream fails mid-file, or that fail after whole batches went into the transaction:
 * nothing is written. See import-fuzz-basics.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { type ImportFormat, readRows } from '../../src/services/import-formats.js';
import { createImportService } from '../../src/services/import-service.js';
import type { PriceStore } from '../../src/stores/types.js';
import { cutsArb, MINUTE, nothingEscaped, runs, streamOf, utf8 } from './import-fuzz-basics.js';
import { buildCsv, renderCsv } from './import-fuzz-csv-files.js';
import { anyFileSpec } from './import-fuzz-files.js';
import { buildJson, renderJson } from './import-fuzz-json-files.js';
import { fuzz, listed, optionsOf, plus, storedBefore, storedNow, useFuzzStore } from './import-fuzz-store.js';
import { LONG_LINE } from './import-fuzz-values.js';

useFuzzStore();

describe('imports of hostile files, into a SQLite file store', () => {
  test('a stream that fails mid-file: the import rejects with that very error and writes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        anyFileSpec(1),
        fc.constantFrom<ImportFormat>('csv', 'jsonl'),
        fc.nat(),
        cutsArb,
        async (spec, format, at, cuts) => {
          const text = format === 'csv' ? renderCsv(buildCsv(spec)).text : renderJson(buildJson(spec)).text;
          const bytes = utf8(text);
          const failure = new Error('the disk went away');
          const stream = streamOf(bytes.subarray(0, at % (bytes.length + 1)), cuts, failure);
          const before = await storedBefore();
          await assert.rejects(
            fuzz.imports.run(readRows(stream, format, spec.mode === 'cli'), optionsOf(spec.mode)),
            (error) => error === failure,
            'the stream error comes out as it is',
          );
          await nothingEscaped();
          assert.deepEqual(listed(await storedNow()), listed(before), 'nothing written');
        },
      ),
      runs(80),
    );
  });

  test('a failure after whole batches went into the transaction still writes nothing', async () => {
    // More than one batch (4096 points) of NO1 quarter hours: the CLI's session writes batches
    // into its open transaction before the failure arrives.
    const from = Date.parse('2027-01-04T00:00:00Z');
    const row = (format: ImportFormat, i: number) => {
      const start = new Date(from + i * 15 * MINUTE).toISOString().slice(0, 19);
      return format === 'csv'
        ? `NO1,${start}Z,${i}.5`
        : `{"symbol":"NO1","start":"${start}Z","price":${i}.5}`;
    };
    const file = (format: ImportFormat, n: number, broken: (i: number) => string | undefined) => {
      const lines = format === 'csv' ? ['symbol,start,price'] : [];
      for (let i = 0; i < n; i++) lines.push(broken(i) ?? row(format, i));
      return utf8(`${lines.join('\n')}\n`);
    };
    // Chunks of 16 KiB, as a network delivers them: one ends every 500 or so rows.
    const fileChunks = (bytes: Uint8Array) =>
      Array.from({ length: Math.ceil(bytes.length / 16384) }, (_, k) => k * 16384);
    // The store as the import sees it, counting the points its sessions write before commit.
    let sent = 0;
    const counting: PriceStore = Object.assign(Object.create(fuzz.stores.prices) as PriceStore, {
      async beginPriceWrites(options?: { readonly small?: boolean }) {
        const session = await fuzz.stores.prices.beginPriceWrites(options);
        return {
          write: (points: Parameters<typeof session.write>[0]) => {
            sent += points.length;
            return session.write(points);
          },
          commit: () => session.commit(),
          rollback: () => session.rollback(),
        };
      },
    });
    const batchImports = createImportService({ prices: counting });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<ImportFormat>('csv', 'jsonl'),
        fc.integer({ min: 5200, max: 7000 }),
        fc.constantFrom('bad-row', 'long-line', 'stream-error'),
        fc.nat(),
        async (format, n, kind, seed) => {
          // Past row 5000: a batch of 4096 went into the transaction at the end of an earlier chunk.
          const bad = 5000 + (seed % (n - 5000));
          const before = await storedBefore();
          const failure = new Error('the disk went away');
          const bytes = file(format, n, (i) =>
            i !== bad || kind === 'stream-error'
              ? undefined
              : kind === 'bad-row'
                ? row(format, 0)
                : LONG_LINE.repeat(16),
          );
          const stream = streamOf(bytes, fileChunks(bytes), kind === 'stream-error' ? failure : undefined);
          sent = 0;
          const run = batchImports.run(readRows(stream, format, true));
          if (kind === 'stream-error') {
            await assert.rejects(run, (error) => error === failure, 'the stream error comes out as it is');
          } else {
            const result = await run;
            assert.ok(!result.ok, 'the import fails');
            assert.deepEqual(
              result.errors.map((e) => e.line),
              [bad + (format === 'csv' ? 2 : 1)],
              'at the bad line',
            );
          }
          await nothingEscaped();
          assert.ok(sent >= 4096, `a batch went into the transaction before the failure (${sent} points)`);
          assert.deepEqual(
            listed(await storedNow()),
            listed(before),
            'nothing of the written batches is left',
          );
        },
      ),
      runs(6),
    );
    const before = await storedBefore();
    const bytes = file('csv', 5000, () => undefined);
    const result = await fuzz.imports.run(readRows(streamOf(bytes, fileChunks(bytes)), 'csv', true));
    assert.deepEqual(
      result,
      { ok: true, written: 5000, series: ['NO1'] },
      'the file without the failure imports',
    );
    const points = Array.from({ length: 5000 }, (_, i) => ({
      symbol: 'NO1',
      start: from + i * 15 * MINUTE,
      price: `${i}.5`,
    }));
    assert.deepEqual(
      listed(await storedNow()),
      listed(plus(before, points)),
      'and the store then holds all of it',
    );
  });
});
