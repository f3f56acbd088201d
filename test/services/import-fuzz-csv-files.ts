/**
 * Valid CSV files for the import fuzz tests: a model of cells and rows, its text, the rows a reader
 * must read.
 */
import type { RawRow } from '../../src/services/import-formats.js';
import { type Column, count, type Mode } from './import-fuzz-basics.js';
import { type FileSpec, type PointSpec, type Style, styleOf } from './import-fuzz-files.js';

export interface Cell {
  value: string;
  quoted: boolean;
  left: string;
  right: string;
  /** The cell's text as written, when a mutation wrote it by hand. */
  raw?: string;
}
export interface CsvRow {
  cells: Cell[];
  readonly point: PointSpec | undefined;
  /** The test broke it: the import must name its line. */
  bad: boolean;
  /** Broken by an unbalanced quote: it swallows the rows after it. */
  stray: boolean;
  touched: boolean;
}
export interface CsvFile {
  readonly mode: Mode;
  columns: Column[];
  header: Cell[] | undefined;
  rows: CsvRow[];
  readonly style: Style;
  readonly bom: boolean;
  readonly finalEol: boolean;
}

export const requiredColumns = (mode: Mode): Column[] =>
  mode === 'cli' ? ['symbol', 'start', 'price'] : ['start', 'price'];

function csvValue(point: PointSpec, column: Column): string {
  switch (column) {
    case 'symbol':
      return point.symbolText;
    case 'start':
      return point.startText;
    case 'price':
      return point.price;
    case 'currency':
      return point.currency;
    case 'unit':
      return point.unit;
    case 'date':
      return point.date;
    case 'end':
      return point.end;
  }
}

export function cellText(cell: Cell): string {
  if (cell.raw !== undefined) return cell.raw;
  const body = cell.quoted ? `"${cell.value.replaceAll('"', '""')}"` : cell.value;
  return cell.left + body + cell.right;
}

export function buildCsv(spec: FileSpec): CsvFile {
  const style = styleOf(spec.seed, spec.cosmetic);
  const required = requiredColumns(spec.mode);
  const columns = spec.order.filter((c) => required.includes(c) || spec.keep.includes(c));
  const pads = [' ', '\t', '  '];
  const cell = (value: string): Cell => ({
    value,
    quoted: /[",\r\n]/.test(value) || style.chance(0.2),
    left: style.chance(0.15) ? style.pick(pads, '') : '',
    right: style.chance(0.15) ? style.pick(pads, '') : '',
  });
  const respell = (name: string): string =>
    [...name].map((ch) => (style.chance(0.3) ? ch.toUpperCase() : ch)).join('');
  return {
    mode: spec.mode,
    columns,
    header: columns.map((c) => cell(respell(c))),
    rows: spec.points.map((point) => ({
      cells: columns.map((c) => cell(csvValue(point, c))),
      point,
      bad: false,
      stray: false,
      touched: false,
    })),
    style,
    bom: spec.bom,
    finalEol: spec.finalEol,
  };
}

export interface RenderedCsv {
  readonly text: string;
  readonly headerLine: number;
  /** The line each row starts on. */
  readonly lines: readonly number[];
  /** Some row spans lines (a quoted line break in an ignored column). */
  readonly multiLine: boolean;
}

export function renderCsv(file: CsvFile): RenderedCsv {
  const { style } = file;
  const records = [...(file.header === undefined ? [] : [file.header]), ...file.rows.map((r) => r.cells)].map(
    (cells) => cells.map(cellText).join(','),
  );
  let text = file.bom ? '\uFEFF' : '';
  let line = 1;
  const starts: number[] = [];
  records.forEach((record, i) => {
    while (style.chance(0.1)) {
      text += style.pick(['', ' ', '\t'], '') + style.pick(['\n', '\r\n'], '\n');
      line++;
    }
    starts.push(line);
    text += record;
    line += count(record, /\n/g);
    if (i < records.length - 1 || file.finalEol) {
      text += style.pick(['\n', '\r\n'], '\n');
      line++;
    }
  });
  if (file.finalEol && style.chance(0.2)) text += ' \n\n';
  const headerLine = file.header === undefined ? 0 : (starts.shift() ?? 0);
  return { text, headerLine, lines: starts, multiLine: records.some((r) => r.includes('\n')) };
}

/** The rows the CSV reader must read from a valid file. */
export function expectedCsvRows(file: CsvFile, rendered: RenderedCsv): RawRow[] {
  const at = (row: CsvRow, column: Column): string | undefined => {
    const i = file.columns.indexOf(column);
    return i < 0 ? undefined : row.cells[i]?.value.trim();
  };
  return file.rows.map((row, i) => ({
    line: rendered.lines[i] ?? 0,
    symbol: at(row, 'symbol'),
    start: at(row, 'start'),
    price: at(row, 'price'),
    currency: at(row, 'currency'),
    unit: at(row, 'unit'),
    error: undefined,
    ...(file.columns.includes('end') && { end: at(row, 'end') }),
  }));
}
