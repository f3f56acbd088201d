/**
 * Valid JSON files (lines or an array) for the import fuzz tests, their text and the rows a reader
 * must read.
 */
import type { RawRow } from '../../src/services/import-formats.js';
import { count, type Mode } from './import-fuzz-basics.js';
import { type FileSpec, type PointSpec, type Style, styleOf } from './import-fuzz-files.js';

export interface JsonRow {
  entries: [string, string][];
  /** The object's text as written, when a mutation wrote it by hand. */
  object: string | undefined;
  readonly point: PointSpec | undefined;
  bad: boolean;
  touched: boolean;
}
export interface JsonFile {
  readonly mode: Mode;
  rows: JsonRow[];
  readonly spec: FileSpec;
  readonly style: Style;
}

/** A JSON string, sometimes with one letter written as a `\u` escape: the same string. */
function jsonString(text: string, style: Style): string {
  const json = JSON.stringify(text);
  if (!style.chance(0.1)) return json;
  return json.replace(/[A-Za-z]/, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function jsonEntries(point: PointSpec, mode: Mode, style: Style): [string, string][] {
  const entries: [string, string][] = [];
  if (mode === 'cli' || point.symbolText !== '' || style.chance(0.5)) {
    entries.push(['symbol', jsonString(point.symbolText, style)]);
  }
  entries.push(['start', jsonString(point.startText, style)]);
  entries.push(['price', point.priceAsString ? JSON.stringify(point.price) : point.price]);
  if (point.currency !== '' || style.chance(0.2)) entries.push(['currency', JSON.stringify(point.currency)]);
  if (point.unit !== '' || style.chance(0.2)) entries.push(['unit', JSON.stringify(point.unit)]);
  if (style.chance(0.3)) entries.push(['date', point.jsonDate]);
  if (style.chance(0.3)) entries.push(['end', point.jsonEnd]);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = style.pick(
      Array.from({ length: i + 1 }, (_, k) => k),
      i,
    );
    [entries[i], entries[j]] = [entries[j] as [string, string], entries[i] as [string, string]];
  }
  // A key written twice: JSON's last one wins, so an earlier junk value changes nothing.
  const shadowable = entries.filter(([k]) => k !== 'price' && k !== 'date' && k !== 'end');
  if (shadowable.length > 0 && style.chance(0.15)) {
    const [key] = style.pick(shadowable, shadowable[0] as [string, string]);
    entries.unshift([key, style.pick(['"junk"', '1', 'null', '[]'], 'null')]);
  }
  return entries;
}

export function buildJson(spec: FileSpec): JsonFile {
  const style = styleOf(spec.seed, spec.cosmetic);
  return {
    mode: spec.mode,
    rows: spec.points.map((point) => ({
      entries: jsonEntries(point, spec.mode, style),
      object: undefined,
      point,
      bad: false,
      touched: false,
    })),
    spec,
    style,
  };
}

export function objectText(row: JsonRow, style: Style): string {
  if (row.object !== undefined) return row.object;
  const pad = () => (style.chance(0.1) ? style.pick([' ', '\t', '  '], '') : '');
  const key = (k: string) => (k === 'price' ? '"price"' : jsonString(k, style));
  return `{${row.entries.map(([k, v]) => `${pad()}${key(k)}${pad()}:${pad()}${v}${pad()}`).join(',')}}`;
}

interface RenderedJson {
  readonly text: string;
  /** The line of each row. */
  readonly lines: readonly number[];
  /** Where each row's object text lies in `text`. */
  readonly spans: readonly (readonly [number, number])[];
}

export function renderJson(file: JsonFile): RenderedJson {
  const { style, spec } = file;
  const eol = spec.jsonEol;
  let text = spec.bom ? '\uFEFF' : '';
  let line = 1;
  const lines: number[] = [];
  const spans: [number, number][] = [];
  const blank = () => {
    while (style.chance(0.1)) {
      text += style.pick([' ', '\t', ''], ' ') + eol;
      line++;
    }
  };
  const put = (content: string, last: boolean) => {
    text += content;
    line += count(content, /\r\n|\r|\n/g);
    if (!last || spec.finalEol) {
      text += eol;
      line++;
    }
  };
  const n = file.rows.length;
  if (spec.layout === 'array' || (spec.layout === 'array-inline' && n === 0)) {
    blank();
    put(spec.layout === 'array' ? '[' : '[]', n === 0 && spec.layout === 'array-inline');
  }
  file.rows.forEach((row, i) => {
    blank();
    const object = objectText(row, style);
    const left = style.chance(0.1) ? ' ' : '';
    const right = style.chance(0.1) ? '\t' : '';
    const prefix = spec.layout === 'array-inline' && i === 0 ? '[' : '';
    const suffix = spec.layout === 'lines' ? '' : i < n - 1 ? ',' : spec.layout === 'array-inline' ? ']' : '';
    lines.push(line);
    const from = text.length + prefix.length + left.length;
    spans.push([from, from + object.length]);
    put(prefix + left + object + right + suffix, i === n - 1 && spec.layout !== 'array');
  });
  if (spec.layout === 'array') {
    blank();
    put(']', true);
  }
  return { text, lines, spans };
}

/** The rows the JSON reader must read from a valid file. */
export function expectedJsonRows(file: JsonFile, rendered: RenderedJson): RawRow[] {
  return file.rows.map((row, i) => {
    const has = (key: string) => row.entries.some(([k]) => k === key);
    const point = row.point as PointSpec;
    return {
      line: rendered.lines[i] ?? 0,
      symbol: has('symbol') ? point.symbolText : undefined,
      start: point.startText,
      price: point.price,
      currency: has('currency') ? point.currency : undefined,
      unit: has('unit') ? point.unit : undefined,
      error: undefined,
      ...(has('end') && { end: point.end }),
    };
  });
}
