/**
 * The parts of a hostile request before its body (method, keys, query, path, headers), and whole
 * requests.
 */
import fc from 'fast-check';
import { bodyArb } from './hostile-request-bodies.js';
import {
  FUZZ_EVENT_ID,
  type KeyRing,
  mostly,
  type QueryName,
  READ,
  ROUTES,
  type RouteSpec,
  routeName,
} from './hostile-routes.js';
import {
  dayArb,
  fuzzText,
  headerName,
  headerText,
  keyTextArb,
  nasty,
  pct,
  QUERY_VALUES,
  symbolArb,
} from './hostile-values.js';

export interface HostileRequest {
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

export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;
/** Methods Node and light-my-request know but no route serves. */
const ODD_METHODS = ['TRACE', 'PROPFIND', 'MKCOL', 'SEARCH', 'QUERY', 'LOCK', 'PURGE', 'M-SEARCH', 'get'];

function methodArb(route: RouteSpec): fc.Arbitrary<string> {
  const own =
    route.method === 'GET' ? fc.constantFrom('GET', 'GET', 'GET', 'HEAD') : fc.constant(route.method);
  return mostly(own, fc.oneof(fc.constantFrom(...METHODS), fc.constantFrom(...ODD_METHODS)), 6);
}

/** The credential headers: mostly the key the route needs, else none, either form of any key, both, or junk. */
function credentialArb(ring: KeyRing, route: RouteSpec): fc.Arbitrary<HeaderLines> {
  if (route.url === '/api/v1/key/rotate') {
    return fc.constantFrom(...ring.selfRotating).chain((own) => keyedArb(ring, own));
  }
  const right = route.access === 'admin' ? ring.admin : route.access === 'write' ? ring.write : ring.read;
  return keyedArb(ring, right);
}

/** The credential headers of a route whose right key is `right`. */
function keyedArb(ring: KeyRing, right: string): fc.Arbitrary<HeaderLines> {
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
  const isRequired = (name: QueryName) =>
    name === 'from' || name === 'to' || name === 'duration' || name === 'hours';
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
  if (name === 'version') return mostly(fc.constant(ring.assetsVersion), fc.stringMatching(/^[\w-]{0,14}$/));
  // Prices are written to the two PT15M series whose grid the generated points lie on; series are
  // updated or created.
  if (name === 'symbol' && route.body === 'prices') return mostly(fc.constantFrom('NO1', 'de-lu'), symbolArb);
  if (name === 'symbol' && route.body === 'series') {
    return fc.oneof(symbolArb, fc.constantFrom('NEW1', 'new.series_2', 'X-3', '0'));
  }
  if (name === 'symbol') return symbolArb;
  // The one source the fuzzed server has (hostile-requests.test.ts), or any other name.
  if (name === 'name') return mostly(fc.constant('ecb'), fc.stringMatching(/^[a-z][a-z0-9_-]{0,20}$/));
  if (route.url.startsWith('/api/v1/webhooks/')) {
    if (name === 'eventId') return mostly(fc.constant(FUZZ_EVENT_ID), fc.stringMatching(/^evt_[0-9]{0,14}$/));
    const ids = route.method === 'DELETE' ? ring.webhooks.remove : ring.webhooks.keep;
    return mostly(fc.constantFrom(...ids), fc.stringMatching(/^wh_[A-Za-z0-9_-]{0,14}$/));
  }
  if (route.url.startsWith('/api/v1/invitations/')) {
    return mostly(fc.constantFrom(...ring.invitations.ids), fc.stringMatching(/^inv_[A-Za-z0-9]{0,20}$/));
  }
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

/** What `/assets/<version>/*` may be asked for: the pages' files, their HTML, and ways out. */
const PAGE_FILES = mostly(
  fc.constantFrom(
    'shared/style.css',
    'shared/api.js',
    'console/app.js',
    'portal/portal.js',
    'portal/claim.js',
    'vendor/uplot.js',
    'vendor/uplot.css',
  ),
  fc.constantFrom(
    ...[
      '../../../package.json',
      '%2e%2e/%2e%2e/package.json',
      '..%2f..%2fpackage.json',
      'console/index.html',
    ],
    ...['..%5c..%5cpackage.json', '%00', '.', '', 'shared/', 'vendor/../../package.json', '.env'],
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
      if (part === '*') return mostly(route.url.startsWith('/assets/') ? PAGE_FILES : DOC_FILES, segment);
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
    fc.constantFrom(
      ...['application/json', 'text/csv', '*/*', 'application/json;q=0.5, text/csv;q=0.9'],
      // What an MCP client sends (POST /mcp, docs/mcp.md).
      'application/json, text/event-stream',
    ),
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

const addressArb = fc.oneof(
  { weight: 4, arbitrary: fc.ipV4() },
  { weight: 2, arbitrary: fc.ipV6() },
  { weight: 1, arbitrary: fc.constantFrom('127.0.0.1', '::1', '::ffff:203.0.113.7', 'fe80::1%eth0') },
);

/** A whole request to `route`. */
export function requestArb(ring: KeyRing, route: RouteSpec): fc.Arbitrary<HostileRequest> {
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
