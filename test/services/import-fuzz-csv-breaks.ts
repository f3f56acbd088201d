/** CSV files broken on purpose for the import fuzz tests, and what the import must say of each. */
import fc from 'fast-check';
import { type Column, HTTP_SERIES, MINUTE, SERIES } from './import-fuzz-basics.js';
import {
  buildCsv,
  type Cell,
  type CsvFile,
  type CsvRow,
  cellText,
  type RenderedCsv,
  renderCsv,
  requiredColumns,
} from './import-fuzz-csv-files.js';
import { anyFileSpec, insertAt } from './import-fuzz-files.js';
import {
  BAD_PRICES,
  BAD_STARTS,
  JUNK_CHARS,
  OFF_GRID_SHIFTS,
  type Spelling,
  spell,
  spellingArb,
  validPrice,
} from './import-fuzz-values.js';

const csvRowMutation = fc.oneof(
  fc.record({ kind: fc.constant('drop-field' as const), at: fc.nat(), n: fc.nat() }),
  fc.record({
    kind: fc.constant('extra-field' as const),
    at: fc.nat(),
    n: fc.nat(),
    text: fc.constantFrom('', 'x', '1', 'NO1', '2026-01-01T00:00:00Z'),
  }),
  fc.record({ kind: fc.constant('swap-start' as const), at: fc.nat(), n: fc.nat() }),
  fc.record({ kind: fc.constant('stray-quote' as const), at: fc.nat(), n: fc.nat(), offset: fc.nat() }),
  fc.record({ kind: fc.constant('inner-quotes' as const), at: fc.nat(), n: fc.nat(), offset: fc.nat() }),
  fc.record({
    kind: fc.constant('junk-char' as const),
    at: fc.nat(),
    n: fc.nat(),
    offset: fc.nat(),
    char: fc.constantFrom(...JUNK_CHARS),
  }),
  fc.record({ kind: fc.constant('bad-price' as const), at: fc.nat(), text: fc.constantFrom(...BAD_PRICES) }),
  fc.record({ kind: fc.constant('bad-start' as const), at: fc.nat(), text: fc.constantFrom(...BAD_STARTS) }),
  fc.record({
    kind: fc.constant('off-grid' as const),
    at: fc.nat(),
    shift: fc.constantFrom(...OFF_GRID_SHIFTS, 15 * MINUTE, -15 * MINUTE, 45 * MINUTE),
    spelling: spellingArb,
  }),
  fc.record({ kind: fc.constant('other-series' as const), at: fc.nat(), n: fc.nat() }),
  fc.record({
    kind: fc.constant('wrong-currency' as const),
    at: fc.nat(),
    text: fc.constantFrom('XXX', 'eur', 'usd', 'mwh', 'E UR'),
  }),
  fc.record({
    kind: fc.constant('repeat-interval' as const),
    at: fc.nat(),
    spelling: spellingArb,
    price: validPrice,
  }),
  fc.record({ kind: fc.constant('header-as-row' as const), at: fc.nat() }),
);
type CsvRowMutation = typeof csvRowMutation extends fc.Arbitrary<infer T> ? T : never;

const csvHeaderMutation = fc.oneof(
  fc.record({
    kind: fc.constant('unknown-column' as const),
    at: fc.nat(),
    name: fc.constantFrom('colour', 'prices', 'symbol2', '', 'ürün', 'Start Time', 'x'),
  }),
  fc.record({ kind: fc.constant('repeated-column' as const), at: fc.nat(), n: fc.nat() }),
  fc.record({ kind: fc.constant('missing-column' as const), n: fc.nat() }),
  fc.record({ kind: fc.constant('no-header' as const) }),
  fc.record({ kind: fc.constant('header-quote' as const), n: fc.nat(), offset: fc.nat(), odd: fc.boolean() }),
);
type CsvHeaderMutation = typeof csvHeaderMutation extends fc.Arbitrary<infer T> ? T : never;

export const brokenCsvArb = fc.record({
  spec: anyFileSpec(1),
  mutation: fc.oneof(
    { arbitrary: fc.record({ rows: fc.array(csvRowMutation, { minLength: 1, maxLength: 3 }) }), weight: 3 },
    { arbitrary: fc.record({ header: csvHeaderMutation }), weight: 1 },
  ),
});

/** What the import of a broken file must answer. */
type Expected =
  | {
      readonly kind: 'rows';
      readonly lines: readonly number[];
      readonly stray: number | undefined;
      readonly multiLine: boolean;
    }
  | { readonly kind: 'format'; readonly line: number; readonly reason: RegExp };

/** An untouched row of `file`, the `at`-th of them (cyclically). */
export function untouched<T extends { touched: boolean }>(rows: readonly T[], at: number): T | undefined {
  const free = rows.filter((r) => !r.touched);
  return free[at % Math.max(free.length, 1)];
}

function mutateCsvRow(file: CsvFile, m: CsvRowMutation, strayUsed: boolean): boolean {
  const row = untouched(file.rows, m.at);
  if (row === undefined) return false;
  const point = row.point;
  if (point === undefined) return false;
  const column = (c: Column): Cell | undefined => row.cells[file.columns.indexOf(c)];
  const meaningful = (['symbol', 'start', 'price', 'currency', 'unit'] as const)
    .map((c) => column(c))
    .filter((c): c is Cell => c !== undefined && c.value !== '');
  const setValue = (c: Column, value: string): boolean => {
    const cell = column(c);
    if (cell === undefined) return false;
    cell.value = value;
    cell.quoted = cell.quoted || /[",\r\n]/.test(value);
    return true;
  };
  const badPrice = () => setValue('price', 'NaN');
  row.touched = true;
  row.bad = true;
  switch (m.kind) {
    case 'drop-field':
      row.cells.splice(m.n % row.cells.length, 1);
      break;
    case 'extra-field':
      row.cells.splice(m.n % (row.cells.length + 1), 0, {
        value: m.text,
        quoted: false,
        left: '',
        right: '',
      });
      break;
    case 'swap-start': {
      const start = column('start');
      const other = m.n % 2 === 0 ? column('price') : (column('symbol') ?? column('price'));
      if (start === undefined || other === undefined) return badPrice();
      [start.value, other.value] = [other.value, start.value];
      break;
    }
    case 'stray-quote': {
      if (strayUsed) return badPrice();
      const cell = row.cells[m.n % row.cells.length];
      if (cell === undefined) return badPrice();
      cell.raw = insertAt(cellText(cell), m.offset, '"');
      row.stray = true;
      break;
    }
    case 'inner-quotes':
    case 'junk-char': {
      const cell = meaningful[m.n % meaningful.length];
      if (cell === undefined) return badPrice();
      cell.value = insertAt(cell.value, m.offset, m.kind === 'inner-quotes' ? '""' : m.char);
      break;
    }
    case 'bad-price':
      setValue('price', m.text);
      break;
    case 'bad-start':
      setValue('start', m.text);
      break;
    case 'off-grid': {
      let shift = m.shift;
      if (point.series.resolution === 'PT15M' && shift % (15 * MINUTE) === 0) shift += MINUTE;
      const spelling: Spelling =
        Math.abs(shift) < 1000 ? { kind: 'utc', ms: true, lower: false } : m.spelling;
      setValue('start', spell(point.start + shift, point.series.timezone, spelling));
      break;
    }
    case 'other-series': {
      const others =
        file.mode === 'cli'
          ? ['NOPE', 'NO2', 'NO1X', 'N O1', 'XAU1']
          : SERIES.filter((s) => s !== HTTP_SERIES).map((s) => s.symbol.toLowerCase());
      if (!setValue('symbol', others[m.n % others.length] ?? 'NOPE')) return badPrice();
      break;
    }
    case 'wrong-currency':
      if (!setValue('currency', m.text) && !setValue('unit', m.text)) return badPrice();
      break;
    case 'repeat-interval': {
      // The same interval again, spelt some other way: the later row is the bad one.
      const copy: CsvRow = {
        cells: row.cells.map((c) => ({ ...c })),
        point: undefined,
        bad: true,
        stray: false,
        touched: true,
      };
      const startIndex = file.columns.indexOf('start');
      const priceIndex = file.columns.indexOf('price');
      const startCell = copy.cells[startIndex];
      const priceCell = copy.cells[priceIndex];
      if (startCell !== undefined) startCell.value = spell(point.start, point.series.timezone, m.spelling);
      if (priceCell !== undefined) priceCell.value = m.price;
      row.bad = false;
      file.rows.splice(file.rows.indexOf(row) + 1, 0, copy);
      break;
    }
    case 'header-as-row': {
      row.bad = false;
      row.touched = false;
      const header = file.header ?? [];
      file.rows.splice(file.rows.indexOf(row) + 1, 0, {
        cells: header.map((c) => ({ ...c })),
        point: undefined,
        bad: true,
        stray: false,
        touched: true,
      });
      break;
    }
  }
  return true;
}

/** Breaks the header; what the import must say, given the file as rendered (its lines). */
function mutateCsvHeader(file: CsvFile, m: CsvHeaderMutation): (rendered: RenderedCsv) => Expected {
  const header = file.header ?? [];
  const atHeader =
    (reason: RegExp) =>
    (rendered: RenderedCsv): Expected => ({
      kind: 'format',
      line: rendered.headerLine,
      reason,
    });
  const addColumn = (at: number, name: string, cellOf: (row: CsvRow) => Cell) => {
    const i = at % (header.length + 1);
    header.splice(i, 0, { value: name, quoted: false, left: '', right: '' });
    for (const row of file.rows) row.cells.splice(i, 0, cellOf(row));
  };
  switch (m.kind) {
    case 'unknown-column':
      addColumn(m.at, m.name, () => ({ value: '1', quoted: false, left: '', right: '' }));
      return atHeader(/unknown column/);
    case 'repeated-column': {
      const n = m.n % header.length;
      const name = (file.columns[n] ?? 'price').toUpperCase();
      addColumn(m.at, name, (row) => ({
        ...(row.cells[n] ?? { value: '', quoted: false, left: '', right: '' }),
      }));
      return atHeader(/appears twice/);
    }
    case 'missing-column': {
      const required = requiredColumns(file.mode);
      const gone = required[m.n % required.length] ?? 'price';
      const i = file.columns.indexOf(gone);
      header.splice(i, 1);
      file.columns.splice(i, 1);
      for (const row of file.rows) row.cells.splice(i, 1);
      return atHeader(new RegExp(`no "${gone}" column`));
    }
    case 'no-header':
      // The first row is read as the header: its values are no column names.
      file.header = undefined;
      return (rendered) => ({ kind: 'format', line: rendered.lines[0] ?? 1, reason: /unknown column|empty/ });
    case 'header-quote': {
      const cell = header[m.n % header.length];
      if (cell !== undefined) cell.raw = insertAt(cellText(cell), m.offset, m.odd ? '"' : '""');
      return atHeader(/quote|unknown column/);
    }
  }
}

/** A valid CSV file broken on purpose, and what the import must say about it. */
export function breakCsv(input: typeof brokenCsvArb extends fc.Arbitrary<infer T> ? T : never): {
  text: string;
  expected: Expected;
} {
  const file = buildCsv(input.spec);
  if ('header' in input.mutation) {
    const expected = mutateCsvHeader(file, input.mutation.header);
    const rendered = renderCsv(file);
    return { text: rendered.text, expected: expected(rendered) };
  }
  let strayUsed = false;
  for (const m of input.mutation.rows) {
    mutateCsvRow(file, m, strayUsed);
    strayUsed = file.rows.some((r) => r.stray);
  }
  const rendered = renderCsv(file);
  const lines = file.rows.flatMap((row, i) => (row.bad ? [rendered.lines[i] ?? 0] : []));
  const strayIndex = file.rows.findIndex((r) => r.stray);
  return {
    text: rendered.text,
    expected: {
      kind: 'rows',
      lines,
      stray: strayIndex < 0 ? undefined : rendered.lines[strayIndex],
      multiLine: rendered.multiLine,
    },
  };
}
