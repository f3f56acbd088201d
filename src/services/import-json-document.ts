/**
 * Price points from any JSON text, streamed through `stream-json`'s tokenizer (docs/operating.md "Importing
 * prices"): an array of points, `{"prices": [...]}`, the read answer (`{"series": [{"symbol",
 * "prices": [...]}]}`), or several such values one after the other (JSON Lines sent as
 * `application/json` before the `application/x-ndjson` media type existed). Formatting is free.
 *
 * Nothing is held whole: keys, strings and numbers arrive in chunks and are kept up to
 * `MAX_JSON_VALUE` characters, nesting is followed by depth, and a number's source text is handed
 * over as written (`41.270` stays `41.270`). A point is named by its path (`[2]`,
 * `series[0].prices[2]`) and by the line its `{` is on: the text is fed to the tokenizer a line at a
 * time, so every token is known to end on the current line.
 */
import type { Readable } from 'node:stream';
import { none } from 'stream-chain/defs.js';
import { jsonParser, type Token } from 'stream-json/core/parser.js';
import { FormatError, KNOWN_COLUMNS, MAX_JSON_DEPTH, type RawRow, textPieces } from './import-rows.js';

/** The longest key, string or number read; a point's values are a few dozen characters. */
export const MAX_JSON_VALUE = 8192;
/** Past this depth the text is refused outright: the tokenizer keeps a stack entry per level. */
export const MAX_JSON_NESTING = 64;
const BATCH = 1024;
/** A point's field names (a function: `import-formats.ts` imports this module, so not at load). */
const isField = (name: string) => (KNOWN_COLUMNS as readonly string[]).includes(name);
const SHAPES = 'a point, an array of points, {"prices": [...]} or the read answer {"series": [...]}';

type Scalar = { readonly kind: 'string' | 'number' | 'other'; readonly text: string };

/** A point being read, or a top-level object that may turn out to hold points. */
interface Unit {
  readonly line: number;
  readonly path: string | undefined;
  readonly fields: Map<string, Scalar>;
  unknown: string | undefined;
  tooLong: boolean;
  tooDeep: boolean;
  /** Holds `prices` or `series`: a container, not a point. */
  container: boolean;
  /** The container's `symbol` did not match: its points are not read. */
  refused: boolean;
  /** The resolution a container states (the read answer's series entry), for its points. */
  stated: string | undefined;
  /** A container whose points were handed on already: a resolution stated now comes too late for them. */
  pointsRead: boolean;
  /** Why an element that should be a point is not one (`[1]` where a point belongs). */
  notAPoint: string | undefined;
}

/** What the values inside an open object or array are. */
type Role = 'top-array' | 'top-object' | 'points' | 'point' | 'series-list' | 'series' | 'skip';

interface Frame {
  readonly role: Role;
  /** The point or container this frame belongs to (the `prices` of a container share its unit). */
  readonly unit: Unit | undefined;
  readonly path: string;
  /** Arrays: the index of the next element. Objects: the key of the value being read. */
  index: number;
  key: string;
}

function unitAt(line: number, path: string | undefined): Unit {
  return {
    line,
    path,
    fields: new Map(),
    unknown: undefined,
    tooLong: false,
    tooDeep: false,
    container: false,
    refused: false,
    stated: undefined,
    pointsRead: false,
    notAPoint: undefined,
  };
}

function row(
  unit: Unit,
  symbol: string | undefined,
  error: string | undefined,
  resolution?: string | undefined,
): RawRow {
  const text = (name: string) => unit.fields.get(name)?.text;
  const price = unit.fields.get('price');
  const end = error === undefined ? text('end') : undefined;
  return {
    line: unit.line,
    path: unit.path,
    symbol: error === undefined ? (text('symbol') ?? symbol) : undefined,
    start: error === undefined ? text('start') : undefined,
    price: error === undefined ? price?.text : undefined,
    currency: error === undefined ? text('currency') : undefined,
    unit: error === undefined ? text('unit') : undefined,
    error,
    ...(end !== undefined && { end }),
    ...(error === undefined && resolution !== undefined && { resolution }),
  };
}

/** The row of a finished point: its fields, or why it is bad. `resolution`: what its container states. */
function pointRow(unit: Unit, symbol: string | undefined, resolution?: string): RawRow {
  if (unit.tooDeep)
    return row(unit, symbol, `nests deeper than ${MAX_JSON_DEPTH} levels; a point is one flat object`);
  if (unit.tooLong) return row(unit, symbol, `has a value longer than ${MAX_JSON_VALUE} characters`);
  if (unit.unknown !== undefined) {
    return row(
      unit,
      symbol,
      `has unknown field "${unit.unknown.slice(0, 40)}"; the fields are ${KNOWN_COLUMNS.join(', ')}`,
    );
  }
  const wrong = ['symbol', 'start', 'end', 'currency', 'unit'].find((name) => {
    const value = unit.fields.get(name);
    return value !== undefined && value.kind !== 'string';
  });
  if (wrong !== undefined) return row(unit, symbol, `field "${wrong}" must be a string`);
  if (unit.fields.get('price')?.kind === 'other') return row(unit, symbol, 'field "price" must be a number');
  return row(unit, symbol, undefined, resolution);
}

/**
 * Batches of the points of a JSON text. `symbol` is the series the import is for (an upload): a
 * container naming another series is one bad row, and its points are not read.
 */
export async function* jsonDocumentRows(input: Readable, symbol?: string): AsyncGenerator<RawRow[]> {
  const tokenize = jsonParser({ packValues: false, streamValues: true, jsonStreaming: true });
  const stack: Frame[] = [];
  let line = 1;
  let batch: RawRow[] = [];
  // The key, string or number being read: its text so far (up to MAX_JSON_VALUE), and whether more came.
  let text = '';
  let textTooLong = false;

  /** The innermost unit open, which a value too long or too deep spoils. */
  const currentUnit = (): Unit | undefined => {
    for (let i = stack.length - 1; i >= 0; i--) {
      const unit = stack[i]?.unit;
      if (unit !== undefined) return unit;
    }
    return undefined;
  };
  /** The symbol a container above names, for points that name none. */
  const containerSymbol = (): string | undefined => {
    for (let i = stack.length - 1; i >= 0; i--) {
      const frame = stack[i] as Frame;
      if ((frame.role === 'series' || frame.role === 'top-object') && frame.unit !== undefined) {
        const named = frame.unit.fields.get('symbol');
        if (named?.kind === 'string') return named.text;
      }
    }
    return undefined;
  };
  /** The resolution the nearest container above states, for the points read inside it. */
  const containerResolution = (): string | undefined => {
    for (let i = stack.length - 1; i >= 0; i--) {
      const frame = stack[i] as Frame;
      if ((frame.role === 'series' || frame.role === 'top-object') && frame.unit?.stated !== undefined) {
        return frame.unit.stated;
      }
    }
    return undefined;
  };

  const open = (role: Role, unit: Unit | undefined, path: string) => {
    stack.push({ role, unit, path, index: 0, key: '' });
    if (stack.length > MAX_JSON_NESTING) {
      throw new FormatError(line, `nests deeper than ${MAX_JSON_DEPTH} levels; a point is one flat object`);
    }
    if (stack.length > MAX_JSON_DEPTH) {
      const spoiled = currentUnit();
      if (spoiled !== undefined) spoiled.tooDeep = true;
    }
  };

  /**
   * A bad element where a point or container belongs: a scalar is a bad row now, an array when it
   * closes (when it nests too deep, that is what is said).
   */
  const notAPoint = (
    path: string | undefined,
    what: string,
    kind: 'object' | 'array' | 'scalar' = 'scalar',
  ) => {
    const unit = unitAt(line, path);
    unit.notAPoint = what;
    if (kind === 'scalar') batch.push(row(unit, undefined, what));
    return { role: 'skip' as const, unit, path: path ?? '' };
  };

  /** Where a value that starts now goes: the role of the object or array it opens, if it is one. */
  const place = (kind: 'object' | 'array' | 'scalar'): { role: Role; unit?: Unit; path: string } => {
    const parent = stack[stack.length - 1];
    if (parent === undefined) {
      if (kind === 'array') return { role: 'top-array', path: '' };
      if (kind === 'object') return { role: 'top-object', unit: unitAt(line, undefined), path: '' };
      notAPoint(undefined, `is not ${SHAPES}`);
      return { role: 'skip', path: '' };
    }
    switch (parent.role) {
      case 'top-array':
      case 'points': {
        const path = `${parent.path}[${parent.index++}]`;
        if (kind === 'object') return { role: 'point', unit: unitAt(line, path), path };
        if (parent.unit?.refused === true) return { role: 'skip', path };
        return notAPoint(path, 'is not a JSON object {"start", "price"}', kind);
      }
      case 'series-list': {
        const path = `${parent.path}[${parent.index++}]`;
        if (kind === 'object') return { role: 'series', unit: unitAt(line, path), path };
        return notAPoint(path, 'is not a series {"symbol", "prices": [...]}', kind);
      }
      case 'top-object':
      case 'series': {
        const path = `${parent.path === '' ? '' : `${parent.path}.`}${parent.key}`;
        const unit = parent.unit as Unit;
        if (kind === 'array' && parent.key === 'prices') {
          unit.container = true;
          return { role: 'points', unit, path };
        }
        if (kind === 'array' && parent.key === 'series' && parent.role === 'top-object') {
          unit.container = true;
          return { role: 'series-list', path };
        }
        if (kind !== 'scalar' && isField(parent.key)) {
          unit.fields.set(parent.key, { kind: 'other', text: '' });
        } else if (kind !== 'scalar') {
          noteUnknown(parent);
        }
        return { role: 'skip', path };
      }
      case 'point': {
        if (kind !== 'scalar' && isField(parent.key)) {
          (parent.unit as Unit).fields.set(parent.key, { kind: 'other', text: '' });
        } else if (kind !== 'scalar') {
          noteUnknown(parent);
        }
        return { role: 'skip', path: parent.path };
      }
      default:
        return { role: 'skip', path: parent.path };
    }
  };

  /** A key no point has: it spoils a point (a container's other keys are metadata, ignored). */
  const noteUnknown = (frame: Frame) => {
    if ((frame.role === 'point' || frame.role === 'top-object') && frame.unit?.unknown === undefined) {
      (frame.unit as Unit).unknown = frame.key;
    }
  };

  /** A finished scalar value, stored as a field when it is one of a point's or container's. */
  const scalar = (value: Scalar) => {
    const parent = stack[stack.length - 1];
    if (
      parent === undefined ||
      parent.role === 'top-array' ||
      parent.role === 'points' ||
      parent.role === 'series-list'
    ) {
      place('scalar');
      return;
    }
    if (parent.role === 'skip' || parent.unit === undefined) return;
    if (isField(parent.key)) parent.unit.fields.set(parent.key, value);
    else noteUnknown(parent);
    if (parent.key === 'resolution' && (parent.role === 'series' || parent.role === 'top-object')) {
      stateResolution(parent, value.text);
    }
  };

  /**
   * A container's `resolution`: its points must be of it. Points read before it were handed on
   * without it, so it then comes as a row of its own, which the import checks and never writes.
   */
  const stateResolution = (frame: Frame, resolution: string) => {
    const unit = frame.unit as Unit;
    unit.stated = resolution;
    if (!unit.pointsRead || unit.refused) return;
    batch.push({
      line,
      path: `${frame.path === '' ? '' : `${frame.path}.`}resolution`,
      symbol: containerSymbol() ?? symbol,
      start: undefined,
      price: undefined,
      currency: undefined,
      unit: undefined,
      error: undefined,
      resolution,
      statesOnly: true,
    });
  };

  /** A container's `symbol` against the upload's: one bad row, and its points are not read. */
  const checkSymbol = (frame: Frame) => {
    const unit = frame.unit as Unit;
    const named = unit.fields.get('symbol');
    if (symbol === undefined || named === undefined || unit.refused) return;
    if (named.kind !== 'string' || named.text.toUpperCase() !== symbol) {
      unit.refused = true;
      batch.push({
        ...row(
          unit,
          undefined,
          `symbol ${named.text.slice(0, 40)} is not the series of this request (${symbol})`,
        ),
        path: `${frame.path === '' ? '' : `${frame.path}.`}symbol`,
      });
    }
  };

  const close = () => {
    const frame = stack.pop() as Frame;
    const unit = frame.unit;
    if (unit === undefined) return;
    if (unit.notAPoint !== undefined && frame.role === 'skip' && stack[stack.length - 1]?.unit !== unit) {
      const why = unit.tooDeep
        ? `nests deeper than ${MAX_JSON_DEPTH} levels; a point is one flat object`
        : unit.notAPoint;
      batch.push(row(unit, undefined, why));
    } else if (frame.role === 'point') {
      const owner = stack[stack.length - 1]?.unit;
      if (owner?.refused !== true) batch.push(pointRow(unit, containerSymbol(), containerResolution()));
      if (owner !== undefined) owner.pointsRead = true;
    } else if (frame.role === 'top-object' || frame.role === 'series') {
      if (!unit.container) {
        // A top-level object without prices is a point; a series without prices holds none.
        if (frame.role === 'top-object') batch.push({ ...pointRow(unit, undefined), path: undefined });
      } else if (unit.tooDeep && !unit.refused) {
        batch.push(row(unit, undefined, `nests deeper than ${MAX_JSON_DEPTH} levels`));
      } else {
        checkSymbol(frame);
      }
    }
  };

  const onToken = (token: Token) => {
    switch (token.name) {
      case 'startObject':
      case 'startArray': {
        const where = place(token.name === 'startObject' ? 'object' : 'array');
        // A skipped value inside a point or container belongs to it: too deep there spoils it.
        const owner = where.unit ?? (where.role === 'skip' ? stack[stack.length - 1]?.unit : undefined);
        open(where.role, owner, where.path);
        return;
      }
      case 'endObject':
      case 'endArray':
        close();
        return;
      case 'startKey':
      case 'startString':
      case 'startNumber':
        text = '';
        textTooLong = false;
        return;
      case 'stringChunk':
      case 'numberChunk':
        if (textTooLong) return;
        if (text.length + token.value.length > MAX_JSON_VALUE) {
          textTooLong = true;
          text = '';
          const spoiled = currentUnit();
          if (spoiled !== undefined) spoiled.tooLong = true;
        } else {
          text += token.value;
        }
        return;
      case 'endKey': {
        const frame = stack[stack.length - 1];
        if (frame !== undefined) frame.key = textTooLong ? '…' : text;
        if (frame?.role === 'series' || frame?.role === 'top-object') {
          // Checked as soon as it is known, so a refused series' points are skipped.
          if (frame.key !== 'symbol' && frame.unit?.fields.has('symbol')) checkSymbol(frame);
        }
        return;
      }
      case 'endString':
        scalar({ kind: 'string', text });
        return;
      case 'endNumber':
        scalar({ kind: 'number', text });
        return;
      case 'nullValue':
      case 'trueValue':
      case 'falseValue':
        scalar({ kind: 'other', text: String(token.value) });
        return;
      default:
        return;
    }
  };

  const feed = (segment: string | typeof none) => {
    let tokens: ReturnType<typeof tokenize>;
    try {
      tokens = tokenize(segment as string);
    } catch (error) {
      const why = (error as Error).message.replace(/^Parser (cannot parse input: |has )/, '');
      throw new FormatError(line, `is not valid JSON (${why})`);
    }
    if (tokens !== none && tokens !== undefined) {
      for (const token of (tokens as { values: Token[] }).values) onToken(token);
    }
  };

  let first = true;
  try {
    for await (let piece of textPieces(input)) {
      if (first) {
        first = false;
        if (piece.charCodeAt(0) === 0xfeff) piece = piece.slice(1);
      }
      let from = 0;
      for (let lf = piece.indexOf('\n'); lf >= 0; lf = piece.indexOf('\n', from)) {
        feed(piece.slice(from, lf + 1));
        line++;
        from = lf + 1;
      }
      if (from < piece.length) feed(from === 0 ? piece : piece.slice(from));
      if (batch.length >= BATCH) {
        yield batch;
        batch = [];
      }
    }
    if (stack.length > 0) throw new FormatError(line, 'is not valid JSON (the text ends inside a value)');
    feed(none);
  } catch (error) {
    // The points read before the text broke are named too, in order, before the break itself.
    if (error instanceof FormatError && batch.length > 0) yield batch;
    throw error;
  }
  if (batch.length > 0) yield batch;
}
