/**
 * Valid import files for the fuzz tests, from a model of points, and the seeded cosmetics of writing
 * them.
 */
import fc from 'fast-check';
import { intervalEnd } from '../../src/domain/time/days.js';
import { KNOWN_COLUMNS } from '../../src/services/import-formats.js';
import type { Series } from '../../src/stores/types.js';
import { type Column, HTTP_SERIES, type Mode, poolOf, SERIES, storedPrice } from './import-fuzz-basics.js';
import { spell, spellingArb, validPrice } from './import-fuzz-values.js';

/** One valid point and how its row writes it. */
export interface PointSpec {
  readonly series: Series;
  readonly start: number;
  readonly startText: string;
  readonly symbolText: string;
  readonly price: string;
  /** JSON: `"41.27"` rather than `41.27`. */
  readonly priceAsString: boolean;
  /** '' when the row leaves it out. */
  readonly currency: string;
  readonly unit: string;
  /** The ignored column: anything at all (CSV text, JSON value). */
  readonly date: string;
  readonly jsonDate: string;
  /** Where the series' interval from `start` ends, in any spelling, or '' (no end given). */
  readonly end: string;
  /** `end` as a JSON string. */
  readonly jsonEnd: string;
}

const ignoredCsv = fc.oneof(
  fc.constant(''),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.constantFrom(
    '2026-03-29',
    'a "quoted", value',
    'two\nlines',
    'three\r\nlines\r\n',
    '\u0000',
    '😀',
    ' padded ',
  ),
);
const ignoredJson = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 8 }).map((s) => JSON.stringify(s)),
  fc.constantFrom('null', 'true', '0', '-1.5e3', '[]', '[1,"a",{}]', '{"a":{"b":[null]}}', '"2026-03-29"'),
);

function pointArb(mode: Mode): fc.Arbitrary<PointSpec> {
  return fc
    .record({
      series: mode === 'http' ? fc.constant(HTTP_SERIES) : fc.constantFrom(...SERIES),
      index: fc.nat(),
      spelling: spellingArb,
      symbol: fc.constantFrom('as-is', 'lower', 'empty'),
      price: validPrice,
      priceAsString: fc.boolean(),
      currency: fc.boolean(),
      unit: fc.boolean(),
      date: ignoredCsv,
      jsonDate: ignoredJson,
      end: fc.option(spellingArb, { nil: undefined }),
    })
    .map((p) => {
      const pool = poolOf(p.series);
      const start = pool[p.index % pool.length] ?? 0;
      const symbolText =
        p.symbol === 'lower'
          ? p.series.symbol.toLowerCase()
          : p.symbol === 'empty' && mode === 'http'
            ? ''
            : p.series.symbol;
      const { timezone, resolution } = p.series;
      const end = p.end === undefined ? '' : spell(intervalEnd(start, timezone, resolution), timezone, p.end);
      return {
        series: p.series,
        start,
        startText: spell(start, p.series.timezone, p.spelling),
        symbolText,
        price: p.price,
        priceAsString: p.priceAsString,
        currency: p.currency ? p.series.currency : '',
        unit: p.unit ? p.series.unit : '',
        date: p.date,
        jsonDate: p.jsonDate,
        end,
        jsonEnd: JSON.stringify(end),
      };
    });
}

/** A valid file: points (each interval once), and the cosmetics the formats allow. */
export interface FileSpec {
  readonly mode: Mode;
  readonly points: readonly PointSpec[];
  /** CSV: the column order, and which optional columns the header names. */
  readonly order: readonly Column[];
  readonly keep: readonly Column[];
  /** JSON: lines, or an array with `[` and `]` on lines of their own, or on the first and last point. */
  readonly layout: 'lines' | 'array' | 'array-inline';
  readonly jsonEol: '\n' | '\r\n' | '\r';
  /** Quotes, padding, letter case, blank lines, CRLF: off shrinks to the plainest file. */
  readonly cosmetic: boolean;
  readonly seed: number;
  readonly bom: boolean;
  readonly finalEol: boolean;
}

function fileSpecArb(mode: Mode, minRows = 0): fc.Arbitrary<FileSpec> {
  return fc.record({
    mode: fc.constant(mode),
    points: fc.uniqueArray(pointArb(mode), {
      selector: (p) => `${p.series.symbol}@${p.start}`,
      minLength: minRows,
      maxLength: 25,
    }),
    order: fc.shuffledSubarray([...KNOWN_COLUMNS], { minLength: KNOWN_COLUMNS.length }),
    keep: fc.subarray<Column>(['symbol', 'date', 'end', 'currency', 'unit']),
    layout: fc.constantFrom('lines', 'array', 'array-inline'),
    jsonEol: fc.constantFrom('\n', '\r\n', '\r'),
    cosmetic: fc.boolean(),
    seed: fc.integer(),
    bom: fc.boolean(),
    finalEol: fc.boolean(),
  });
}
export const anyFileSpec = (minRows = 0) =>
  fc.constantFrom<Mode>('cli', 'http').chain((m) => fileSpecArb(m, minRows));

/** Seeded choices for a file's cosmetics (mulberry32), all off unless `on`. */
export interface Style {
  chance(p: number): boolean;
  pick<T>(options: readonly T[], plain: T): T;
}
export function styleOf(seed: number, on: boolean): Style {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    chance: (p) => on && next() < p,
    pick: (options, plain) => (on ? (options[Math.floor(next() * options.length)] ?? plain) : plain),
  };
}

export function insertAt(text: string, offset: number, piece: string): string {
  const at = offset % (text.length + 1);
  return text.slice(0, at) + piece + text.slice(at);
}

export const storedPoint = (p: PointSpec) => ({
  symbol: p.series.symbol,
  start: p.start,
  price: storedPrice(p.price),
});
