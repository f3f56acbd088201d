/**
 * The two import file formats, read as streams into batches of raw rows with their line numbers.
 * Nothing here knows series or prices; `import-service.ts` checks the rows.
 *
 * CSV (RFC 4180: quoted fields, `""` escapes, quoted line breaks, LF or CRLF): a header row naming
 * columns, then one point per row. JSON Lines: one point object per line; the lines may be wrapped
 * in `[` and `]` with commas. Any other JSON text (a compact or pretty-printed array, `{"prices"}`,
 * the read answer) is read by `import-json-document.ts`.
 *
 * The CSV reader is our own rather than `csv-parse`: with the line numbers every bad row must name,
 * `csv-parse` read 125,000 rows a second here (340,000 without them), short of the 200,000 points a
 * second a whole import must reach. Rows come in batches (one per chunk read) so the consumer's
 * `for await` runs per chunk, not per row.
 *
 * Hostile input costs no more than a good file (docs/operating.md "Importing prices"): no step reads more than
 * `PIECE` characters of new input without giving the event loop a turn, a CSV record is at most
 * `MAX_RECORD` characters and a JSON line at most `MAX_JSON_LINE`, nested at most `MAX_JSON_DEPTH`
 * deep. A longer JSON line is never built: the reader notes that it is too long and skips to its end.
 */
import type { Readable } from 'node:stream';
import { jsonDocumentRows } from './import-json-document.js';
import {
  FormatError,
  type ImportFormat,
  KNOWN_COLUMNS,
  MAX_JSON_DEPTH,
  MAX_JSON_LINE,
  MAX_RECORD,
  type RawRow,
  type RowBatches,
  textPieces,
} from './import-rows.js';

// What both readers share is part of this module's interface too.
export * from './import-rows.js';

const KNOWN = new Set<string>(KNOWN_COLUMNS);

function badRow(line: number, error: string): RawRow {
  return {
    line,
    symbol: undefined,
    start: undefined,
    price: undefined,
    currency: undefined,
    unit: undefined,
    error,
  };
}

/** Fields of one CSV record that holds a `"`; `undefined` when its quotes are malformed. */
function quotedFields(record: string): string[] | undefined {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    while (record[i] === ' ' || record[i] === '\t') i++;
    if (record[i] === '"') {
      let value = '';
      i++;
      for (;;) {
        const close = record.indexOf('"', i);
        if (close < 0) return undefined;
        value += record.slice(i, close);
        if (record[close + 1] === '"') {
          value += '"';
          i = close + 2;
        } else {
          i = close + 1;
          break;
        }
      }
      while (record[i] === ' ' || record[i] === '\t') i++;
      fields.push(value);
      if (i === record.length) return fields;
      if (record[i] !== ',') return undefined;
      i++;
    } else {
      const comma = record.indexOf(',', i);
      const value = (comma < 0 ? record.slice(i) : record.slice(i, comma)).trim();
      if (value.includes('"')) return undefined;
      fields.push(value);
      if (comma < 0) return fields;
      i = comma + 1;
    }
  }
}

function countQuotes(text: string): number {
  let n = 0;
  for (let i = text.indexOf('"'); i >= 0; i = text.indexOf('"', i + 1)) n++;
  return n;
}

/** The column positions a CSV header names. */
interface Columns {
  readonly width: number;
  readonly symbol: number;
  readonly start: number;
  readonly end: number;
  readonly price: number;
  readonly currency: number;
  readonly unit: number;
}

function readHeader(fields: string[], line: number, needSymbol: boolean): Columns {
  const names = fields.map((name) => name.trim().toLowerCase());
  const unknown = names.filter((name) => !KNOWN.has(name));
  if (unknown.length > 0) {
    throw new FormatError(
      line,
      `unknown column ${unknown.map((n) => `"${n.slice(0, 40)}"`).join(', ')}; the columns are ${KNOWN_COLUMNS.join(', ')}`,
    );
  }
  const repeated = names.find((name, i) => names.indexOf(name) !== i);
  if (repeated !== undefined) throw new FormatError(line, `column "${repeated}" appears twice`);
  for (const needed of needSymbol ? ['symbol', 'start', 'price'] : ['start', 'price']) {
    if (!names.includes(needed)) throw new FormatError(line, `the header row has no "${needed}" column`);
  }
  return {
    width: names.length,
    symbol: names.indexOf('symbol'),
    start: names.indexOf('start'),
    end: names.indexOf('end'),
    price: names.indexOf('price'),
    currency: names.indexOf('currency'),
    unit: names.indexOf('unit'),
  };
}

/**
 * Batches of rows of a CSV stream. The header must name `start` and `price` (and `symbol` unless the
 * import is for one series); unknown or repeated columns refuse the file. A row's line is the line
 * it starts on.
 */
export async function* csvRows(input: Readable, needSymbol: boolean): AsyncGenerator<RawRow[]> {
  let columns: Columns | undefined;
  let rest = '';
  let line = 0;
  // A record with a quoted line break spans lines: its text so far, and the line it started on.
  let open = '';
  let openLine = 0;
  // The parity of its quotes, kept per line: counting the whole record again made it quadratic.
  let openQuotes = 0;
  let first = true;

  const record = (text: string, at: number, out: RawRow[]) => {
    const fields = text.includes('"') ? quotedFields(text) : text.split(',');
    if (fields === undefined) {
      if (columns === undefined) throw new FormatError(at, 'the header row has malformed quotes');
      out.push(badRow(at, 'has malformed quotes'));
      return;
    }
    if (columns === undefined) {
      columns = readHeader(fields, at, needSymbol);
      return;
    }
    if (fields.length !== columns.width) {
      out.push(badRow(at, `has ${fields.length} fields; the header has ${columns.width}`));
      return;
    }
    const c = columns;
    out.push({
      line: at,
      symbol: c.symbol < 0 ? undefined : (fields[c.symbol] as string).trim(),
      start: (fields[c.start] as string).trim(),
      price: (fields[c.price] as string).trim(),
      currency: c.currency < 0 ? undefined : (fields[c.currency] as string).trim(),
      unit: c.unit < 0 ? undefined : (fields[c.unit] as string).trim(),
      error: undefined,
      ...(c.end >= 0 && { end: (fields[c.end] as string).trim() }),
    });
  };

  const lines = (text: string, final: boolean): RawRow[] => {
    const out: RawRow[] = [];
    let from = 0;
    for (;;) {
      const end = text.indexOf('\n', from);
      if (end < 0 && !final) break;
      let current = end < 0 ? text.slice(from) : text.slice(from, end);
      if (current.endsWith('\r')) current = current.slice(0, -1);
      line++;
      if (open !== '') {
        open += `\n${current}`;
        openQuotes += countQuotes(current);
        if (openQuotes % 2 === 0) {
          const text_ = open;
          open = '';
          record(text_, openLine, out);
        }
      } else if (current.includes('"') && countQuotes(current) % 2 === 1) {
        open = current;
        openLine = line;
        openQuotes = 1;
      } else if (current.trim() !== '') {
        record(current, line, out);
      }
      if (end < 0) break;
      from = end + 1;
    }
    rest = final ? '' : text.slice(from);
    // A record without an end would otherwise grow without bound: a file is one point per line.
    if (rest.length + open.length > MAX_RECORD) {
      throw new FormatError(
        open === '' ? line + 1 : openLine,
        `a row is longer than ${MAX_RECORD} characters`,
      );
    }
    return out;
  };

  for await (const chunk of textPieces(input)) {
    let text = rest + chunk;
    if (first) {
      first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    const batch = lines(text, false);
    if (batch.length > 0) yield batch;
  }
  const last = lines(rest, true);
  if (open !== '') {
    // An unclosed quote in the header swallowed the file: that is the error, not a missing header.
    if (columns === undefined)
      throw new FormatError(openLine, 'the header row has a quoted field that is never closed');
    last.push(badRow(openLine, 'has a quoted field that is never closed'));
  }
  if (last.length > 0) yield last;
  if (columns === undefined) throw new FormatError(1, 'the file is empty; it needs a header row');
}

/** `"price": <number>` in a one-object line: the number's source text, so `41.270` stays `41.270`. */
const PRICE_SOURCE = /"price"\s*:\s*(-?[0-9][0-9.eE+-]*)/;
const JSON_FIELDS = new Set<string>(KNOWN_COLUMNS);
const JSON_BATCH = 1024;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LF = 0x0a;
const CR = 0x0d;

/** Whether brackets outside strings nest deeper than `MAX_JSON_DEPTH` anywhere in `text`. */
function tooDeep(text: string): boolean {
  // A point has one `{` and perhaps a `[`: count them first, walk the line only when there are many.
  let openers = 0;
  for (const opener of ['{', '[']) {
    for (let i = text.indexOf(opener); i >= 0; i = text.indexOf(opener, i + 1)) {
      if (++openers > MAX_JSON_DEPTH) return nestsTooDeep(text);
    }
  }
  return false;
}

function nestsTooDeep(text: string): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // On to the closing quote: brackets in a string are text.
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

function jsonRow(line: number, text: string): RawRow | undefined {
  if (tooDeep(text)) {
    return badRow(line, `nests deeper than ${MAX_JSON_DEPTH} levels; a point is one flat object`);
  }
  // Array brackets and separating commas around the one object of the line.
  const body = text.trim().replace(/^\[/, '').replace(/,$/, '').replace(/\]$/, '').replace(/,$/, '').trim();
  if (body === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return badRow(line, 'is not one JSON object (write one point per line)');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return badRow(line, 'is not a JSON object {"symbol", "start", "price"}');
  }
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).find((name) => !JSON_FIELDS.has(name));
  if (unknown !== undefined) {
    return badRow(
      line,
      `has unknown field "${unknown.slice(0, 40)}"; the fields are ${KNOWN_COLUMNS.join(', ')}`,
    );
  }
  const wrong = ['symbol', 'start', 'end', 'currency', 'unit'].find(
    (name) => fields[name] !== undefined && typeof fields[name] !== 'string',
  );
  if (wrong !== undefined) return badRow(line, `field "${wrong}" must be a string`);
  let price = fields.price;
  if (typeof price === 'number') {
    const source = PRICE_SOURCE.exec(body)?.[1];
    if (source !== undefined && Number(source) === price) price = source;
  } else if (price !== undefined && typeof price !== 'string') {
    return badRow(line, 'field "price" must be a number');
  }
  return {
    line,
    symbol: fields.symbol as string | undefined,
    start: fields.start as string | undefined,
    price: price as string | number | undefined,
    currency: fields.currency as string | undefined,
    unit: fields.unit as string | undefined,
    error: undefined,
    ...(fields.end !== undefined && { end: fields.end as string }),
  };
}

/**
 * Batches of the rows of a JSON Lines stream (optionally wrapped as a one-point-per-line array).
 * Lines end at LF, CR LF or CR, as `node:readline` splits them. A line longer than `MAX_JSON_LINE`
 * is a bad row at its line, and of it only its length is ever known.
 */
export async function* jsonRows(input: Readable): AsyncGenerator<RawRow[]> {
  let line = 1;
  // The text of `line` so far; once it is too long, nothing more of it.
  let text = '';
  let tooLong = false;
  // The last piece ended with CR: an LF that starts the next one ends no second line.
  let afterCr = false;
  let batch: RawRow[] = [];

  const add = (piece: string, from: number, to: number) => {
    if (tooLong || from === to) return;
    if (text.length + (to - from) > MAX_JSON_LINE) {
      tooLong = true;
      text = '';
    } else {
      text += piece.slice(from, to);
    }
  };
  const end = () => {
    const row = tooLong
      ? badRow(line, `is longer than ${MAX_JSON_LINE} characters; a point is one short line`)
      : jsonRow(line, line === 1 && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    if (row !== undefined) batch.push(row);
    line++;
    text = '';
    tooLong = false;
  };

  for await (const piece of textPieces(input)) {
    let from = afterCr && piece.charCodeAt(0) === LF ? 1 : 0;
    // The next LF and CR, each looked for again only once passed: most files have no CR at all.
    let lf = piece.indexOf('\n', from);
    let cr = piece.indexOf('\r', from);
    while (lf >= 0 || cr >= 0) {
      const at = cr < 0 || (lf >= 0 && lf < cr) ? lf : cr;
      add(piece, from, at);
      end();
      from = at === cr && piece.charCodeAt(at + 1) === LF ? at + 2 : at + 1;
      if (lf >= 0 && lf < from) lf = piece.indexOf('\n', from);
      if (cr >= 0 && cr < from) cr = piece.indexOf('\r', from);
      if (batch.length >= JSON_BATCH) {
        yield batch;
        batch = [];
      }
    }
    add(piece, from, piece.length);
    afterCr = piece.charCodeAt(piece.length - 1) === CR;
  }
  if (text !== '' || tooLong) end();
  if (batch.length > 0) yield batch;
}

/**
 * Batches of the rows of `input` in `format`. `symbol` is the one series of an upload: a JSON
 * document's series naming another is then a bad row.
 */
export function readRows(
  input: Readable,
  format: ImportFormat,
  needSymbol: boolean,
  symbol?: string,
): RowBatches {
  if (format === 'csv') return csvRows(input, needSymbol);
  if (format === 'jsonl') return jsonRows(input);
  return jsonDocumentRows(input, symbol);
}
