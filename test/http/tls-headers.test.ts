/**
 * TLS and headers (SECURITY.md): TLS 1.2 or newer only, with modern cipher suites; HSTS on every HTTPS answer,
 * `nosniff` on every answer, and no server or framework version in any header. Real TLS connections
 * to the app listening on 127.0.0.1, a client offering one protocol or one suite at a time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connect, getCiphers, type SecureVersion, type TLSSocket } from 'node:tls';
import fastifyPackage from 'fastify/package.json' with { type: 'json' };
import { createHarness, type Harness, listenHttps, testTls } from '../helpers/harness.js';

type Listening = Awaited<ReturnType<typeof listenHttps>>;

/** What one handshake came to: the protocol and suite agreed, or the error that ended it. */
interface Handshake {
  readonly protocol?: string | null;
  readonly cipher?: string;
  readonly error?: string;
}

async function handshake(
  port: number,
  options: { minVersion?: SecureVersion; maxVersion?: SecureVersion; ciphers?: string },
): Promise<Handshake> {
  const { cert } = await testTls();
  return new Promise((resolve) => {
    let socket: TLSSocket;
    try {
      socket = connect({ host: '127.0.0.1', port, servername: 'localhost', ca: cert, ...options });
    } catch (error) {
      // The client's own OpenSSL refused to offer it at all (a suite it no longer builds).
      resolve({ error: `client: ${(error as Error).message}` });
      return;
    }
    socket.once('secureConnect', () => {
      resolve({ protocol: socket.getProtocol(), cipher: socket.getCipher().standardName });
      socket.destroy();
    });
    socket.once('error', (error) => resolve({ error: error.message }));
    socket.once('close', () => resolve({ error: 'closed before the handshake finished' }));
  });
}

/** One raw request over TLS; the whole answer as text (the server closes or answers with Content-Length). */
async function rawRequest(port: number, text: string): Promise<string> {
  const { cert } = await testTls();
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername: 'localhost', ca: cert }, () =>
      socket.write(text),
    );
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      answer += chunk;
      const end = answer.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(answer);
      if (end >= 0 && length && answer.length >= end + 4 + Number(length[1])) socket.end();
    });
    socket.once('error', reject);
    socket.once('close', () => resolve(answer));
  });
}

/** The header lines of a raw answer, names lowercased. */
function headerLines(answer: string): [string, string][] {
  const head = answer.slice(0, answer.indexOf('\r\n\r\n'));
  return head
    .split('\r\n')
    .slice(1)
    .map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
    });
}

const AEAD_WITH_FORWARD_SECRECY =
  /^(TLS_(AES_128_GCM|AES_256_GCM|CHACHA20_POLY1305)_SHA(256|384)|TLS_ECDHE_(ECDSA|RSA)_WITH_(AES_(128|256)_GCM_SHA(256|384)|CHACHA20_POLY1305_SHA256))$/;

describe('TLS: 1.2 or newer, modern suites only', () => {
  let h: Harness;
  let server: Listening;

  before(async () => {
    h = await createHarness({ https: true });
    server = await listenHttps(h);
  });
  after(async () => {
    await server.close();
    await h.close();
  });

  for (const version of ['TLSv1', 'TLSv1.1'] as const) {
    test(`${version} is refused`, async () => {
      // SECLEVEL=0 lets this client offer what its OpenSSL would otherwise not: the server must refuse.
      const result = await handshake(server.port, {
        minVersion: version,
        maxVersion: version,
        ciphers: 'DEFAULT@SECLEVEL=0',
      });
      assert.ok(result.error, `a ${version} handshake fails (it agreed on ${result.protocol})`);
    });
  }

  test('TLS 1.3 is agreed by default', async () => {
    const result = await handshake(server.port, {});
    assert.equal(result.error, undefined, `the handshake succeeds: ${result.error}`);
    assert.equal(result.protocol, 'TLSv1.3', 'a current client gets TLS 1.3');
  });

  test('TLS 1.2 with an ECDHE AES-GCM suite is agreed', async () => {
    const result = await handshake(server.port, {
      maxVersion: 'TLSv1.2',
      ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256',
    });
    assert.equal(result.protocol, 'TLSv1.2', `a TLS 1.2 client is served: ${result.error}`);
    assert.equal(result.cipher, 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'with the suite it offered');
  });

  test('of every TLS 1.2 suite the client knows, only AEAD suites with forward secrecy are agreed', async () => {
    const suites = getCiphers().filter((name) => !name.startsWith('tls_'));
    assert.ok(suites.length > 20, `the client knows many suites (${suites.length})`);
    const agreed: string[] = [];
    const weakOnesTried: string[] = [];
    for (const suite of suites) {
      const result = await handshake(server.port, {
        maxVersion: 'TLSv1.2',
        ciphers: `${suite.toUpperCase()}@SECLEVEL=0`,
      });
      if (result.cipher !== undefined) agreed.push(result.cipher);
      if (/-cbc|sha$|-sha1|^aes|^camellia|^des|rc4|null|psk|srp/i.test(suite)) weakOnesTried.push(suite);
    }
    assert.ok(agreed.length >= 1, 'at least one TLS 1.2 suite is agreed');
    assert.ok(weakOnesTried.length > 5, `weak suites were offered too (${weakOnesTried.length})`);
    for (const cipher of agreed) {
      assert.match(cipher, AEAD_WITH_FORWARD_SECRECY, `${cipher} is an ECDHE suite with AEAD`);
    }
  });
});

describe('headers: HSTS, nosniff, no version', () => {
  let h: Harness;
  let server: Listening;
  let admin: string;

  before(async () => {
    h = await createHarness({ https: true });
    server = await listenHttps(h);
    admin = (await h.createKey({ name: 'operator', tier: 'pro', scopes: ['admin'] })).key;
  });
  after(async () => {
    await server.close();
    await h.close();
  });

  /** Versions that must never be told: Node's, Fastify's. */
  const versions = [process.version, process.version.slice(1), fastifyPackage.version];

  function assertSafeHeaders(headers: [string, string][], what: string): void {
    const names = headers.map(([name]) => name);
    const hsts = headers.find(([name]) => name === 'strict-transport-security')?.[1];
    assert.ok(hsts, `${what}: Strict-Transport-Security is sent`);
    const maxAge = Number(/max-age=(\d+)/.exec(hsts)?.[1]);
    assert.ok(maxAge >= 31_536_000, `${what}: HSTS lasts at least a year (${hsts})`);
    assert.ok(
      headers.some(([name, value]) => name === 'x-content-type-options' && value === 'nosniff'),
      `${what}: X-Content-Type-Options: nosniff`,
    );
    assert.equal(names.includes('server'), false, `${what}: no Server header`);
    assert.equal(names.includes('x-powered-by'), false, `${what}: no X-Powered-By header`);
    for (const [name, value] of headers) {
      for (const version of versions) {
        assert.equal(value.includes(version), false, `${what}: ${name} does not tell version ${version}`);
      }
      assert.doesNotMatch(
        value,
        /\b(node|fastify|express|pricepoint)\/?\s*v?\d/i,
        `${what}: ${name} names no software`,
      );
    }
  }

  const cases: [string, string, Record<string, string>?][] = [
    ['a day answer (200)', '/api/v1/prices/today'],
    ['a day answer from the fast path (200 again)', '/api/v1/prices/today'],
    ['no key (401)', '/api/v1/prices/today', {}],
    ['a bad parameter (400)', '/api/v1/prices/today?tz=Mars/Olympus'],
    ['an unknown route (404)', '/api/v1/nothing-here'],
    ['the series list', '/api/v1/series'],
    ['health', '/healthz', {}],
    ['readiness', '/readyz', {}],
    ['metrics', '/metrics', {}],
    ['the OpenAPI document', '/api/v1/openapi.json', {}],
    ['the docs page', '/docs', {}],
  ];
  for (const [what, path, headers] of cases) {
    test(`${what}: ${path}`, async () => {
      const answer = await server.get(path, headers ?? { 'x-api-key': h.demoKey });
      const lines = Object.entries(answer.headers).flatMap(([name, value]) =>
        (Array.isArray(value) ? value : [value ?? '']).map((v): [string, string] => [name, String(v)]),
      );
      assert.ok(answer.status < 500, `${what}: answered (${answer.status})`);
      assertSafeHeaders(lines, `${what} (${answer.status})`);
    });
  }

  test('an admin answer and a 304 carry them too', async () => {
    const listed = await server.get('/api/v1/keys', { 'x-api-key': admin });
    assert.equal(listed.status, 200, 'the admin key lists keys');
    const first = await server.get('/api/v1/prices/today?symbols=NO1', { 'x-api-key': h.demoKey });
    const etag = String(first.headers.etag);
    const again = await server.get('/api/v1/prices/today?symbols=NO1', {
      'x-api-key': h.demoKey,
      'if-none-match': etag,
    });
    assert.equal(again.status, 304, 'the same ETag gets 304');
    for (const [what, answer] of [
      ['admin list', listed],
      ['304', again],
    ] as const) {
      const lines = Object.entries(answer.headers).map(([n, v]): [string, string] => [n, String(v)]);
      assertSafeHeaders(lines, what);
    }
  });

  test('answers the HTTP parser gives (400, 431) carry them too', async () => {
    const malformed = await rawRequest(
      server.port,
      'GET / HTTP/1.1\r\nHost: localhost\r\nBad Header\r\n\r\n',
    );
    assert.match(malformed, /^HTTP\/1\.1 400 /, 'a malformed header line gets 400');
    assertSafeHeaders(headerLines(malformed), 'parser 400');
    const huge = await rawRequest(
      server.port,
      `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Filler: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    assert.match(huge, /^HTTP\/1\.1 431 /, 'oversized headers get 431');
    assertSafeHeaders(headerLines(huge), 'parser 431');
  });
});
