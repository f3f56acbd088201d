/**
 * What both import readers share (`import-formats.ts` for CSV and JSON Lines,
 * `import-json-document.ts` for any other JSON text): the raw row they yield, the columns an import
 * understands, the bounds on hostile input (docs/operating.md "Importing prices") and the reading of
 * a stream in bounded pieces.
 */
import type { Readable } from 'node:stream';

/** One row as read: `price` is the source text, or a number when the source text was not found. */
export interface RawRow {
  readonly line: number;
  /** Where a point of a JSON document sits (`[2]`, `series[0].prices[2]`), beside its line. */
  readonly path?: string | undefined;
  readonly symbol: string | undefined;
  readonly start: string | undefined;
  readonly price: string | number | undefined;
  readonly currency: string | undefined;
  readonly unit: string | undefined;
  /** Set when the row could not be read at all; the other fields are then absent. */
  readonly error: string | undefined;
  /** `end` as written, when given: it must end the series' own interval from `start`. */
  readonly end?: string | undefined;
  /** The resolution the file states for the row (a read answer's series entry): must be the series'. */
  readonly resolution?: string | undefined;
  /**
   * The row is no point: it only states `resolution` for points read before the statement (a series
   * entry that names its resolution after its prices). It is checked, never written.
   */
  readonly statesOnly?: boolean;
}

/** `json`: any JSON text of points (`import-json-document.ts`); `jsonl`: JSON Lines. */
export type ImportFormat = 'csv' | 'json' | 'jsonl';
export type RowBatches = AsyncIterable<readonly RawRow[]>;

/**
 * Columns an import understands. `date` is derived from `start` and so ignored; `end`, when given,
 * must be where the series' own interval from `start` ends (docs/operating.md "Importing prices").
 */
export const KNOWN_COLUMNS = ['symbol', 'date', 'start', 'end', 'price', 'currency', 'unit'] as const;
/** The longest CSV record read (a quoted field may hold line breaks, but not a megabyte of them). */
export const MAX_RECORD = 1 << 20;
/**
 * The longest JSON line read. A point is one small flat object, a few hundred characters at most;
 * a longer line is a bad row, read past without being held.
 */
export const MAX_JSON_LINE = 8192;
/**
 * The deepest nesting of brackets in a JSON line: a point inside the array's `[`, with room for a
 * nested value in the ignored `date`. A deeper line is a bad row, never parsed.
 */
export const MAX_JSON_DEPTH = 8;
/**
 * The most new text read in one synchronous step. Streams from files and sockets deliver 64 KiB
 * chunks; a larger chunk (an in-process stream) is cut, with a turn of the event loop between pieces.
 */
const PIECE = 64 * 1024;

/** The text of `input` in pieces of at most `PIECE` characters, never empty. */
export async function* textPieces(input: Readable): AsyncGenerator<string> {
  input.setEncoding('utf8');
  for await (const chunk of input as AsyncIterable<string>) {
    if (chunk.length <= PIECE) {
      if (chunk !== '') yield chunk;
      continue;
    }
    for (let from = 0; from < chunk.length; from += PIECE) {
      if (from > 0) await new Promise((resolve) => setImmediate(resolve));
      yield chunk.slice(from, from + PIECE);
    }
  }
}

/** A problem with the whole file (its header), reported at its line. */
export class FormatError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}
