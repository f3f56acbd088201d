/**
 * Writes a response head whose fields are already known to be valid, through Node's own
 * `writeHead`, without Node checking every name and value again (bench/README.md, "Header fields
 * checked once").
 *
 * `writeHead(status, fields)` runs two regular expressions over every field of every answer, a
 * tenth of a cached answer's cost (bench/README.md). Fields
 * set with `setHeader` are checked once, when set, and `writeHead` then writes them unchecked. This
 * file puts the fields where `setHeader` would have put them and calls `writeHead(status)`, so Node
 * writes the same bytes (status line, `Date`, `Connection`, keep-alive) by its own code.
 *
 * The one internal it uses is the symbol under which `OutgoingMessage` keeps those fields
 * (`kOutHeaders`: lower-case name to `[name, value]`). It is looked up once and proven by setting a
 * field on a probe message; if it is missing or keeps fields another way, every head is written
 * with the public `writeHead(status, fields)`. A head written again and again (a cached answer's)
 * is prepared once, with slots for the values that change (`preparedHead`). The test
 * (trusted-head.test.ts) compares the bytes on the wire with those of the public call.
 */
import { OutgoingMessage, type ServerResponse, validateHeaderName, validateHeaderValue } from 'node:http';

type KeptFields = Record<string, [string, string]>;

/**
 * The symbol under which `message` keeps the fields set with `setHeader`, if it keeps them as Node
 * 20 does; else `undefined`.
 */
export function keptFieldsSymbol(message: OutgoingMessage = new OutgoingMessage()): symbol | undefined {
  const own = message as unknown as Record<symbol, unknown>;
  const symbol = Object.getOwnPropertySymbols(message).find((s) => s.description === 'kOutHeaders');
  if (symbol === undefined || own[symbol] !== null) return undefined;
  try {
    message.setHeader('X-Probe', 'yes');
  } catch {
    return undefined;
  }
  const kept = own[symbol] as KeptFields | null | undefined;
  if (kept === null || typeof kept !== 'object' || Object.getPrototypeOf(kept) !== null) return undefined;
  const keys = Object.keys(kept);
  const entry = kept['x-probe'];
  const proven =
    keys.length === 1 &&
    Array.isArray(entry) &&
    entry.length === 2 &&
    entry[0] === 'X-Probe' &&
    entry[1] === 'yes' &&
    message.getHeader('x-probe') === 'yes';
  return proven ? symbol : undefined;
}

/**
 * Node keeps a message's fields in an object without a prototype, so that no name is mistaken for
 * an inherited property. Objects made by this constructor have none either, and, unlike
 * `{ __proto__: null }`, keep V8's fast layout, which `writeHead` walks with `for...in`.
 */
const Fields = function Fields() {} as unknown as new () => KeptFields;
Fields.prototype = Object.create(null);

/**
 * Checks fields (name, value, ...) as Node's `writeHead` would, and that each name is in lower case,
 * as a `trustedHeadWriter` takes them: what a caller runs once on the fields it will vouch for.
 * Throws Node's own error for one that is not valid.
 */
export function checkFields(fields: readonly string[]): void {
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i] as string;
    validateHeaderName(name);
    validateHeaderValue(name, fields[i + 1] as string);
    if (name !== name.toLowerCase()) throw new TypeError(`header name ${name} is not in lower case`);
  }
}

/**
 * A head to be written many times: fixed fields, and slots, fields whose values each write gives.
 * @example const head = preparedHead(['x-request-id', '', 'etag', '"a"'], ['x-request-id']); head.values[0] = id
 */
export interface PreparedHead {
  /** Name, value, ...: the fields in their order, with the values of the slots as prepared. */
  readonly fields: readonly string[];
  /** The values of the slots for the next write, in the order of the slots: the caller sets them. */
  readonly values: string[];
  /** Where in `fields` each slot's value is. */
  readonly places: readonly number[];
  /** The fields as Node keeps them, one entry a field; the slots' entries are refilled each write. */
  readonly kept: KeptFields;
  readonly slotEntries: readonly [string, string][];
}

/**
 * A head of `fields` (name, value, ...) in which the fields named in `slots` take a value given
 * for each write (`values`). The caller vouches for the fields as for `trustedHeadWriter`.
 */
export function preparedHead(fields: readonly string[], slots: readonly string[]): PreparedHead {
  const kept = new Fields();
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i] as string;
    kept[name] = [name, fields[i + 1] as string];
  }
  const places = slots.map((slot) => {
    const place = fields.indexOf(slot);
    if (place < 0 || place % 2 !== 0) throw new Error(`no field ${slot} in the head`);
    return place + 1;
  });
  return {
    fields,
    values: places.map((place) => fields[place] as string),
    places,
    kept,
    slotEntries: slots.map((slot) => kept[slot] as [string, string]),
  };
}

/** How a prepared head is written: `writeHead(status, fields)` in effect, with the slots' values. */
export type HeadWriter = (res: ServerResponse, status: number, head: PreparedHead) => void;

/** The fields of `head` with its slots' values, for the public `writeHead`. */
function filledFields(head: PreparedHead): string[] {
  const fields = [...head.fields];
  for (let i = 0; i < head.places.length; i++) fields[head.places[i] as number] = head.values[i] as string;
  return fields;
}

/**
 * A writer of prepared heads through the fields kept under `symbol` (`keptFieldsSymbol()`), or
 * through the public `writeHead` when there is none. The caller vouches for every field: every name
 * a lower-case token and there once, every value one Node's `validateHeaderValue` accepts.
 *
 * Node reads the fields it keeps only while `writeHead` writes them, and afterwards only for
 * `getHeader` and its kind, which set nothing once the head is sent. So one object of fields serves
 * every write of a head: the slots' entries are refilled, the object is lent to the response for
 * its `writeHead` and taken back at once. The response then keeps no fields, just as after the
 * public `writeHead(status, fields)`, and nothing is made per write.
 * @example const write = trustedHeadWriter(keptFieldsSymbol()); write(res, 200, head)
 */
export function trustedHeadWriter(symbol: symbol | undefined): HeadWriter {
  if (symbol === undefined) return (res, status, head) => res.writeHead(status, filledFields(head));
  return (res, status, head) => {
    const own = res as unknown as Record<symbol, KeptFields | null>;
    // Fields already set on this response: let Node merge and check them its own way.
    if (own[symbol] !== null) {
      res.writeHead(status, filledFields(head));
      return;
    }
    const { slotEntries, values } = head;
    for (let i = 0; i < slotEntries.length; i++)
      (slotEntries[i] as [string, string])[1] = values[i] as string;
    own[symbol] = head.kept;
    try {
      res.writeHead(status);
    } finally {
      own[symbol] = null;
    }
  };
}
