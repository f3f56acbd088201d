/** JSON files broken on purpose for the import fuzz tests, and which lines the import must name. */
import fc from 'fast-check';
import { HTTP_SERIES, SERIES } from './import-fuzz-basics.js';
import { untouched } from './import-fuzz-csv-breaks.js';
import { anyFileSpec, insertAt } from './import-fuzz-files.js';
import { buildJson, type JsonFile, type JsonRow, objectText, renderJson } from './import-fuzz-json-files.js';
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

const jsonRowMutation = fc.oneof(
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat(), offset: fc.nat() }),
  fc.record({
    kind: fc.constant('wrong-type' as const),
    at: fc.nat(),
    field: fc.constantFrom('price', 'start', 'symbol', 'currency', 'unit'),
    n: fc.nat(),
  }),
  fc.record({
    kind: fc.constant('extra-field' as const),
    at: fc.nat(),
    name: fc.constantFrom('colour', 'Price', 'START', '__proto__', 'constructor', '', 'symbol ', 'prices'),
  }),
  fc.record({ kind: fc.constant('double-wrap' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('deep' as const),
    at: fc.nat(),
    field: fc.constantFrom('price', 'start'),
    depth: fc.constantFrom(1, 64, 3000, 100_000),
    object: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('huge-number' as const),
    at: fc.nat(),
    text: fc.constantFrom(
      '1e999',
      '-1e999',
      '123456789012345678',
      '1e21',
      '0.1e1',
      '1E2',
      '1.0000000000000001',
      '5e-324',
      `1${'0'.repeat(400)}`,
      '-0.0000000000000000000000001e-400',
      '9007199254740993',
    ),
  }),
  fc.record({
    kind: fc.constant('last-key-bad' as const),
    at: fc.nat(),
    field: fc.constantFrom('price', 'start', 'symbol', 'currency'),
  }),
  fc.record({ kind: fc.constant('split-line' as const), at: fc.nat(), n: fc.nat() }),
  fc.record({
    kind: fc.constant('not-object' as const),
    at: fc.nat(),
    text: fc.constantFrom('1', '"x"', 'null', 'true', '[1]', '[[1]]', '-0', '"{}"', '{', '}'),
  }),
  fc.record({ kind: fc.constant('trailing-comma' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('bad-price' as const), at: fc.nat(), text: fc.constantFrom(...BAD_PRICES) }),
  fc.record({ kind: fc.constant('bad-start' as const), at: fc.nat(), text: fc.constantFrom(...BAD_STARTS) }),
  fc.record({
    kind: fc.constant('off-grid' as const),
    at: fc.nat(),
    shift: fc.constantFrom(...OFF_GRID_SHIFTS),
    spelling: spellingArb,
  }),
  fc.record({ kind: fc.constant('other-series' as const), at: fc.nat(), n: fc.nat() }),
  fc.record({
    kind: fc.constant('wrong-currency' as const),
    at: fc.nat(),
    text: fc.constantFrom('XXX', 'eur', 'mwh'),
  }),
  fc.record({
    kind: fc.constant('repeat-interval' as const),
    at: fc.nat(),
    spelling: spellingArb,
    price: validPrice,
  }),
  fc.record({
    kind: fc.constant('junk-char' as const),
    at: fc.nat(),
    n: fc.nat(),
    offset: fc.nat(),
    char: fc.constantFrom(...JUNK_CHARS),
    raw: fc.boolean(),
  }),
);
type JsonRowMutation = typeof jsonRowMutation extends fc.Arbitrary<infer T> ? T : never;

const WRONG_TYPES: Record<string, readonly string[]> = {
  price: ['true', 'false', 'null', '[1]', '{"v":1}', '"abc"', '""', '"1e5"', '"NaN"', '"+5"', '[]', '{}'],
  start: ['123', 'null', 'true', '[]', '{}', '"2026-02-30T00:00:00Z"', '""', '0'],
  symbol: ['1', 'null', 'true', '[]', '{}'],
  currency: ['1', 'null', '"XXX"', '"eur"', '[]'],
  unit: ['1', 'null', '"XXX"', 'false'],
};

/** Sets the last `key` (the one JSON keeps), or adds it. */
function setEntry(entries: [string, string][], key: string, value: string): void {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i];
    if (entry?.[0] === key) {
      entry[1] = value;
      return;
    }
  }
  entries.push([key, value]);
}

function mutateJsonRow(file: JsonFile, m: JsonRowMutation): void {
  const row = untouched(file.rows, m.at);
  if (row === undefined || row.point === undefined) return;
  const point = row.point;
  const style = file.style;
  row.touched = true;
  row.bad = true;
  switch (m.kind) {
    case 'cut': {
      const object = objectText(row, style);
      row.object = object.slice(0, 1 + (m.offset % (object.length - 1)));
      break;
    }
    case 'wrong-type': {
      const values = WRONG_TYPES[m.field] ?? ['null'];
      setEntry(row.entries, m.field, values[m.n % values.length] ?? 'null');
      break;
    }
    case 'extra-field':
      row.entries.splice(m.at % (row.entries.length + 1), 0, [m.name, '1']);
      break;
    case 'double-wrap':
      row.object = `[[${objectText(row, style)}]]`;
      break;
    case 'deep': {
      const inner = m.field === 'price' ? '1' : '"2026-03-29T00:00:00Z"';
      const value = m.object
        ? `${'{"a":'.repeat(m.depth)}${inner}${'}'.repeat(m.depth)}`
        : `${'['.repeat(m.depth)}${inner}${']'.repeat(m.depth)}`;
      setEntry(row.entries, m.field, value);
      break;
    }
    case 'huge-number':
      setEntry(row.entries, 'price', m.text);
      break;
    case 'last-key-bad':
      row.entries.push([m.field, { price: 'true', start: '"nope"', symbol: '1', currency: '0' }[m.field]]);
      break;
    case 'split-line': {
      // Over two lines: both halves are bad, the second one on the next line.
      const entries = row.entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`);
      const cut = 1 + (m.n % (entries.length - 1));
      row.object = `{${entries.slice(0, cut).join(',')},${file.spec.jsonEol}${entries.slice(cut).join(',')}}`;
      break;
    }
    case 'not-object':
      row.object = m.text;
      break;
    case 'trailing-comma':
      row.object = `${objectText(row, style).slice(0, -1)},}`;
      break;
    case 'bad-price':
      setEntry(row.entries, 'price', JSON.stringify(m.text));
      break;
    case 'bad-start':
      setEntry(row.entries, 'start', JSON.stringify(m.text));
      break;
    case 'off-grid': {
      const spelling: Spelling =
        Math.abs(m.shift) < 1000 ? { kind: 'utc', ms: true, lower: false } : m.spelling;
      setEntry(
        row.entries,
        'start',
        JSON.stringify(spell(point.start + m.shift, point.series.timezone, spelling)),
      );
      break;
    }
    case 'other-series': {
      const others =
        file.mode === 'cli'
          ? ['NOPE', 'NO2', 'NO1X', 'N O1', '']
          : SERIES.filter((s) => s !== HTTP_SERIES).map((s) => s.symbol.toLowerCase());
      setEntry(row.entries, 'symbol', JSON.stringify(others[m.n % others.length] ?? 'NOPE'));
      break;
    }
    case 'wrong-currency':
      setEntry(row.entries, m.text === 'mwh' ? 'unit' : 'currency', JSON.stringify(m.text));
      break;
    case 'repeat-interval': {
      const copy: JsonRow = {
        entries: row.entries.map(([k, v]) => [k, v]),
        object: undefined,
        point: undefined,
        bad: true,
        touched: true,
      };
      setEntry(copy.entries, 'start', JSON.stringify(spell(point.start, point.series.timezone, m.spelling)));
      setEntry(copy.entries, 'price', m.price);
      row.bad = false;
      file.rows.splice(file.rows.indexOf(row) + 1, 0, copy);
      break;
    }
    case 'junk-char': {
      const fields = (
        [
          ['start', point.startText],
          ['symbol', point.symbolText],
          ['currency', point.currency],
        ] as const
      ).filter(([k, v]) => v !== '' && row.entries.some(([key]) => key === k));
      const [key, value] = fields[m.n % fields.length] ?? ['start', point.startText];
      const spoilt = insertAt(value, m.offset, m.char);
      // Raw: the character itself in the file (a NUL there is already invalid JSON); else escaped.
      setEntry(
        row.entries,
        key,
        m.raw ? `"${spoilt.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"` : JSON.stringify(spoilt),
      );
      break;
    }
  }
}

export const brokenJsonArb = fc.record({
  spec: anyFileSpec(1),
  mutation: fc.oneof(
    { arbitrary: fc.record({ rows: fc.array(jsonRowMutation, { minLength: 1, maxLength: 3 }) }), weight: 4 },
    { arbitrary: fc.record({ truncate: fc.nat() }), weight: 1 },
  ),
});

/** A valid JSON file broken on purpose, and what the import must say (`ok`: the cut left whole rows). */
export function breakJson(input: typeof brokenJsonArb extends fc.Arbitrary<infer T> ? T : never): {
  text: string;
  lines: number[];
  written: number | undefined;
} {
  const file = buildJson(input.spec);
  if ('truncate' in input.mutation) {
    const rendered = renderJson(file);
    const at = input.mutation.truncate % (rendered.text.length + 1);
    const cutRow = rendered.spans.findIndex(([from, to]) => from < at && at < to);
    const whole = rendered.spans.filter(([, to]) => to <= at).length;
    return {
      text: rendered.text.slice(0, at),
      lines: cutRow < 0 ? [] : [rendered.lines[cutRow] ?? 0],
      written: cutRow < 0 ? whole : undefined,
    };
  }
  for (const m of input.mutation.rows) mutateJsonRow(file, m);
  const rendered = renderJson(file);
  const lines = file.rows.flatMap((row, i) => {
    if (!row.bad) return [];
    const line = rendered.lines[i] ?? 0;
    return row.object !== undefined && /[\r\n]/.test(row.object) ? [line, line + 1] : [line];
  });
  return { text: rendered.text, lines, written: undefined };
}
