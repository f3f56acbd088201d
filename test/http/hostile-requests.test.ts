/**
 * Hostile requests (issue 7, point 1): fast-check writes the requests a careless or malicious
 * client might send to every route the app serves (any method, paths with fuzzed segments, query
 * strings, headers, keys in every place and shape, bodies of any bytes and media type) and every
 * answer must keep the promises of DESIGN section 5:
 * - never a 5xx (no store is made unavailable here, so not even a 503);
 * - every error is application/problem+json with the section 5 members and a code of the closed list;
 * - no body or header holds the secret part of a key the request carried, however it was carried;
 * - the process never crashes: no uncaught exception or unhandled rejection, and it still answers.
 *
 * Each part of a request is plausible most of the time and hostile some of the time, so that most
 * requests get past routing, keys and schemas into the handlers (every route must answer 2xx at
 * least once, or the generators have drifted from the API) while every check meets garbage too.
 *
 * Most requests go through `app.inject`, where the URL is normalised as WHATWG URL parsing does. A
 * share goes over real HTTPS with raw request targets (dot segments, backslashes, `%zz`) and
 * repeated header lines; that is also the only way in to the fast path in front of Fastify
 * (src/http/fast-path.ts), so each of those is sent twice: a cached answer is served by it.
 *
 * A failing property prints its seed and shrunk counterexample; the seed is fixed, so a failure
 * reproduces. The bugs these properties found have focused tests at the end of the file.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { ApiError, ERROR_CODES, type ErrorCode, errorStatus } from '../../src/domain/errors/api-error.js';
import { generateKey, maskKeys } from '../../src/domain/keys/key-format.js';
import { createRateLimiter } from '../../src/services/rate-limiter.js';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';

const SEED = 20261122;
/** Runs per route; the routes that take a body have the most to check. Sized for about 25 s of CPU. */
const RUNS = { read: 100, write: 200, https: 100 };

// ---------------------------------------------------------------------------------------------
// The routes, listed by hand from src/http/routes/*, docs.ts (and the swagger-ui plugin it
// registers) and the CORS preflight. The first test proves the list against the OpenAPI document
// and the router, so a route added later fails here until it is fuzzed too.
// ---------------------------------------------------------------------------------------------

type Access = 'open' | 'read' | 'write' | 'admin';
type BodyKind = 'none' | 'key' | 'rotate' | 'series' | 'prices';
type QueryName = 'symbols' | 'tz' | 'format' | 'resolution' | 'from' | 'to';

interface RouteSpec {
  readonly method: 'GET' | 'PUT' | 'POST' | 'DELETE' | 'OPTIONS';
  /** Fastify's spelling: `:name` for a path parameter, `*` for the rest of the path. */
  readonly url: string;
  readonly access: Access;
  /** The query parameters the route knows; `from` and `to` are required where listed. */
  readonly query: readonly QueryName[];
  readonly body: BodyKind;
}

const READ: readonly QueryName[] = ['symbols', 'tz', 'format', 'resolution'];
const open = (url: string, method: RouteSpec['method'] = 'GET'): RouteSpec => ({
  method,
  url,
  access: 'open',
  query: [],
  body: 'none',
});

const ROUTES: readonly RouteSpec[] = [
  open('/healthz'),
  open('/readyz'),
  open('/metrics'),
  open('/api/v1/openapi.json'),
  open('/docs'),
  open('/docs/'),
  open('/docs/static/index.html'),
  open('/docs/static/swagger-initializer.js'),
  open('/docs/json'),
  open('/docs/yaml'),
  open('/docs/static/*'),
  open('/*', 'OPTIONS'),
  { method: 'GET', url: '/api/v1/prices/today', access: 'read', query: READ, body: 'none' },
  { method: 'GET', url: '/api/v1/prices/latest', access: 'read', query: READ, body: 'none' },
  { method: 'GET', url: '/api/v1/prices/:date', access: 'read', query: READ, body: 'none' },
  { method: 'GET', url: '/api/v1/prices', access: 'read', query: ['from', 'to', ...READ], body: 'none' },
  { method: 'GET', url: '/api/v1/series', access: 'read', query: READ, body: 'none' },
  {
    method: 'GET',
    url: '/api/v1/series/:symbol',
    access: 'read',
    query: ['tz', 'format', 'resolution'],
    body: 'none',
  },
  { method: 'GET', url: '/api/v1/usage', access: 'read', query: [], body: 'none' },
  { method: 'PUT', url: '/api/v1/series/:symbol', access: 'admin', query: [], body: 'series' },
  { method: 'PUT', url: '/api/v1/series/:symbol/prices', access: 'write', query: [], body: 'prices' },
  { method: 'POST', url: '/api/v1/keys', access: 'admin', query: [], body: 'key' },
  { method: 'GET', url: '/api/v1/keys', access: 'admin', query: [], body: 'none' },
  { method: 'GET', url: '/api/v1/keys/:id', access: 'admin', query: [], body: 'none' },
  { method: 'DELETE', url: '/api/v1/keys/:id', access: 'admin', query: [], body: 'none' },
  { method: 'POST', url: '/api/v1/keys/:id/rotate', access: 'admin', query: [], body: 'rotate' },
];

const routeName = (route: RouteSpec) => `${route.method} ${route.url}`;

/** Keys of every kind and standing, made in `before`. */
interface KeyRing {
  readonly read: string;
  readonly write: string;
  readonly admin: string;
  readonly demo: string;
  readonly test: string;
  readonly revoked: string;
  readonly unknown: string;
  /**
   * Ids for the key routes, one set to revoke and one to rotate (a revoked key cannot be rotated);
   * never of a key the requests authenticate with, so that those stay alive.
   */
  readonly victims: { readonly revoke: readonly string[]; readonly rotate: readonly string[] };
  readonly revokedId: string;
}

/** The part of a key after `pp_<kind>_` (as in no-key-leaks.test.ts): masked or re-prefixed copies count too. */
function secretOf(key: string): string {
  return key.replace(/^pp_[a-z]+_/, '');
}

/** Mostly `plausible`, sometimes `hostile`: `odds` plausible ones to each hostile one. */
function mostly<T>(plausible: fc.Arbitrary<T>, hostile: fc.Arbitrary<T>, odds = 4): fc.Arbitrary<T> {
  return fc.oneof({ weight: odds, arbitrary: plausible }, { weight: 1, arbitrary: hostile });
}

// ---------------------------------------------------------------------------------------------
// Text.
// ---------------------------------------------------------------------------------------------

/** Strings that have broken URL, JSON, CSV, date and prototype-sensitive code before. */
const nasty = fc.constantFrom(
  ...['%zz', '%', '%0', '%00', '%u0041', '%C0%AF', '%FF', '%E2%82', '%ED%A0%80', '%2e%2e', '%2F', '%5C'],
  ...['..', '.', '...', '//', '\\', '\u0000', '\uD800', '\uDFFF', '\uFFFF', '\u202E', 'é', '🦀', ' ', ''],
  // `\u0024{` is Log4Shell's `${`, spelt so that it reads as no template placeholder.
  ...['<script>alert(1)</script>', "'; DROP TABLE prices; --", '\u0024{jndi:ldap://x/a}', '{{7*7}}'],
  ...['NaN', 'Infinity', '-0', '1e309', 'null', 'undefined', 'true', '[]', '{}'],
  ...['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'],
);

/** Any text: unicode, any code point, the strings above and their mixes, and very long runs. */
const fuzzText: fc.Arbitrary<string> = fc.oneof(
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
function pct(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9._~-]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Header values as Node hands them over: visible latin1 and inner blanks, trimmed. */
const headerText: fc.Arbitrary<string> = mostly(
  fc.string({
    unit: fc
      .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constant(9))
      .map((c) => String.fromCharCode(c)),
    maxLength: 40,
  }),
  fc.constantFrom('', '*', ',', ';', '"', '=', 'null', '%00', 'a'.repeat(4000)),
  3,
).map((value) => value.trim());

const headerName = mostly(
  fc.stringMatching(/^[a-z][a-z0-9-]{0,24}$/),
  fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,20}$/),
  3,
);

// ---------------------------------------------------------------------------------------------
// Values the API knows, right and wrong.
// ---------------------------------------------------------------------------------------------

/** Dates near the fake clock's today (2026-11-22), at the edges of the allowed span, and malformed. */
const dayArb = fc.oneof(
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
const symbolArb = mostly(
  fc.constantFrom(...SERIES),
  fc.oneof(
    fc.constantFrom('ZZZ1', 'NEW.SERIES_1', 'A'.repeat(32), 'A'.repeat(33), '-X', '.', 'NO1 ', 'ｎｏ１', 'İ'),
    fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,34}$/),
  ),
);

const QUERY_VALUES: Record<QueryName, fc.Arbitrary<string>> = {
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
  format: mostly(fc.constantFrom('json', 'csv'), fc.constantFrom('JSON', 'xml', 'json,csv')),
  resolution: mostly(
    fc.constantFrom('PT15M', 'PT30M', 'PT1H', 'P1D'),
    fc.constantFrom('pt1h', 'PT1M', 'P1W', 'PT0S'),
  ),
  from: mostly(fc.constantFrom('yesterday', 'today', '2026-11-20'), dayArb),
  to: mostly(fc.constantFrom('today', 'tomorrow', '2026-11-23'), dayArb),
};

/** A key as a client might hold it: right, of the wrong standing, or mangled in transit. */
function keyTextArb(ring: KeyRing, right: string): fc.Arbitrary<string> {
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

// ---------------------------------------------------------------------------------------------
// The parts of a request.
// ---------------------------------------------------------------------------------------------

interface HostileRequest {
  readonly route: string;
  readonly method: string;
  /** Path and query string as sent. */
  readonly url: string;
  /** In order; a name may repeat. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer | undefined;
  readonly remoteAddress: string;
}

type HeaderLines = [string, string][];

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;
/** Methods Node and light-my-request know but no route serves. */
const ODD_METHODS = ['TRACE', 'PROPFIND', 'MKCOL', 'SEARCH', 'QUERY', 'LOCK', 'PURGE', 'M-SEARCH', 'get'];

function methodArb(route: RouteSpec): fc.Arbitrary<string> {
  const own =
    route.method === 'GET' ? fc.constantFrom('GET', 'GET', 'GET', 'HEAD') : fc.constant(route.method);
  return mostly(own, fc.oneof(fc.constantFrom(...METHODS), fc.constantFrom(...ODD_METHODS)), 6);
}

/** The credential headers: mostly the key the route needs, else none, either form of any key, both, or junk. */
function credentialArb(ring: KeyRing, route: RouteSpec): fc.Arbitrary<HeaderLines> {
  const right = route.access === 'admin' ? ring.admin : route.access === 'write' ? ring.write : ring.read;
  const key = keyTextArb(ring, right);
  const scheme = mostly(
    fc.constantFrom('Bearer ', 'bearer ', 'BEARER '),
    fc.constantFrom('Bearer\t', 'Bearer   ', 'Basic ', 'Token ', 'Bearer', 'Bearer="', 'Bearer ,'),
  );
  const bearer = fc.tuple(scheme, key).map(([s, k]) => `${s}${k}`.trim());
  const clean = fc.constantFrom<HeaderLines>([['x-api-key', right]], [['authorization', `Bearer ${right}`]]);
  const hostile = fc.oneof(
    { weight: 2, arbitrary: fc.constant<HeaderLines>([]) },
    { weight: 6, arbitrary: key.map((k): HeaderLines => [['x-api-key', k.trim()]]) },
    { weight: 6, arbitrary: bearer.map((b): HeaderLines => [['authorization', b]]) },
    {
      weight: 1,
      arbitrary: fc.constant<HeaderLines>([
        ['x-api-key', right],
        ['authorization', `Bearer ${right}`],
      ]),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(key, bearer).map(
        ([k, b]): HeaderLines => [
          ['x-api-key', k.trim()],
          ['authorization', b],
        ],
      ),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(key, key).map(
        ([a, b]): HeaderLines => [
          ['x-api-key', a.trim()],
          ['x-api-key', b.trim()],
        ],
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom<HeaderLines>(
        [['authorization', 'Basic dXNlcjpwYXNz']],
        [['authorization', 'Bearer a b']],
        [['x-api-key', '']],
        [['X-API-KEY', right]],
        [['Authorization', `bEaReR ${right}`]],
      ),
    },
  );
  return mostly(clean, hostile, 2);
}

/** Query strings: known parameters with good and bad values, repeated, unknown ones, keys, odd separators. */
function queryArb(ring: KeyRing, route: RouteSpec): fc.Arbitrary<string> {
  const isRequired = (name: QueryName) => name === 'from' || name === 'to';
  const required = route.query.filter(isRequired);
  const optional = route.query.filter((name) => !isRequired(name));
  const knownPair = (name: QueryName) => QUERY_VALUES[name].map((value): [string, string] => [name, value]);
  const plausible = fc
    .tuple(
      fc.tuple(...required.map(knownPair)),
      optional.length > 0
        ? fc.array(fc.constantFrom(...optional).chain(knownPair), { maxLength: 3 })
        : fc.constant([]),
    )
    .map(([must, may]) => [...must, ...may]);
  const key = keyTextArb(ring, ring.read);
  const keyPair = fc.oneof(
    fc.tuple(fc.constantFrom('api_key', 'token', 'key', 'access_token', 'x-api-key', 'q'), key),
    fc.tuple(fc.constantFrom('symbols', 'tz', 'format'), key),
    fc.tuple(key, fc.constantFrom('', '1')),
  );
  const shapedName = fc.constantFrom(
    ...['symbols[]', 'tz[0]', 'a[b][c]'],
    ...['__proto__', 'constructor[prototype]', 'format.x'],
  );
  const hostilePair = fc.oneof(
    { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...READ, 'from', 'to'), fuzzText) },
    { weight: 2, arbitrary: fc.tuple(fuzzText, fuzzText) },
    { weight: 1, arbitrary: keyPair },
    { weight: 1, arbitrary: fc.tuple(shapedName, fc.constantFrom('1', 'csv', '')) },
  );
  const pairs = mostly(
    plausible,
    fc
      .tuple(plausible, fc.array(hostilePair, { minLength: 1, maxLength: 4 }), fc.boolean())
      .map(([good, bad, first]) => (first ? [...bad, ...good] : [...good, ...bad])),
    3,
  );
  // Percent-encoded mostly; else raw (unicode, `%zz`, `&` and `=` inside), a bare name, or an empty value.
  const written = ([name, value]: [string, string], style: string) => {
    if (style === 'raw') return `${name}=${value}`;
    if (style === 'bare') return pct(name);
    if (style === 'empty') return `${pct(name)}=`;
    return `${pct(name)}=${pct(value)}`;
  };
  const style = mostly(fc.constant('encoded'), fc.constantFrom('raw', 'bare', 'empty'), 6);
  const separator = mostly(fc.constant('&'), fc.constantFrom('&&', ';', '&amp;'), 8);
  const query = pairs
    .chain((list) => fc.tuple(...list.map((pair) => style.map((s) => written(pair, s)))))
    .chain((parts) => separator.map((sep) => (parts.length === 0 ? '' : `?${parts.join(sep)}`)));
  return fc.oneof(
    { weight: 12, arbitrary: query },
    { weight: 1, arbitrary: fc.constantFrom('?', '?&', '?=', '??', '?&&=&', '?#', '?%', '?a=%zz') },
  );
}

/** One path segment written by a hostile client. */
function segmentArb(ring: KeyRing): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fuzzText.map(pct) },
    { weight: 2, arbitrary: fuzzText },
    { weight: 2, arbitrary: nasty },
    { weight: 1, arbitrary: keyTextArb(ring, ring.admin).map((k) => (k.length % 2 === 0 ? k : pct(k))) },
  );
}

function paramArb(ring: KeyRing, route: RouteSpec, name: string): fc.Arbitrary<string> {
  if (name === 'date') return dayArb;
  // Prices are written to the two PT15M series whose grid the generated points lie on; series are
  // updated or created.
  if (name === 'symbol' && route.body === 'prices') return mostly(fc.constantFrom('NO1', 'de-lu'), symbolArb);
  if (name === 'symbol' && route.body === 'series') {
    return fc.oneof(symbolArb, fc.constantFrom('NEW1', 'new.series_2', 'X-3', '0'));
  }
  if (name === 'symbol') return symbolArb;
  const { revoke, rotate } = ring.victims;
  const ids = route.method === 'DELETE' ? revoke : route.method === 'POST' ? rotate : [...revoke, ...rotate];
  return mostly(fc.constantFrom(...ids, ring.revokedId), fc.stringMatching(/^key_[A-Za-z0-9]{0,20}$/));
}

/** What `/docs/static/*` may be asked for: files of swagger-ui's folder, and ways out of it. */
const DOC_FILES = mostly(
  fc.constantFrom('swagger-ui.css', 'favicon-32x32.png', 'index.css', 'oauth2-redirect.html'),
  fc.constantFrom(
    ...['../../../package.json', '%2e%2e/%2e%2e/%2e%2e/package.json', '..%2f..%2f..%2fpackage.json'],
    ...['..%5c..%5cpackage.json', '%00', '.', '', 'theme/x.css', 'missing.js', '.env'],
  ),
  2,
);

function pathArb(ring: KeyRing, route: RouteSpec): fc.Arbitrary<string> {
  const segment = segmentArb(ring);
  if (route.url === '/*') {
    const paths = ROUTES.filter((r) => r !== route).map((r) => r.url.replace(/\/[:*].*$/, ''));
    return mostly(
      fc.constantFrom(...paths),
      segment.map((s) => `/${s}`),
      3,
    );
  }
  const parts = route.url
    .split('/')
    .slice(1)
    .map((part) => {
      if (part === '*') return mostly(DOC_FILES, segment);
      if (part.startsWith(':')) return mostly(paramArb(ring, route, part.slice(1)), segment, 3);
      const variants = fc.constantFrom(
        part.toUpperCase(),
        `${part}.`,
        part.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`),
      );
      return mostly(fc.constant(part), fc.oneof(variants, segment), 40);
    });
  const prefix = mostly(fc.constant(''), fc.constantFrom('/', '/.', '/api/v1/..', '/%2e'), 30);
  const suffix = mostly(
    fc.constant(''),
    fc.constantFrom('/', '//', '/.', '/..', '/x', '%2F', ';a=b', '.json', '%00'),
    20,
  );
  return fc
    .tuple(prefix, fc.tuple(...parts), suffix)
    .map(([p, segments, s]) => `${p}/${segments.join('/')}${s}`);
}

/** Headers besides the key and content type: the ones the app reads, and any others. */
const otherHeadersArb: fc.Arbitrary<HeaderLines> = (() => {
  const accept = mostly(
    fc.constantFrom('application/json', 'text/csv', '*/*', 'application/json;q=0.5, text/csv;q=0.9'),
    fc.oneof(
      fc.constantFrom(...['image/png', 'text/*', 'application/problem+json', 'a/b/c;;q=x', ';', '*']),
      fc.constantFrom('text/csv;q=0, application/json;q=0', 'text/html,application/xml;q=0.9,*/*;q=0.8'),
      headerText,
    ),
  );
  const encoding = mostly(
    fc.constantFrom('gzip', 'br', 'deflate', 'gzip, deflate, br'),
    fc.oneof(fc.constantFrom('identity;q=0', '*;q=0', 'br;q=1.5', 'zstd', 'gzip;q=x', ','), headerText),
  );
  const etag = mostly(
    fc.constantFrom('*', '"x"', 'W/"x"'),
    fc.oneof(fc.constantFrom('"json-abc", W/"csv-def"', '""', 'W/', '"'.repeat(50)), headerText),
  );
  const known = fc.oneof(
    fc.tuple(fc.constant('accept'), accept),
    fc.tuple(fc.constant('accept-encoding'), encoding),
    fc.tuple(fc.constant('if-none-match'), etag),
    fc.tuple(
      fc.constant('origin'),
      fc.oneof(fc.constantFrom('https://dashboard.example', 'null', 'file://'), headerText),
    ),
    fc.tuple(
      fc.constant('access-control-request-method'),
      fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'BREW'),
    ),
    fc.tuple(
      fc.constant('access-control-request-headers'),
      fc.constantFrom('x-api-key', 'authorization, content-type', 'x-evil'),
    ),
    fc.tuple(
      fc.constantFrom('x-forwarded-for', 'forwarded', 'x-real-ip'),
      fc.oneof(fc.ipV4(), fc.ipV6(), headerText),
    ),
    fc.tuple(fc.constant('x-request-id'), headerText),
    fc.tuple(
      fc.constantFrom('range', 'if-modified-since', 'if-match', 'cookie', 'user-agent', 'referer'),
      headerText,
    ),
    fc.tuple(fc.constant('x-http-method-override'), fc.constantFrom('DELETE', 'PUT', 'GET')),
  );
  return fc.array(mostly(known, fc.tuple(headerName, headerText), 3), { maxLength: 5 });
})();

// Bodies ------------------------------------------------------------------------------------------

interface Body {
  readonly bytes: Buffer;
  /** What the bytes are (not necessarily what the request will say they are). */
  readonly media: 'json' | 'csv' | 'other';
}

const jsonBody = (value: unknown): Body => ({
  bytes: Buffer.from(JSON.stringify(value) ?? ''),
  media: 'json',
});

/**
 * A JSON object body: every field right (the optional ones may be left out), or all right but one,
 * which reaches each field's own check, or anything: fields right or wrong or missing, and unknown
 * fields besides.
 */
function objectBody(
  fields: Record<string, [right: fc.Arbitrary<unknown>, wrong: fc.Arbitrary<unknown>]>,
  required: string[],
): fc.Arbitrary<Body> {
  const right = fc.record(Object.fromEntries(Object.entries(fields).map(([name, [good]]) => [name, good])), {
    requiredKeys: required,
  });
  const wrongField = fc
    .constantFrom(...Object.entries(fields))
    .chain(([name, [, wrong]]) => wrong.map((value) => [name, value] as const));
  const oneWrong = fc.tuple(right, wrongField).map(([value, [name, wrong]]) => ({ ...value, [name]: wrong }));
  const mixed = Object.fromEntries(
    Object.entries(fields).map(([name, [good, bad]]) => [name, mostly(good, bad, 2)]),
  );
  const extra = fc.dictionary(fuzzText, fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 });
  const anything = fc
    .tuple(fc.record(mixed, { requiredKeys: [] }), extra)
    .map(([value, more]) => ({ ...value, ...more }));
  return fc
    .oneof(
      { weight: 2, arbitrary: right },
      { weight: 3, arbitrary: oneWrong },
      { weight: 1, arbitrary: anything },
    )
    .map(jsonBody);
}

/** A key-creation body; `key` puts keys where text goes, as a careless operator might. */
const keyBodyArb = (key: fc.Arbitrary<string>) =>
  objectBody(
    {
      name: [
        fc.constantFrom('dashboard', 'home assistant', 'ünïcode ✓'),
        fc.oneof(fuzzText, key, fc.integer(), fc.constant(' '), fc.constant('x'.repeat(201))),
      ],
      tier: [
        fc.constantFrom('free', 'pro', 'demo', 'enterprise'),
        fc.oneof(
          {
            weight: 3,
            arbitrary: fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'),
          },
          { weight: 1, arbitrary: fc.constantFrom('nope', '', 'FREE', 'free ') },
          { weight: 1, arbitrary: fuzzText },
        ),
      ],
      scopes: [
        fc.subarray(['read', 'write', 'admin'], { minLength: 1 }),
        fc.oneof(
          fc.array(fc.constantFrom('read', 'root', 'READ', ''), { maxLength: 4 }),
          fc.constantFrom('admin', null, {}),
        ),
      ],
      expiresAt: [
        fc.constantFrom('2030-01-01T00:00:00Z', '2027-06-01T12:00:00+02:00', null),
        fc.oneof(
          fc.constantFrom(
            ...['2020-01-01T00:00:00Z', '2030-02-30T00:00:00Z'],
            ...['+275760-09-13T00:00:00Z', '2030-01-01'],
          ),
          fc.constantFrom(0, -1, 1e300, 'soon'),
          fuzzText,
        ),
      ],
    },
    ['name', 'tier'],
  );

const rotateBodyArb = objectBody(
  {
    graceSeconds: [
      fc.integer({ min: 60, max: 2_592_000 }),
      fc.oneof(
        fc.integer({ min: -10, max: 3_000_000 }),
        fc.constantFrom(0, 2_592_001, 1.5, 1e21, -0, '60', null, []),
      ),
    ],
  },
  [],
);

/**
 * A series body: every field (a new series, or one that moves an existing series' grid), the fields
 * that leave the grid alone (an update), each right or wrong.
 */
const seriesBodyArb = (key: fc.Arbitrary<string>) => {
  const fields = {
    name: [
      fc.constantFrom('Oslo day-ahead', 'Test series', 'Ünïcode ✓'),
      fc.oneof(fc.constantFrom(' padded', 'x'.repeat(201), 'tab\there'), fuzzText, key),
    ],
    kind: [
      fc.constantFrom('electricity', 'fx', 'crypto'),
      fc.oneof(fc.constantFrom('Electricity', 'a'.repeat(33)), fuzzText),
    ],
    currency: [
      fc.constantFrom('EUR', 'eur', 'BTC', 'XAU'),
      fc.oneof(fc.constantFrom('1INCH', '€', 'EURO'), fuzzText),
    ],
    unit: [
      fc.constantFrom('MWh', 'share', 'troy_oz'),
      fc.oneof(fc.constantFrom(' MWh', 'x'.repeat(33)), fuzzText, key),
    ],
  } satisfies Record<string, [fc.Arbitrary<unknown>, fc.Arbitrary<unknown>]>;
  const grid = {
    timezone: [
      fc.constantFrom('Europe/Oslo', 'UTC', 'Asia/Kathmandu', 'US/Eastern'),
      fc.oneof(QUERY_VALUES.tz, fuzzText),
    ],
    resolution: [
      fc.constantFrom('PT15M', 'PT30M', 'PT1H', 'P1D'),
      fc.oneof(QUERY_VALUES.resolution, fuzzText),
    ],
  } satisfies Record<string, [fc.Arbitrary<unknown>, fc.Arbitrary<unknown>]>;
  return fc.oneof(
    objectBody({ ...fields, ...grid }, ['name', 'kind', 'currency', 'unit', 'timezone', 'resolution']),
    objectBody(fields, []),
  );
};

/** Starts on the PT15M grid of NO1 and DE-LU (UTC+1 in November), off it, and not timestamps at all. */
const startArb = mostly(
  fc
    .tuple(
      fc.integer({ min: 20, max: 24 }),
      fc.integer({ min: 0, max: 23 }),
      fc.constantFrom('00', '15', '30', '45'),
    )
    .map(([day, hour, minute]) => `2026-11-${day}T${String(hour).padStart(2, '0')}:${minute}:00+01:00`),
  fc.oneof(
    fc.constantFrom(
      ...['2026-11-22T00:07:00+01:00', '2026-11-21T23:00:00Z', '2026-11-22T00:00:00'],
      ...['2026-10-25T02:00:00+02:00', '2026-03-29T02:30:00+01:00', '2026-11-22T24:00:00+01:00'],
      ...['1899-12-31T23:00:00Z', '9999-12-31T23:45:00Z', '2026-11-22T00:00:00.000000001+01:00'],
    ),
    fuzzText,
  ),
);
const priceArb = mostly(
  fc.constantFrom('41.27', '-0.5', '0', '1e3', '123456789012345', '-12.5'),
  fc.oneof(
    fc.constantFrom('1234567890123456', '1e309', 'NaN', '-', '0x10', '１２', '41,27', ''),
    fc.double().map(String),
    fuzzText,
  ),
);

/** A CSV body: a header row and points, right or wrong; `key` puts keys into cells. */
const csvBodyArb = (key: fc.Arbitrary<string>) =>
  fc
    .tuple(
      mostly<readonly string[]>(
        fc.constantFrom(
          ['start', 'price'],
          ['symbol', 'date', 'start', 'end', 'price', 'currency', 'unit'],
          ['price', 'start'],
        ),
        fc.array(mostly(fc.constantFrom('start', 'price', 'end', 'Price', 'START', '"start"'), fuzzText), {
          maxLength: 5,
        }),
      ),
      fc.array(
        mostly<{ start: string; price: string } | string[]>(
          fc.tuple(startArb, priceArb).map(([start, price]) => ({ start, price })),
          fc.array(
            fc.oneof(startArb, priceArb, key, fc.constantFrom('EUR', 'MWh', '"', '""', '"a,b"', '"\n"')),
            {
              maxLength: 8,
            },
          ),
        ),
        { maxLength: 8 },
      ),
      mostly(fc.constantFrom('\n', '\r\n'), fc.constantFrom('\r', '\n\n')),
      fc.boolean(),
    )
    .map(([header, rows, eol, bom]): Body => {
      const line = (row: (typeof rows)[number]) =>
        Array.isArray(row)
          ? row.join(',')
          : header
              .map((column) => (column === 'start' ? row.start : column === 'price' ? row.price : ''))
              .join(',');
      const text = [header.join(','), ...rows.map(line)].join(eol);
      return { bytes: Buffer.from((bom ? '\uFEFF' : '') + text), media: 'csv' };
    });

/** A JSON Lines body (or a one-point-per-line array): points right or wrong; `key` puts keys into fields. */
const jsonLinesBodyArb = (key: fc.Arbitrary<string>) =>
  fc
    .tuple(
      fc.array(
        mostly(
          fc
            .record({
              start: startArb,
              price: mostly<number | string>(fc.double({ min: -500, max: 500, noNaN: true }), priceArb),
            })
            .map((point) => JSON.stringify(point)),
          fc.oneof(
            fc
              .record(
                {
                  start: startArb,
                  price: priceArb,
                  symbol: fc.oneof(symbolArb, key),
                  currency: fc.constantFrom('EUR', 'NOK', 1),
                  unit: fc.oneof(fc.constantFrom('MWh', 'kWh'), key),
                },
                { requiredKeys: [] },
              )
              .map((point) => JSON.stringify(point)),
            fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v) ?? ''),
            fuzzText,
          ),
        ),
        { maxLength: 8 },
      ),
      fc.boolean(),
    )
    .map(([lines, wrapped]): Body => {
      const text = wrapped ? `[\n${lines.join(',\n')}\n]` : lines.join('\n');
      return { bytes: Buffer.from(text), media: 'json' };
    });

/** Bodies any route may be sent: JSON of any shape, bytes, hostile JSON, and ones over the size limit. */
const junkBodyArb: fc.Arbitrary<Body> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(jsonBody) },
  {
    weight: 3,
    arbitrary: fc
      .uint8Array({ maxLength: 400 })
      .map((b): Body => ({ bytes: Buffer.from(b), media: 'other' })),
  },
  { weight: 2, arbitrary: csvBodyArb(fc.constant('')) },
  {
    weight: 2,
    arbitrary: fc.constantFrom<Body>(
      ...[
        '{"__proto__":{"polluted":true},"name":"x"}',
        '{"constructor":{"prototype":{"polluted":true}}}',
        '{"name":"a","name":"b"}',
        '{"name":"\\ud800"}',
        `${'['.repeat(20_000)}${']'.repeat(20_000)}`,
        `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`,
        '',
        '\uFEFF{}',
        '{"graceSeconds": 1',
        'null',
      ].map((text): Body => ({ bytes: Buffer.from(text), media: 'json' })),
      { bytes: Buffer.from([0xef, 0xbb, 0xbf, 0xff, 0xfe, 0x00]), media: 'other' },
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('x', '{"a":"', '1,2\n'), fc.integer({ min: 1_048_577, max: 1_200_000 }))
      .map(
        ([unit, n]): Body => ({
          bytes: Buffer.from(unit.repeat(Math.ceil(n / unit.length))),
          media: 'other',
        }),
      ),
  },
);

function specificBodyArb(ring: KeyRing, kind: Exclude<BodyKind, 'none'>): fc.Arbitrary<Body> {
  const key = keyTextArb(ring, ring.admin);
  if (kind === 'key') return keyBodyArb(key);
  if (kind === 'rotate') return rotateBodyArb;
  if (kind === 'series') return seriesBodyArb(key);
  return fc.oneof(csvBodyArb(key), jsonLinesBodyArb(key));
}

/** A body cut at a random byte: JSON and CSV that end mid-token. */
function truncated(body: fc.Arbitrary<Body>): fc.Arbitrary<Body> {
  return fc
    .tuple(body, fc.double({ min: 0, max: 1, noNaN: true }))
    .map(([b, at]) => ({ ...b, bytes: b.bytes.subarray(0, Math.floor(b.bytes.length * at)) }));
}

const CONTENT_TYPES = fc.constantFrom(
  ...['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json;;;'],
  ...['application/json; charset=utf-16', 'text/csv', 'text/csv; charset=utf-8', 'TEXT/CSV; header=present'],
  ...['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', '*/*', ''],
  ...['application/problem+json', 'application/xml', 'application/octet-stream', 'application/', '/json'],
  ...['application/json, text/csv', 'text/csv; boundary="'],
);

/** The body and the content type it is sent with: its own mostly, another often, sometimes none. */
function bodyArb(
  ring: KeyRing,
  route: RouteSpec,
): fc.Arbitrary<{ bytes: Buffer; contentType: string | undefined } | undefined> {
  const own = (media: Body['media']) =>
    media === 'csv' ? 'text/csv' : media === 'json' ? 'application/json' : 'application/octet-stream';
  const body: fc.Arbitrary<Body | undefined> =
    route.body === 'none'
      ? mostly(fc.constant(undefined), junkBodyArb, 5)
      : fc.oneof(
          { weight: 8, arbitrary: specificBodyArb(ring, route.body) },
          { weight: 1, arbitrary: truncated(specificBodyArb(ring, route.body)) },
          { weight: 2, arbitrary: junkBodyArb },
          { weight: route.body === 'rotate' ? 2 : 1, arbitrary: fc.constant(undefined) },
        );
  return fc.tuple(body, fc.nat(19), CONTENT_TYPES).map(([b, roll, other]) => {
    if (b === undefined) return roll === 0 ? { bytes: Buffer.alloc(0), contentType: other } : undefined;
    return { bytes: b.bytes, contentType: roll < 16 ? own(b.media) : roll < 19 ? other : undefined };
  });
}

const addressArb = fc.oneof(
  { weight: 4, arbitrary: fc.ipV4() },
  { weight: 2, arbitrary: fc.ipV6() },
  { weight: 1, arbitrary: fc.constantFrom('127.0.0.1', '::1', '::ffff:203.0.113.7', 'fe80::1%eth0') },
);

/** A whole request to `route`. */
function requestArb(ring: KeyRing, route: RouteSpec): fc.Arbitrary<HostileRequest> {
  return fc
    .record({
      method: methodArb(route),
      path: pathArb(ring, route),
      query: queryArb(ring, route),
      credentials:
        route.access === 'open'
          ? mostly(fc.constant<HeaderLines>([]), credentialArb(ring, route), 2)
          : credentialArb(ring, route),
      others: otherHeadersArb,
      body: bodyArb(ring, route),
      contentLength: mostly(
        fc.constant(null),
        fc.constantFrom('0', '1', '-1', 'abc', '99999999999', '1e3', ' 5'),
        20,
      ),
      remoteAddress: addressArb,
    })
    .map(({ method, path, query, credentials, others, body, contentLength, remoteAddress }) => {
      const headers: HeaderLines = [...credentials, ...others];
      if (body?.contentType !== undefined) headers.push(['content-type', body.contentType]);
      if (contentLength !== null) headers.push(['content-length', contentLength]);
      return {
        route: routeName(route),
        method,
        url: `${path}${query}`,
        headers,
        body: body?.bytes,
        remoteAddress,
      };
    });
}

// ---------------------------------------------------------------------------------------------
// Sending, and what every answer must be.
// ---------------------------------------------------------------------------------------------

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | number | undefined>;
  readonly body: Buffer;
}

/** Header names whose repeats Node drops, keeping the first (`http.IncomingMessage.headers`). */
const FIRST_WINS = new Set(
  ['age', 'authorization', 'content-length', 'content-type', 'etag', 'expires', 'from', 'host']
    .concat(['if-modified-since', 'if-unmodified-since', 'last-modified', 'location', 'max-forwards'])
    .concat(['proxy-authorization', 'referer', 'retry-after', 'server', 'user-agent']),
);

/** The headers object Node would build from these header lines. */
function nodeHeaders(lines: HostileRequest['headers']): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [rawName, value] of lines) {
    const name = rawName.toLowerCase();
    const held = out[name];
    if (held === undefined) out[name] = name === 'set-cookie' ? [value] : value;
    else if (Array.isArray(held)) held.push(value);
    else if (!FIRST_WINS.has(name)) out[name] = `${held}${name === 'cookie' ? '; ' : ', '}${value}`;
  }
  return out;
}

/** Percent-decodes byte by byte, as leniently as `maskKeysInUrl`, so an encoded key is seen too. */
function lenientDecode(text: string): string {
  return text.replace(/%[0-9A-Fa-f]{2}/g, (m) => String.fromCharCode(Number.parseInt(m.slice(1), 16)));
}

/**
 * The secrets a request carries: the run after every `pp_<kind>_` anywhere in it (URL decoded,
 * header values, body), overlapping ones included, so a key written twice in a row counts twice;
 * and a known key's own secret where a run starts with it. Runs under 16 characters are left out:
 * they would match innocent text by chance.
 */
function secretsIn(request: HostileRequest, ring: KeyRing): string[] {
  const parts = [lenientDecode(request.url), ...request.headers.map(([, value]) => value)];
  if (request.body) parts.push(request.body.toString('utf8'), request.body.toString('latin1'));
  const found = new Set<string>();
  for (const match of parts.join('\n').matchAll(/(?=pp_(?:live|test|demo)_([0-9A-Za-z]{16,}))/g)) {
    found.add(match[1] as string);
  }
  const known = [ring.read, ring.write, ring.admin, ring.demo, ring.test, ring.revoked, ring.unknown].map(
    secretOf,
  );
  for (const secret of known) if ([...found].some((run) => run.startsWith(secret))) found.add(secret);
  return [...found];
}

function bodyText(answer: Answer): string {
  const coding = String(answer.headers['content-encoding'] ?? '');
  // A HEAD answer carries the headers of the GET, content-encoding included, and no body.
  if (answer.body.length === 0) return '';
  if (coding === 'br') return brotliDecompressSync(answer.body).toString('utf8');
  if (coding === 'gzip') return gunzipSync(answer.body).toString('utf8');
  if (coding === 'deflate') return inflateSync(answer.body).toString('utf8');
  return answer.body.toString('utf8');
}

/** Statuses seen per route, to prove the requests reached the handlers and not only the guards. */
const seen = new Map<string, Set<number>>();

/**
 * What DESIGN section 5 promises of every answer, whatever was asked. The closed list of codes is
 * the source's `ERROR_CODES`, which errors.test.ts proves equal to the one DESIGN writes down.
 */
function checkAnswer(request: HostileRequest, answer: Answer, ring: KeyRing): void {
  const where = `${request.method} ${request.url.slice(0, 300)} (${request.route})`;
  const body = bodyText(answer);
  assert.ok(answer.status < 500, `${where} answered ${answer.status}: ${body.slice(0, 500)}`);
  if (answer.status >= 400) {
    const type = String(answer.headers['content-type']);
    assert.match(type, /^application\/problem\+json(;|$)/, `${where} answered ${answer.status} as ${type}`);
    if (request.method !== 'HEAD') {
      let problem: Record<string, unknown> = {};
      assert.doesNotThrow(
        () => {
          problem = JSON.parse(body) as Record<string, unknown>;
        },
        `${where}: the ${answer.status} body is JSON: ${body.slice(0, 300)}`,
      );
      for (const member of ['type', 'title', 'detail', 'instance', 'code', 'requestId']) {
        assert.equal(
          typeof problem[member],
          'string',
          `${where}: "${member}" is a string in ${body.slice(0, 500)}`,
        );
      }
      assert.equal(problem.status, answer.status, `${where}: "status" is the answer's status`);
      const code = problem.code as ErrorCode;
      assert.ok(ERROR_CODES.includes(code), `${where}: ${code} is a code of DESIGN section 5`);
      assert.equal(errorStatus(code), answer.status, `${where}: ${code} comes with its own status`);
      assert.equal(
        problem.requestId,
        answer.headers['x-request-id'],
        `${where}: requestId is the x-request-id`,
      );
    }
  }
  const headers = JSON.stringify(answer.headers);
  for (const secret of secretsIn(request, ring)) {
    assert.ok(
      !body.includes(secret),
      `${where}: the body holds a key the request carried: ${body.slice(0, 500)}`,
    );
    assert.ok(!headers.includes(secret), `${where}: a header holds a key the request carried: ${headers}`);
  }
  const statuses = seen.get(request.route) ?? new Set<number>();
  seen.set(request.route, statuses.add(answer.status));
}

/**
 * What a client does next with what a write accepted: use the key it was just given, read the
 * series it just made or the prices it just wrote. Whatever a write lets in must be servable too.
 */
function followUps(request: HostileRequest, answer: Answer, ring: KeyRing): HostileRequest[] {
  // Only a write the write route itself accepted (not a preflight's 204 on the same path).
  const writes = ROUTES.filter((route) => route.body !== 'none').map(routeName);
  if (!writes.includes(request.route) || !request.route.startsWith(`${request.method} `)) return [];
  if (answer.status !== 200 && answer.status !== 201) return [];
  const read = (url: string, key = ring.read): HostileRequest => ({
    route: `${request.route}, then GET`,
    method: 'GET',
    url,
    headers: [['x-api-key', key]],
    body: undefined,
    remoteAddress: request.remoteAddress,
  });
  const written = JSON.parse(bodyText(answer)) as { key?: unknown; symbol?: unknown };
  if (typeof written.key === 'string') {
    const urls = ['/api/v1/usage', '/api/v1/prices/today?symbols=NO1', '/api/v1/series/NO1', '/api/v1/keys'];
    return urls.map((url) => read(url, written.key as string));
  }
  if (typeof written.symbol === 'string') {
    const symbols = `symbols=${pct(written.symbol)}`;
    const urls = [`/api/v1/series/${pct(written.symbol)}`, `/api/v1/series?${symbols}&format=csv`];
    urls.push(`/api/v1/prices/today?${symbols}`, `/api/v1/prices/latest?${symbols}&tz=Asia/Kathmandu`);
    urls.push(`/api/v1/prices?from=2026-11-20&to=2026-11-24&${symbols}&resolution=PT1H&format=csv`);
    return urls.map((url) => read(url));
  }
  return [];
}

// ---------------------------------------------------------------------------------------------
// The properties.
// ---------------------------------------------------------------------------------------------

describe('hostile requests', () => {
  let h: Harness;
  let client: Awaited<ReturnType<typeof listenHttps>>;
  let ring: KeyRing;
  const crashes: unknown[] = [];
  const onCrash = (error: unknown) => crashes.push(error);

  before(async () => {
    process.on('uncaughtException', onCrash);
    process.on('unhandledRejection', onCrash);
    h = await createHarness({ https: true });
    client = await listenHttps(h, 4);
    const make = (scopes: ('read' | 'write' | 'admin')[], kind: 'live' | 'test' = 'live') =>
      h.createKey({ tier: 'enterprise', scopes, kind });
    const revoked = await make(['admin']);
    await h.stores.keys.revoke(revoked.id, h.clock.now);
    const victims = async () => (await Promise.all([1, 2, 3, 4].map(() => make(['read'])))).map((v) => v.id);
    ring = {
      read: (await make(['read'])).key,
      write: (await make(['write'])).key,
      admin: (await make(['admin'])).key,
      demo: h.demoKey,
      test: (await make(['read'], 'test')).key,
      revoked: revoked.key,
      unknown: generateKey('live'),
      victims: { revoke: await victims(), rotate: await victims() },
      revokedId: revoked.id,
    };
  });
  after(async () => {
    process.off('uncaughtException', onCrash);
    process.off('unhandledRejection', onCrash);
    await client.close();
    await h.close();
  });

  /** One request through `app.inject`; the fake clock moves a second, so no limit runs dry. */
  async function viaInject(request: HostileRequest): Promise<Answer> {
    h.clock.advance(1000);
    const response = await h.app.inject({
      method: request.method as InjectOptions['method'],
      url: request.url,
      headers: nodeHeaders(request.headers),
      remoteAddress: request.remoteAddress,
      ...(request.body && { payload: request.body }),
    });
    return { status: response.statusCode, headers: response.headers, body: response.rawPayload };
  }

  test('the route list holds every operation of the OpenAPI document, and each is a route of the app', async () => {
    const response = await h.app.inject({ url: '/api/v1/openapi.json' });
    const document = response.json() as { paths: Record<string, Record<string, unknown>> };
    const listed = new Set(ROUTES.map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, '{$1}')}`));
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const method of Object.keys(operations)) {
        assert.ok(
          listed.has(`${method.toUpperCase()} ${path}`),
          `${method.toUpperCase()} ${path} is fuzzed here`,
        );
      }
    }
    for (const route of ROUTES) {
      assert.ok(
        h.app.hasRoute({ method: route.method, url: route.url }),
        `${routeName(route)} is a route of the app`,
      );
    }
  });

  for (const route of ROUTES) {
    test(`${routeName(route)}: no 5xx, every error problem+json with a documented code, no key echoed`, async () => {
      await fc.assert(
        fc.asyncProperty(requestArb(ring, route), async (request) => {
          const answer = await viaInject(request);
          checkAnswer(request, answer, ring);
          for (const next of followUps(request, answer, ring)) checkAnswer(next, await viaInject(next), ring);
        }),
        { numRuns: route.body === 'none' ? RUNS.read : RUNS.write, seed: SEED },
      );
    });
  }

  test('over real HTTPS, raw request targets and repeated header lines, each sent twice (the fast path answers the second)', async () => {
    /** What undici and Node's HTTP parser pass unchanged: printable ASCII; the rest percent-encoded. */
    const rawTarget = (url: string) => url.replace(/[^\x21-\x7e]/gu, (c) => pct(c));
    const token = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
    // Headers undici sets itself or refuses to send.
    const clientOwned = new Set([
      'host',
      'connection',
      'transfer-encoding',
      'keep-alive',
      'upgrade',
      'expect',
    ]);
    for (const name of ['content-length', 'te', 'trailer']) clientOwned.add(name);
    const arb = fc.constantFrom(...ROUTES).chain((route) => requestArb(ring, route));
    await fc.assert(
      fc.asyncProperty(arb, async (generated) => {
        const method = (METHODS as readonly string[]).includes(generated.method) ? generated.method : 'GET';
        const request: HostileRequest = {
          ...generated,
          method,
          url: rawTarget(generated.url),
          headers: generated.headers.filter(
            ([name]) => token.test(name) && !clientOwned.has(name.toLowerCase()),
          ),
          body: method === 'GET' || method === 'HEAD' ? undefined : generated.body,
          remoteAddress: '127.0.0.1',
        };
        // Node refuses request heads over 16 KiB before the app sees them: hostile-connections.test.ts.
        fc.pre(
          request.url.length + request.headers.reduce((n, [k, v]) => n + k.length + v.length + 4, 0) < 15_000,
        );
        const headers: Record<string, string[]> = {};
        for (const [name, value] of request.headers) {
          headers[name.toLowerCase()] = [...(headers[name.toLowerCase()] ?? []), value];
        }
        // A new minute each run: every request comes from one address, whose failed logins are limited.
        h.clock.advance(61_000);
        for (let i = 0; i < 2; i++) {
          const response = await client.agent.request({
            origin: client.base,
            path: request.url,
            method,
            headers,
            ...(request.body && { body: request.body }),
          });
          const body = Buffer.from(await response.body.arrayBuffer());
          checkAnswer(request, { status: response.statusCode, headers: response.headers, body }, ring);
        }
      }),
      { numRuns: RUNS.https, seed: SEED },
    );
  });

  test('the requests reached every handler: each route answered 2xx at least once', () => {
    for (const route of ROUTES) {
      const statuses = [...(seen.get(routeName(route)) ?? [])];
      assert.ok(
        statuses.some((s) => s >= 200 && s < 400),
        `${routeName(route)} answered ${statuses.sort().join(', ')}`,
      );
    }
  });

  test('afterwards the process is up: it answers normal requests, and nothing was thrown uncaught', async () => {
    const health = await h.app.inject({ url: '/healthz' });
    assert.equal(health.statusCode, 200, `healthz: ${health.body}`);
    const today = await h.app.inject({ url: '/api/v1/prices/today', headers: { 'x-api-key': ring.read } });
    assert.equal(today.statusCode, 200, `today through inject: ${today.body}`);
    const overHttps = await client.get('/api/v1/prices/today?symbols=NO1', {
      authorization: `Bearer ${ring.read}`,
    });
    assert.equal(overHttps.status, 200, `today over HTTPS: ${overHttps.text}`);
    assert.deepEqual(crashes, [], 'no uncaught exception or unhandled rejection during the run');
    const errors = h.logs.filter((line) => Number(line.level) >= 50);
    assert.deepEqual(errors, [], 'the server logged no error');
  });
});

// ---------------------------------------------------------------------------------------------
// What the properties found, each pinned by a plain test.
// ---------------------------------------------------------------------------------------------

describe('bugs the hostile requests found', () => {
  let h: Harness;
  let admin: string;
  const asAdmin = (options: InjectOptions) =>
    h.app.inject({ ...options, headers: { 'x-api-key': admin, ...options.headers } });

  before(async () => {
    h = await createHarness();
    admin = (await h.createKey({ tier: 'enterprise', scopes: ['admin'] })).key;
  });
  after(() => h.close());

  test('a key pasted twice in a row is masked as two keys, not left as "_live_<secret>" after the first', async () => {
    const key = generateKey('live');
    assert.equal(maskKeys(`${key}${key}`), 'pp_***pp_***', 'both copies are masked');
    const response = await asAdmin({ url: `/api/v1/keys/${key}${key}` });
    assert.equal(response.statusCode, 404, response.body);
    assert.ok(!response.body.includes(secretOf(key)), `no secret in ${response.body}`);
  });

  test('the docs redirect from static/index.html drops the query string: no key in Location, no loop', async () => {
    const key = generateKey('live');
    const response = await h.app.inject({ url: `/docs/static/index.html?api_key=${key}` });
    assert.equal(response.statusCode, 302, response.body);
    assert.equal(response.headers.location, '/docs/', 'redirected to the page, without the query');
    assert.ok(!JSON.stringify(response.headers).includes(secretOf(key)), 'no secret in any header');
    const page = await h.app.inject({ url: String(response.headers.location) });
    assert.equal(page.statusCode, 200, 'the redirect leads to the page');
  });

  test('a tier named after an Object.prototype member is refused: such a key would answer 500 to every request', async () => {
    for (const tier of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const response = await asAdmin({
        method: 'POST',
        url: '/api/v1/keys',
        payload: { name: 'probe', tier },
      });
      assert.equal(response.statusCode, 400, `${tier}: ${response.body}`);
      assert.equal(
        (response.json() as { parameter?: string }).parameter,
        'tier',
        `${tier}: the tier is named`,
      );
    }
  });

  test('a key stored with such a tier (by an older version) is refused with 503, as a tier no longer configured', async () => {
    const { id } = await h.createKey({ tier: 'free' });
    const record = await h.stores.keys.get(id);
    assert.ok(record, 'the key was stored');
    const limiter = createRateLimiter({
      store: h.stores.rateLimits,
      tiers: h.config.tiers,
      clock: h.clock.read,
    });
    assert.throws(
      () => limiter.tierOf({ ...record, tier: 'constructor' }),
      (error: unknown) => error instanceof ApiError && error.code === 'service_unavailable',
      'an inherited name is no tier',
    );
  });

  test('a key or series name that holds a key is refused, so it is neither stored in clear nor listed', async () => {
    const key = generateKey('live');
    const created = await asAdmin({
      method: 'POST',
      url: '/api/v1/keys',
      payload: { name: `ci ${key}`, tier: 'free' },
    });
    assert.equal(created.statusCode, 400, created.body);
    assert.equal((created.json() as { parameter?: string }).parameter, 'name', 'the name is named');
    const series = await asAdmin({
      method: 'PUT',
      url: '/api/v1/series/LEAK1',
      payload: { name: key, kind: 'fx', currency: 'EUR', unit: 'MWh', timezone: 'UTC', resolution: 'PT1H' },
    });
    assert.equal(series.statusCode, 400, series.body);
    assert.equal((series.json() as { parameter?: string }).parameter, 'name', 'the name is named');
    const listed = await asAdmin({ url: '/api/v1/keys' });
    for (const answer of [created, series, listed]) {
      assert.ok(!answer.body.includes(secretOf(key)), `no secret in ${answer.body.slice(0, 300)}`);
    }
  });
});
