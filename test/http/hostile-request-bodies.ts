/** Bodies of hostile requests: the JSON, CSV and JSON Lines each write route takes, and junk. */
import fc from 'fast-check';
import { type BodyKind, type KeyRing, mostly, type RouteSpec } from './hostile-routes.js';
import { fuzzText, keyTextArb, QUERY_VALUES, symbolArb } from './hostile-values.js';

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

/** A key change (PATCH /api/v1/keys/{id}): limits, allow-lists, owner fields, each right or wrong. */
const keyPatchBodyArb = (key: fc.Arbitrary<string>) =>
  objectBody(
    {
      name: [fc.constantFrom('renamed', 'ünïcode ✓'), fc.oneof(fuzzText, key, fc.constant(''), fc.integer())],
      tier: [fc.constantFrom('free', 'pro'), fc.constantFrom('__proto__', 'nope', '', null)],
      expiresAt: [
        fc.constantFrom('2030-01-01T00:00:00Z', null),
        fc.oneof(fc.constantFrom('2020-01-01T00:00:00Z', 'never', 0), fuzzText),
      ],
      limits: [
        fc.constantFrom([{ name: 'minute', limit: 600, windowSeconds: 60 }], null),
        fc.oneof(
          fc.constantFrom(
            [],
            [{ name: 'Minute', limit: 1, windowSeconds: 60 }],
            [{ name: 'minute', limit: 0, windowSeconds: 60 }],
            [{ name: 'minute', limit: 1, windowSeconds: 1e12 }],
            [{ name: '__proto__', limit: 1, windowSeconds: 1 }],
            [
              { name: 'm', limit: 1, windowSeconds: 1 },
              { name: 'm', limit: 2, windowSeconds: 2 },
            ],
            'minute=1/60',
            [null],
          ),
          fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 10 }),
        ),
      ],
      allowedAddresses: [
        fc.constantFrom(['192.0.2.0/24', '2001:db8::/32'], ['127.0.0.1'], null),
        fc.oneof(
          fc.constantFrom(
            [],
            ['300.0.0.1'],
            ['1.2.3.4/33'],
            ['::/129'],
            ['fe80::1%eth0'],
            ['localhost'],
            [7],
          ),
          fc.array(fuzzText, { maxLength: 3 }),
        ),
      ],
      customerRef: [
        fc.constantFrom('C-42', null),
        fc.oneof(fuzzText, key, fc.constant(''), fc.constant('x'.repeat(201))),
      ],
      contact: [fc.constantFrom('ops@example.com', null), fc.oneof(fuzzText, key, fc.constant('bidi\u202E'))],
    },
    [],
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

/** A webhook registration: https URLs, public or not (docs/webhooks.md), event types and symbols. */
const webhookBodyArb = objectBody(
  {
    url: [
      fc.constantFrom('https://hooks.example.com/p', 'https://203.0.113.9:8443/h?x=1'),
      fc.oneof(
        fc.constantFrom(
          'http://hooks.example.com/',
          'https://127.0.0.1/',
          'https://[::ffff:10.0.0.1]/',
          'ftp://a/',
        ),
        fc.constantFrom('https://u:p@a.example/', 'javascript:alert(1)', '', 'x'.repeat(3000), 1, null),
        fuzzText,
      ),
    ],
    events: [
      fc.subarray(['day.published', 'day.revised'], { minLength: 1 }),
      fc.constantFrom([], ['day.deleted'], 'day.published', [1], null),
    ],
    symbols: [fc.constantFrom(['NO1'], ['NO1', 'SE3'], null), fc.constantFrom([], [''], 'NO1', [null])],
  },
  ['url', 'events'],
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

/** JSON-RPC messages of an MCP client (docs/mcp.md): tool lists, and tool calls with any arguments. */
const mcpBodyArb: fc.Arbitrary<Body> = fc
  .oneof(
    fc.constant<unknown>({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    fc.record({
      jsonrpc: fc.constant('2.0'),
      id: fc.oneof(fc.nat(), fc.string()),
      method: fc.constantFrom('tools/call', 'tools/list', 'initialize', 'nope'),
      params: fc.record({
        name: fc.constantFrom(
          'list_series',
          'get_prices_for_day',
          'get_latest_prices',
          'find_cheapest_window',
          'x',
        ),
        arguments: fc.dictionary(
          fc.constantFrom('symbols', 'date', 'from', 'to', 'tz', 'duration', 'tariff', 'x'),
          fc.oneof(
            fc.string(),
            fc.constantFrom('NO1', 'today', 'PT1H', 'Europe/Oslo'),
            fc.integer(),
            fc.anything(),
          ),
        ),
      }),
    }),
  )
  .map((message): Body => ({ bytes: Buffer.from(JSON.stringify(message)), media: 'json' }));

/** An invitation (POST /api/v1/invitations): tier, scopes, expiries, uses and note, each right or wrong. */
const invitationBodyArb = (key: fc.Arbitrary<string>) =>
  objectBody(
    {
      tier: [
        fc.constantFrom('free', 'pro'),
        fc.oneof(fc.constantFrom('__proto__', 'constructor', 'nope', '', null), fuzzText),
      ],
      scopes: [
        fc.subarray(['read', 'write', 'admin'], { minLength: 1 }),
        fc.oneof(
          fc.array(fc.constantFrom('read', 'root', ''), { maxLength: 4 }),
          fc.constantFrom('read', null),
        ),
      ],
      expiresAt: [
        fc.constantFrom('2026-11-30T00:00:00Z', '2026-12-01T12:00:00+02:00'),
        fc.oneof(fc.constantFrom('2020-01-01T00:00:00Z', '2099-01-01T00:00:00Z', 'soon', null, 0), fuzzText),
      ],
      uses: [
        fc.integer({ min: 1, max: 1000 }),
        fc.oneof(fc.constantFrom(0, -1, 1001, 1.5, 1e300, '3', null), fc.double()),
      ],
      keyExpiresAt: [
        fc.constantFrom('2030-01-01T00:00:00Z', null),
        fc.oneof(fc.constantFrom('2020-01-01T00:00:00Z', 'never', 0), fuzzText),
      ],
      note: [
        fc.constantFrom('Acme Corp trial', 'ünïcode ✓'),
        fc.oneof(fuzzText, key, fc.constant(''), fc.constant('x'.repeat(201)), fc.integer()),
      ],
    },
    ['tier'],
  );

/** A claim: a real token mostly, or a guessed, cut or key-shaped one, and a key name right or wrong. */
const claimBodyArb = (ring: KeyRing, key: fc.Arbitrary<string>) =>
  objectBody(
    {
      token: [
        fc.constantFrom(...ring.invitations.tokens),
        fc.oneof(
          fc.constantFrom(`ppi_${'A'.repeat(32)}`, 'ppi_', '', null, 7),
          fc.constantFrom(...ring.invitations.tokens).map((t) => t.slice(0, -1)),
          key,
          fuzzText,
        ),
      ],
      name: [
        fc.constantFrom('dashboard', 'ünïcode ✓'),
        fc.oneof(fuzzText, key, fc.integer(), fc.constant(' '), fc.constant('x'.repeat(201))),
      ],
    },
    ['token', 'name'],
  );

/** A sign-up: a key name, right or wrong. */
const signupBodyArb = (key: fc.Arbitrary<string>) =>
  objectBody(
    {
      name: [
        fc.constantFrom('my script', 'ünïcode ✓'),
        fc.oneof(fuzzText, key, fc.integer(), fc.constant(''), fc.constant('x'.repeat(201))),
      ],
    },
    ['name'],
  );

function specificBodyArb(ring: KeyRing, kind: Exclude<BodyKind, 'none'>): fc.Arbitrary<Body> {
  const key = keyTextArb(ring, ring.admin);
  if (kind === 'invitation') return invitationBodyArb(key);
  if (kind === 'claim') return claimBodyArb(ring, key);
  if (kind === 'signup') return signupBodyArb(key);
  if (kind === 'key') return keyBodyArb(key);
  if (kind === 'rotate') return rotateBodyArb;
  if (kind === 'keyPatch') return keyPatchBodyArb(key);
  if (kind === 'series') return seriesBodyArb(key);
  if (kind === 'webhook') return webhookBodyArb;
  if (kind === 'mcp') return mcpBodyArb;
  return fc.oneof(csvBodyArb(key), jsonLinesBodyArb(key));
}

/** A body cut at a random byte: JSON and CSV that end mid-token. */
export function truncated(body: fc.Arbitrary<Body>): fc.Arbitrary<Body> {
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
export function bodyArb(
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
