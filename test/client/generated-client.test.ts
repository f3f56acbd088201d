/**
 * A client generated from the served OpenAPI document, as a user of openapi-typescript and
 * openapi-fetch makes one (docs/api.md): types generated from the document, a small program that
 * uploads prices and reads them back, compiled by `tsc --strict`, and run against a real server.
 * It fails if the document types a body wrong (a string where JSON is taken), names an operation
 * or schema so that generated code does not compile, or describes an answer the server does not give.
 */
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createHarness, listenHttps, testTls } from '../helpers/harness.js';
import { REPO, runCommand } from '../helpers/process.js';

const BIN = join(REPO, 'node_modules', '.bin');
// Inside the repository, so that the program finds openapi-fetch in its node_modules.
const dir = join(REPO, 'test-artifacts', `generated-client-${process.pid}`);

/** What a user writes: upload two quarter hours of NO1, read the day back, print what came back. */
const PROGRAM = `
import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';

const client = createClient<paths, 'application/json' | 'application/problem+json'>({
  baseUrl: process.env.PRICEPOINT_URL,
  headers: { 'x-api-key': process.env.PRICEPOINT_KEY },
});

const points: { start: string; price: number }[] = [
  { start: '2026-11-22T00:00:00+01:00', price: 41.27 },
  { start: '2026-11-22T00:15:00+01:00', price: -3.5 },
];
const upload = await client.PUT('/api/v1/series/{symbol}/prices', {
  params: { path: { symbol: 'NO1' } },
  body: points,
});
if (upload.error !== undefined) throw new Error('upload: ' + upload.error.code + ' ' + upload.error.detail);

const { data, error } = await client.GET('/api/v1/prices/{date}', {
  params: { path: { date: '2026-11-22' }, query: { symbols: 'NO1' } },
});
if (error !== undefined) throw new Error('read: ' + error.code + ' ' + error.detail);
const first: number = data.series[0].prices[0].price;
const day: components['schemas']['DayAnswer'] = data;

const refused = await client.GET('/api/v1/prices/{date}', {
  params: { path: { date: '2026-11-22' }, query: { symbols: 'NOPE' } },
});
const code: string | undefined = refused.error?.code;

console.log(JSON.stringify({ written: upload.data, first, second: day.series[0].prices[1].price, code }));
`;

const h = await createHarness({ https: true });
after(async () => {
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a client generated with openapi-typescript and openapi-fetch', () => {
  test('compiles under tsc --strict, uploads prices and reads them back from a real server', async () => {
    const server = await listenHttps(h);
    after(() => server.close());
    const writer = (await h.createKey({ tier: 'enterprise', scopes: ['read', 'write'] })).key;
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'openapi.json'), (await h.app.inject({ url: '/api/v1/openapi.json' })).body);
    writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
    writeFileSync(join(dir, 'program.ts'), PROGRAM);
    const { cert } = await testTls();
    writeFileSync(join(dir, 'ca.pem'), cert);

    const generated = await runCommand(
      join(BIN, 'openapi-typescript'),
      [join(dir, 'openapi.json'), '--output', join(dir, 'schema.d.ts')],
      process.env,
      { timeoutMs: 60_000 },
    );
    assert.equal(generated.code, 0, generated.stderr);

    const compiled = await runCommand(
      join(BIN, 'tsc'),
      ['--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext'].concat([
        '--types',
        'node',
        '--outDir',
        join(dir, 'out'),
        join(dir, 'program.ts'),
      ]),
      process.env,
      { cwd: dir, timeoutMs: 100_000 },
    );
    assert.equal(compiled.code, 0, `tsc --strict:\n${compiled.stdout}${compiled.stderr}`);

    const ran = await runCommand(
      process.execPath,
      [join(dir, 'out', 'program.js')],
      {
        ...process.env,
        PRICEPOINT_URL: server.base,
        PRICEPOINT_KEY: writer,
        NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem'),
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(ran.code, 0, ran.stderr);
    const printed = JSON.parse(ran.stdout) as {
      written: unknown;
      first: number;
      second: number;
      code: string;
    };
    assert.deepEqual(
      { first: printed.first, second: printed.second, code: printed.code },
      { first: 41.27, second: -3.5, code: 'unknown_series' },
    );
    assert.equal((printed.written as { written?: number }).written, 2, JSON.stringify(printed.written));
  });
});
