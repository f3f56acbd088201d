/**
 * How the OpenAPI document travels (docs/api.md): compressed like the data answers, revalidated by
 * its ETag, and the answer to a request that is not even HTTP is the one the document promises.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { connect } from 'node:tls';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { createHarness, listenHttps, testTls } from '../helpers/harness.js';
import { listOperations, type OpenApiDoc, resolveShared, schemaValidator } from './openapi-document.js';

const h = await createHarness({ https: true });
after(() => h.close());
const URL = '/api/v1/openapi.json';

describe('GET /api/v1/openapi.json on the wire', () => {
  test('is compressed as Accept-Encoding allows, each coding with its own ETag, and 304 when unchanged', async () => {
    const plain = await h.app.inject({ url: URL });
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers.vary, 'accept-encoding');
    const tags = new Set([String(plain.headers.etag)]);
    for (const [coding, decode] of [
      ['br', brotliDecompressSync],
      ['gzip', gunzipSync],
    ] as const) {
      const answer = await h.app.inject({ url: URL, headers: { 'accept-encoding': `${coding}, identity` } });
      assert.equal(answer.statusCode, 200);
      assert.equal(answer.headers['content-encoding'], coding);
      assert.equal(
        decode(answer.rawPayload).toString('utf8'),
        plain.body,
        `${coding} holds the same document`,
      );
      assert.ok(
        answer.rawPayload.length * 5 < plain.rawPayload.length,
        `${coding}: ${answer.rawPayload.length} bytes`,
      );
      tags.add(String(answer.headers.etag));
      const again = await h.app.inject({
        url: URL,
        headers: { 'accept-encoding': coding, 'if-none-match': String(answer.headers.etag) },
      });
      assert.equal(again.statusCode, 304);
      assert.equal(again.rawPayload.length, 0);
    }
    assert.equal(tags.size, 3, 'a compressed body is another representation, with another tag');
    const stale = await h.app.inject({ url: URL, headers: { 'if-none-match': '"something-else"' } });
    assert.equal(stale.statusCode, 200);
  });
});

describe('an open operation answers a request that is not HTTP as documented', () => {
  test('GET /healthz with a malformed header: 400 problem+json, matching MalformedRequest', async () => {
    const doc = resolveShared(JSON.parse((await h.app.inject({ url: URL })).body) as OpenApiDoc);
    const documented = listOperations(doc).find((o) => o.name === 'GET /healthz')?.operation.responses['400'];
    assert.ok(documented?.content?.['application/problem+json']?.schema, 'GET /healthz documents 400');
    const server = await listenHttps(h);
    after(() => server.close());
    const { cert } = await testTls();
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: server.port, ca: cert, servername: 'localhost' });
      let text = '';
      socket.on('secureConnect', () =>
        socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\nBad Header: x\r\n\r\n'),
      );
      socket.on('data', (chunk) => {
        text += chunk.toString('utf8');
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    const [head = '', body = ''] = raw.split('\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 400 /);
    assert.match(head, /\r\ncontent-type: application\/problem\+json/i);
    for (const [name, header] of Object.entries(documented.headers ?? {})) {
      if (header.required === true) assert.match(head, new RegExp(`\r\n${name}: `, 'i'), `${name} is sent`);
    }
    const validate = schemaValidator(doc);
    const schema = documented.content['application/problem+json'].schema;
    assert.equal(validate(schema, JSON.parse(body)), undefined);
  });
});

describe('the demo key on the reference page', () => {
  /** The document and the page's own script, on a server with or without the development data. */
  const served = async (devData: boolean) => {
    const server = devData ? h : await createHarness({ devData: false });
    try {
      const page = await server.app.inject({ url: '/docs/' });
      const script = /src="\.\/(static\/theme\/pricepoint\.js)"/.exec(page.body)?.[1];
      assert.ok(script, `the page loads its own script: ${page.body.slice(0, 800)}`);
      return {
        document: (await server.app.inject({ url: URL })).body,
        script: (await server.app.inject({ url: `/docs/${script}` })).body,
      };
    } finally {
      if (server !== h) await server.close();
    }
  };

  test("with the development data set loaded, the page's script says the demo key and how to paste it", async () => {
    const { document, script } = await served(true);
    assert.ok(script.includes(JSON.stringify(h.demoKey)), script);
    assert.match(script, /paste it into apiKey/);
    assert.doesNotMatch(
      document,
      /pp_demo_/,
      'the OpenAPI document, which clients are made from, holds no key',
    );
  });

  test('without it, no demo key is named, since none exists', async () => {
    const { document, script } = await served(false);
    assert.doesNotMatch(`${document}${script}`, /pp_demo_|demo key/);
  });
});
