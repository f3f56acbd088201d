/** Values for the import fuzz tests: hostile ones, valid prices and starts, and soups of rows. */
import fc from 'fast-check';
import { formatInstant } from '../../src/domain/time/days.js';
import { KNOWN_COLUMNS } from '../../src/services/import-formats.js';
import { MINUTE, pad2, poolOf, SERIES, utf8 } from './import-fuzz-basics.js';

// ---------------------------------------------------------------------------------------------
// Hostile values

export const LONG_LINE = 'x'.repeat(70_000);
const TOKENS = [
  ...[',', '"', '""', '\n', '\r\n', '\r', ' ', '\t', '\uFEFF', '\u0000', '\u2028'],
  ...['\ud800', '\udc00', '😀', 'é'],
  ...['{', '}', '[', ']', ':', '{"', '":', '"price":', '"start":', '"symbol":', 'null', 'true'],
  ...['symbol', 'start', 'price', 'currency', 'unit', 'date', 'end', 'colour', 'Symbol'],
  ...['symbol,start,price\n', 'start,price\n', 'NO1', 'no1', 'XAU', 'NOPE', 'EUR', 'MWh'],
  ...['2026-03-29T00:00:00+01:00', '2026-03-29T02:00:00+01:00', '2026-10-25T02:00:00+02:00'],
  ...['9999-12-31T23:00:00-12:00', '2026-02-30T00:00:00Z'],
  ...['41.27', '-0', '1e999', 'NaN', '-', '.', '0', '007', '123456789012345678', LONG_LINE, ' '.repeat(5000)],
];
const BAD_UTF8 = [
  [0xff],
  [0xfe],
  [0xc3],
  [0xe2, 0x82],
  [0xed, 0xa0, 0x80],
  [0xf0, 0x9f, 0x98],
  [0xc0, 0xaf],
  [0x80],
];

export const tokenSoup = fc
  .array(fc.oneof(fc.constantFrom(...TOKENS), fc.string({ unit: 'binary', maxLength: 6 })), { maxLength: 40 })
  .map((parts) => utf8(parts.join('')));
export const byteSoup = fc
  .array(
    fc.oneof(
      fc.constantFrom(...TOKENS).map(utf8),
      fc.constantFrom(...BAD_UTF8).map((b) => Uint8Array.from(b)),
      fc.uint8Array({ maxLength: 4 }),
    ),
    { maxLength: 40 },
  )
  .map((parts) => Buffer.concat(parts));

/** Prices that are never valid: exponents, signs, leading zeros, more than 15 digits, not numbers. */
export const BAD_PRICES = [
  ...['', ' ', '1e999', '-1e999', '1e5', '1E5', 'NaN', 'nan', 'Infinity', '-Infinity'],
  ...['+5', '.5', '5.', '-.5'],
  ...['007', '00', '-00', '0x1F', '1_000', '1 000', '--1', '1.2.3', '١٢', '１２', '-', '.', 'e', '5e-324'],
  ...['12345678901234567', '1234567890.123456', '0.1000000000000000055511151231257827', '9'.repeat(400)],
  ...['true', 'null', '\u0000', '½'],
];
/** Starts that are never RFC 3339 as the import reads it (a real date, seconds, Z or ±HH:MM). */
export const BAD_STARTS = [
  ...['', ' ', 'start', '2026-03-29', '1711670400', '2026-03-29T00:00:00ZZ', '+2026-03-29T00:00:00Z'],
  ...['2026-02-29T00:00:00Z', '2026-02-30T00:00:00+01:00', '2026-04-31T00:00:00Z', '2026-13-01T00:00:00Z'],
  ...['2026-00-10T00:00:00Z', '2026-01-00T00:00:00Z', '0000-01-01T00:00:00Z', '0099-12-31T00:00:00Z'],
  ...['2026-01-01T24:00:00Z', '2026-01-01T23:60:00Z', '2026-12-31T23:59:60Z', '２０２６-03-29T00:00:00Z'],
  ...['2026-03-29T02:00:00', '2026-03-29 02:00:00+01:00', '2026-03-29T02:00+01:00', '2026-03-29T02:00:00.Z'],
  ...['2026-03-29T02:00:00+0100', '2026-03-29T02:00:00+01', '2026-03-29T02:00:00+24:00'],
  ...['2026-03-29T02:00:00+01:60'],
];
/** Characters that are neither whitespace nor CSV syntax: inside a value they spoil it. */
export const JUNK_CHARS = ['\u0000', '\ud800', '\ufffd', '\u200b', 'é', '\u0007', '😀', '\u0301'];
/** Never a multiple of 15 minutes, so never on any grid of a quarter-hour zone. */
export const OFF_GRID_SHIFTS = [
  1,
  1000,
  59_000,
  ...[1, 7, 14, 16, 44, -1, -7].map((minutes) => minutes * MINUTE),
];

const EDGE_DATES = [
  ...['9999-12-31', '9999-12-31', '9999-12-31', '9999-12-31', '9999-01-01', '0100-01-01', '0000-01-01'],
  ...['0099-12-31', '1582-10-10', '1900-01-01', '1969-12-31', '1970-01-01', '2024-02-29', '2026-02-29'],
  ...['2026-02-30', '2026-04-31', '2026-13-01', '2026-00-10', '2026-03-29', '2026-09-06', '2026-10-25'],
  ...['2026-11-01'],
];
/** Timestamps at the edges of what RFC 3339 and the calendar allow, valid and not. */
export const edgeTimestamp = fc
  .record({
    date: fc.constantFrom(...EDGE_DATES),
    t: fc.constantFrom('T', 'T', 't', ' '),
    hour: fc.integer({ min: 0, max: 25 }),
    minute: fc.constantFrom(0, 0, 15, 30, 45, 7, 59, 60),
    second: fc.constantFrom(0, 0, 0, 1, 59, 60),
    fraction: fc.constantFrom('', '', '.0', '.000', '.5', '.0001', '.'),
    zone: fc.constantFrom(
      'Z',
      'Z',
      'z',
      '+00:00',
      '-00:00',
      '+14:00',
      '-12:00',
      '+23:59',
      '-23:59',
      '+24:00',
    ),
  })
  .map((p) => `${p.date}${p.t}${pad2(p.hour)}:${pad2(p.minute)}:${pad2(p.second)}${p.fraction}${p.zone}`);

// ---------------------------------------------------------------------------------------------
// Valid files, from a model of points

/** Decimals of at most 15 significant digits, and the awkward valid ones. */
export const validPrice = fc.oneof(
  fc.constantFrom(
    '0',
    '-0',
    '-0.000',
    '0.000000000000000000001',
    '999999999999999',
    '-999999999999999',
    '41.270',
  ),
  fc
    .record({
      minus: fc.boolean(),
      whole: fc.oneof(fc.constant('0'), fc.integer({ min: 1, max: 999_999_999 }).map(String)),
      fraction: fc.option(fc.stringMatching(/^[0-9]{1,6}$/), { nil: undefined }),
    })
    .map(
      ({ minus, whole, fraction }) =>
        `${minus ? '-' : ''}${whole}${fraction === undefined ? '' : `.${fraction}`}`,
    ),
);

export type Spelling =
  | { readonly kind: 'local' }
  | { readonly kind: 'utc'; readonly ms: boolean; readonly lower: boolean }
  | { readonly kind: 'offset'; readonly minutes: number };

/** The offset in force, Z (with milliseconds, lower case), or any other offset: the same instant. */
export const spellingArb: fc.Arbitrary<Spelling> = fc.oneof(
  fc.constant({ kind: 'local' as const }),
  fc.record({ kind: fc.constant('utc' as const), ms: fc.boolean(), lower: fc.boolean() }),
  fc.record({
    kind: fc.constant('offset' as const),
    minutes: fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
  }),
);

export function spell(start: number, zone: string, how: Spelling): string {
  if (how.kind === 'local') return formatInstant(start, zone);
  if (how.kind === 'utc') {
    const iso = new Date(start).toISOString();
    const text = how.ms ? iso : `${iso.slice(0, 19)}Z`;
    return how.lower ? text.replace('T', 't').replace('Z', 'z') : text;
  }
  const wall = new Date(start + how.minutes * MINUTE).toISOString().slice(0, 19);
  const abs = Math.abs(how.minutes);
  return `${wall}${how.minutes < 0 ? '-' : '+'}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`;
}

const validStartText = fc
  .record({ series: fc.constantFrom(...SERIES), index: fc.nat(), spelling: spellingArb })
  .map(({ series: s, index, spelling }) =>
    spell(poolOf(s)[index % poolOf(s).length] ?? 0, s.timezone, spelling),
  );

// ---------------------------------------------------------------------------------------------
// Soups of rows: the right shape, hostile values

const hostileSymbol = fc.constantFrom('NO1', 'no1', 'XAU', 'SCL', 'NYC', 'NOPE', '', ' NO1 ', 'ſcl', 'ǅ');
const hostilePrice = fc.oneof(
  validPrice,
  fc.constantFrom(...BAD_PRICES),
  fc.double().map(String),
  fc.string({ unit: 'binary', maxLength: 6 }),
);
const soupRow = fc.record({
  symbol: hostileSymbol,
  start: fc.oneof({ arbitrary: validStartText, weight: 1 }, { arbitrary: edgeTimestamp, weight: 2 }),
  price: hostilePrice,
  currency: fc.constantFrom('', 'EUR', 'USD', 'XXX'),
  unit: fc.constantFrom('', 'MWh', 'troy_oz'),
  other: fc.string({ unit: 'binary', maxLength: 5 }),
});
type SoupRow = typeof soupRow extends fc.Arbitrary<infer T> ? T : never;

const csvField = (value: string): string =>
  /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
function soupValue(row: SoupRow, column: string): string {
  const name = column.trim().toLowerCase();
  return name === 'symbol' || name === 'start' || name === 'price' || name === 'currency' || name === 'unit'
    ? row[name]
    : row.other;
}

export const csvSoup = fc
  .record({
    header: fc.oneof(
      fc.shuffledSubarray<string>([...KNOWN_COLUMNS], { minLength: 2 }),
      fc.array(
        fc.constantFrom<string>('symbol', 'start', 'price', 'Symbol', ' price ', 'colour', '', 'date'),
        {
          maxLength: 5,
        },
      ),
    ),
    rows: fc.array(soupRow, { maxLength: 10 }),
    eol: fc.constantFrom('\n', '\r\n'),
  })
  .map(({ header, rows, eol }) =>
    [header.join(','), ...rows.map((r) => header.map((c) => csvField(soupValue(r, c))).join(','))].join(eol),
  );

export const jsonSoup = fc
  .record({
    rows: fc.array(
      fc.record({
        row: soupRow,
        price: fc.oneof(
          fc.constant('as-text'),
          fc.constant('as-number'),
          fc.constantFrom('1e999', 'true', 'null', '[1]', '123456789012345678'),
        ),
        keys: fc.subarray(['symbol', 'start', 'price', 'currency', 'unit', 'colour']),
      }),
      { maxLength: 10 },
    ),
    array: fc.boolean(),
  })
  .map(({ rows, array }) => {
    const lines = rows.map(({ row, price, keys }) => {
      const value = (key: string): string => {
        if (key !== 'price') return JSON.stringify(soupValue(row, key));
        if (price === 'as-text') return JSON.stringify(row.price);
        return price === 'as-number' ? (/^-?\d/.test(row.price) ? row.price : '0') : price;
      };
      return `{${keys.map((k) => `"${k}":${value(k)}`).join(',')}}`;
    });
    return array ? `[\n${lines.join(',\n')}\n]` : lines.join('\n');
  });
