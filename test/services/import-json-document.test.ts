/**
 * The JSON document reader of price imports, fuzzed with fast-check and fed in random chunks: it
 * throws nothing but FormatError, reads the same however the text is cut (up to a break in the
 * JSON), and reads every point of an array, `{prices}` or read answer however formatted, with each price's source text.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { FormatError, type RawRow, readRows } from '../../src/services/import-formats.js';

/** `text` as a stream cut at `cuts` (fractions of its length). */
function streamOf(text: string, cuts: readonly number[]): Readable {
  const at = [...new Set(cuts.map((c) => Math.floor(c * text.length)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const cut of at) {
    if (cut > from) pieces.push(text.slice(from, cut));
    from = Math.max(from, cut);
  }
  pieces.push(text.slice(from));
  return Readable.from(pieces.filter((p) => p !== ''));
}

/** The rows read, and the FormatError that ended the reading, if one did. */
async function read(text: string, cuts: readonly number[], symbol?: string) {
  const rows: RawRow[] = [];
  try {
    for await (const batch of readRows(streamOf(text, cuts), 'json', symbol === undefined, symbol))
      rows.push(...batch);
    return { rows, failure: undefined };
  } catch (error) {
    assert.ok(error instanceof FormatError, `only FormatError escapes: ${String(error)}`);
    return { rows, failure: { line: error.line, message: error.message } };
  }
}

const cutsArb = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 });
const decimal = fc
  .tuple(fc.integer({ min: -99999, max: 99999 }), fc.nat({ max: 999 }), fc.nat({ max: 2 }))
  .map(([whole, fraction, zeros]) => `${whole}.${fraction}${'0'.repeat(zeros)}`);
const point = fc.record({
  start: fc.string({ maxLength: 30 }),
  price: decimal,
  currency: fc.option(fc.constantFrom('EUR', 'NOK'), { nil: undefined }),
});
type Point = { start: string; price: string; currency: string | undefined };

/** `points` as JSON with each price written as its decimal text, in `shape`, indented by `indent`. */
function documentOf(points: readonly Point[], shape: 'array' | 'prices' | 'answer', indent: number): string {
  const marked = points.map((p, i) => ({ ...p, price: `@@${i}@@` }));
  const value =
    shape === 'array'
      ? marked
      : shape === 'prices'
        ? { prices: marked }
        : { generatedAt: 'now', series: [{ symbol: 'NO1', name: 'x', extra: { a: [1] }, prices: marked }] };
  return JSON.stringify(value, null, indent).replace(
    /"@@(\d+)@@"/g,
    (_, i) => points[Number(i)]?.price ?? '0',
  );
}

const soup = fc
  .array(
    fc.constantFrom(
      '[',
      ']',
      '{',
      '}',
      ',',
      ':',
      '"',
      '\\',
      '\n',
      ' ',
      '1',
      '-',
      '.',
      'e',
      'true',
      'null',
      '"prices"',
      '"series"',
      '"start"',
      '"price"',
      '"symbol"',
      'NO1',
      '\uFEFF',
    ),
    { maxLength: 80 },
  )
  .map((parts) => parts.join(''));

describe('the JSON document reader', () => {
  test('throws nothing but FormatError and reads the same rows however the text is cut', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(soup, fc.string({ maxLength: 80 })),
        cutsArb,
        fc.option(fc.constant('NO1')),
        async (text, cuts, symbol) => {
          const whole = await read(text, [], symbol ?? undefined);
          const cut = await read(text, cuts, symbol ?? undefined);
          assert.deepEqual(cut.failure, whole.failure, 'the same error at the same line');
          // The tokenizer drops the tokens of the piece it finds broken JSON in: a finer cut may
          // have read a bad point more before the break. Without a break, the rows are the same.
          if (whole.failure === undefined) assert.deepEqual(cut.rows, whole.rows);
          else assert.deepEqual(cut.rows.slice(0, whole.rows.length), whole.rows);
        },
      ),
      { numRuns: 500 },
    );
  });

  test('reads every point of an array, {prices} or read answer, however indented, with its source text', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(point, { maxLength: 20 }),
        fc.constantFrom('array', 'prices', 'answer') as fc.Arbitrary<'array' | 'prices' | 'answer'>,
        fc.nat({ max: 4 }),
        cutsArb,
        async (points, shape, indent, cuts) => {
          const { rows, failure } = await read(documentOf(points, shape, indent), cuts, 'NO1');
          assert.equal(failure, undefined);
          assert.deepEqual(
            rows.map((r) => [r.path, r.start, r.price, r.currency, r.error]),
            points.map((p, i) => [
              `${shape === 'array' ? '' : shape === 'prices' ? 'prices' : 'series[0].prices'}[${i}]`,
              p.start,
              p.price,
              p.currency,
              undefined,
            ]),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
