/**
 * Writes a response head whose fields are already known to be valid, through Node's own
 * `writeHead`, without Node checking every name and value again (bench/README.md, "Header fields
 * checked once").
 *
 * `writeHead(status, fields)` runs two regular expressions over every field of every answer: on a
 * cached answer of fifteen fields that was about 18,000 instructions, a tenth of the request. Fields
 * set with `setHeader` are checked once, when set, and `writeHead` then writes them unchecked. This
 * file puts the fields where `setHeader` would have put them and calls `writeHead(status)`, so Node
 * writes the same bytes (status line, `Date`, `Connection`, keep-alive) by its own code.
 *
 * The one internal it uses is the symbol under which `OutgoingMessage` keeps those fields
 * (`kOutHeaders`: lower-case name to `[name, value]`). It is looked up once and proven by setting a
 * field on a probe message; if it is missing or keeps fields another way, every head is written
 * with the public `writeHead(status, fields)`. The test (trusted-head.test.ts) compares the bytes on
 * the wire with those of the public call.
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

/** How a head is written: `writeHead(status, fields)` in effect, `fields` being name, value, .... */
export type HeadWriter = (res: ServerResponse, status: number, fields: readonly string[]) => void;

/**
 * A writer of heads through the fields kept under `symbol` (`keptFieldsSymbol()`), or through the
 * public `writeHead` when there is none. The caller vouches for `fields`: every name a lower-case
 * token and there once, every value one Node's `validateHeaderValue` accepts.
 * @example const write = trustedHeadWriter(keptFieldsSymbol()); write(res, 200, ['content-type', 'text/plain'])
 */
export function trustedHeadWriter(symbol: symbol | undefined): HeadWriter {
  if (symbol === undefined) return (res, status, fields) => res.writeHead(status, fields as string[]);
  return (res, status, fields) => {
    const own = res as unknown as Record<symbol, KeptFields | null>;
    // Fields already set on this response: let Node merge and check them its own way.
    if (own[symbol] !== null) {
      res.writeHead(status, fields as string[]);
      return;
    }
    const kept = new Fields();
    for (let i = 0; i < fields.length; i += 2) {
      const name = fields[i] as string;
      kept[name] = [name, fields[i + 1] as string];
    }
    own[symbol] = kept;
    res.writeHead(status);
  };
}
