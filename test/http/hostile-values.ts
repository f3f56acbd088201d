/** Text for the hostile requests, and values the API knows, right and wrong. */
import fc from 'fast-check';
import { type KeyRing, mostly, type QueryName } from './hostile-routes.js';

// ---------------------------------------------------------------------------------------------
// Text.
// ---------------------------------------------------------------------------------------------

/** Strings that have broken URL, JSON, CSV, date and prototype-sensitive code before. */
export const nasty = fc.constantFrom(
  ...['%zz', '%', '%0', '%00', '%u0041', '%C0%AF', '%FF', '%E2%82', '%ED%A0%80', '%2e%2e', '%2F', '%5C'],
  ...['..', '.', '...', '//', '\\', '\u0000', '\uD800', '\uDFFF', '\uFFFF', '\u202E', 'é', '🦀', ' ', ''],
  // `\u0024{` is Log4Shell's `${`, spelt so that it reads as no template placeholder.
  ...['<script>alert(1)</script>', "'; DROP TABLE prices; --", '\u0024{jndi:ldap://x/a}', '{{7*7}}'],
  ...['NaN', 'Infinity', '-0', '1e309', 'null', 'undefined', 'true', '[]', '{}'],
  ...['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'],
);

/** Any text: unicode, any code point, the strings above and their mixes, and very long runs. */
export const fuzzText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 4, arbitrary: nasty },
  {
    weight: 2,
    arbitrary: fc
      .array(fc.oneof(nasty, fc.string({ maxLength: 4 })), { maxLength: 6 })
      .map((a) => a.join('')),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('a', '9', '.', '%41', 'é', '/'), fc.integer({ min: 100, max: 12_000 }))
      .map(([unit, n]) => unit.repeat(n)),
  },
);

/** Every byte of the UTF-8 of `text` that is not unreserved, percent-encoded (lone surrogates included). */
export function pct(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9._~-]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Header values as Node hands them over: visible latin1 and inner blanks, trimmed. */
export const headerText: fc.Arbitrary<string> = mostly(
  fc.string({
    unit: fc
      .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constant(9))
      .map((c) => String.fromCharCode(c)),
    maxLength: 40,
  }),
  fc.constantFrom('', '*', ',', ';', '"', '=', 'null', '%00', 'a'.repeat(4000)),
  3,
).map((value) => value.trim());

export const headerName = mostly(
  fc.stringMatching(/^[a-z][a-z0-9-]{0,24}$/),
  fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,20}$/),
  3,
);

// ---------------------------------------------------------------------------------------------
// Values the API knows, right and wrong.
// ---------------------------------------------------------------------------------------------

/** Dates near the fake clock's today (2026-11-22), at the edges of the allowed span, and malformed. */
export const dayArb = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom('today', 'tomorrow', 'yesterday', '2026-11-22', '2026-11-20', 'TODAY'),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('1900-01-01', '1899-12-31', '2199-12-31', '2200-01-01', '2026-08-24'),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      ...['2026-02-29', '2024-02-29', '2026-13-01', '2026-00-10', '0000-00-00', '2026-11-22T00:00:00Z'],
      ...['+002026-11-22', '-2026-11-22', '2026-8-1', '20261122', '2026-11-22 ', '２０２６-11-22'],
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .date({ min: new Date('1800-01-01'), max: new Date('2400-01-01'), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10)),
  },
);

const SERIES = ['NO1', 'no1', 'DE-LU', 'de-lu', 'JP-TK', 'NYISO-J', 'EURUSD', 'BTC-USD', 'XAU-USD', 'ACME'];
export const symbolArb = mostly(
  fc.constantFrom(...SERIES),
  fc.oneof(
    fc.constantFrom('ZZZ1', 'NEW.SERIES_1', 'A'.repeat(32), 'A'.repeat(33), '-X', '.', 'NO1 ', 'ｎｏ１', 'İ'),
    fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,34}$/),
  ),
);

export const QUERY_VALUES: Record<QueryName, fc.Arbitrary<string>> = {
  symbols: mostly(
    fc.array(symbolArb, { minLength: 1, maxLength: 4 }).map((s) => s.join(',')),
    fc.constantFrom(',', ',,NO1,', 'NO1,'.repeat(101), ' NO1 , de-lu '),
  ),
  tz: mostly(
    fc.constantFrom('Europe/Oslo', 'UTC', 'Asia/Kathmandu', 'Pacific/Kiritimati', 'Etc/GMT+12', 'US/Eastern'),
    fc.constantFrom(
      ...['europe/oslo', 'Mars/Olympus_Mons', '+01:00'],
      ...['Z', '../../etc/passwd', 'Europe/Oslo\u0000'],
    ),
  ),
  format: mostly(fc.constantFrom('json', 'csv', 'text', 'evcc'), fc.constantFrom('JSON', 'xml', 'json,csv')),
  resolution: mostly(
    fc.constantFrom('PT15M', 'PT30M', 'PT1H', 'P1D'),
    fc.constantFrom('pt1h', 'PT1M', 'P1W', 'PT0S'),
  ),
  from: mostly(fc.constantFrom('yesterday', 'today', '2026-11-20'), dayArb),
  to: mostly(fc.constantFrom('today', 'tomorrow', '2026-11-23'), dayArb),
  duration: mostly(
    fc.constantFrom('PT1H', 'P1D', 'PT15M'),
    fc.constantFrom('pt3h', 'PT20M', 'P1W', 'PT0S', '3h'),
  ),
  hours: mostly(fc.constantFrom('1', '4', '24'), fc.constantFrom('0', '25', '2.5', '-1', '099', '4h')),
  granularity: mostly(fc.constantFrom('PT1H', 'P1D', 'p1d'), fc.constantFrom('PT15M', 'P1W', 'PT1H,P1D', '')),
  action: mostly(
    fc.constantFrom('keys.create', 'keys.revoke', 'prices.write'),
    fc.constantFrom('KEYS.CREATE', 'keys.*', 'keys', ''),
  ),
  actor: mostly(fc.constantFrom('cli', 'key_abc'), fc.constantFrom('CLI', 'key_', 'key_a/b', '*')),
  limit: mostly(fc.constantFrom('1', '100', '1000'), fc.constantFrom('0', '1001', '-1', '1e3', '99999')),
  cursor: mostly(fc.constantFrom('1', '999999'), fc.constantFrom('-1', '0x10', '1.5', '9'.repeat(20))),
};

/** A key as a client might hold it: right, of the wrong standing, or mangled in transit. */
export function keyTextArb(ring: KeyRing, right: string): fc.Arbitrary<string> {
  const valid = fc.constantFrom(ring.read, ring.write, ring.admin, ring.demo, ring.test);
  const mangled = fc
    .tuple(
      valid,
      fc.constantFrom(
        ...['truncated', 'suffix', 'prefix', 'checksum', 'kind'],
        ...['doubled', 'listed', 'quoted', 'lower', 'upper'],
      ),
      fc.integer({ min: 1, max: 4 }),
      fc.constantFrom('!', 'x', '0', '==', '%00', 'é', ' ', '\t', ';'),
    )
    .map(([key, how, n, extra]) => {
      switch (how) {
        case 'truncated':
          return key.slice(0, -n);
        case 'suffix':
          return key + extra;
        case 'prefix':
          return extra + key;
        case 'checksum':
          return key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
        case 'kind':
          return key.replace(/^pp_([a-z]+)_/, (_, kind) => (kind === 'live' ? 'pp_test_' : 'pp_live_'));
        case 'doubled':
          return key + key;
        case 'listed':
          return `${key}, ${ring.read}`;
        case 'quoted':
          return `"${key}"`;
        case 'lower':
          return key.toLowerCase();
        default:
          return key.replace(/^pp_([a-z]+)_/, (_, kind: string) => `PP_${kind.toUpperCase()}_`);
      }
    });
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant(right) },
    { weight: 2, arbitrary: valid },
    { weight: 1, arbitrary: fc.constantFrom(ring.revoked, ring.unknown) },
    { weight: 3, arbitrary: mangled },
    { weight: 1, arbitrary: headerText },
  );
}
