/**
 * How the pages (/console, /portal) and their files are served (src/http/pages/): the strict CSP and
 * framing headers, ETag and 304, a year's cache for files whose URL carries the version, compression,
 * uPlot from node_modules, and a problem+json 404 for anything not in the table of files, however the
 * path is spelled.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync } from 'node:zlib';
import { PAGE_CSP } from '../../src/http/pages/csp.js';
import { ASSETS_PREFIX, loadPageFiles } from '../../src/http/pages/pages.js';
import { createHarness, type Harness } from '../helpers/harness.js';

/** The policy the brief and docs/console.md promise, directive by directive. */
const EXPECTED_CSP = {
  'default-src': "'none'",
  'script-src': "'self'",
  'style-src': "'self'",
  'img-src': "'self' data:",
  'connect-src': "'self'",
  'font-src': "'self'",
  'base-uri': "'none'",
  'form-action': "'self'",
  'frame-ancestors': "'none'",
};

function parseCsp(header: string): Record<string, string> {
  return Object.fromEntries(
    header
      .split(';')
      .map((part) => part.trim())
      .filter(Boolean)
      .map((part) => {
        const [name, ...sources] = part.split(/\s+/);
        return [name, sources.join(' ')];
      }),
  );
}

function assertPageHeaders(headers: Record<string, unknown>, what: string): void {
  assert.deepEqual(parseCsp(String(headers['content-security-policy'])), EXPECTED_CSP, `${what}: CSP`);
  assert.equal(headers['x-frame-options'], 'DENY', `${what}: X-Frame-Options`);
  assert.equal(headers['referrer-policy'], 'no-referrer', `${what}: Referrer-Policy`);
  assert.equal(headers['x-content-type-options'], 'nosniff', `${what}: nosniff`);
}

describe('the console page and its files', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness();
  });
  after(async () => {
    await h.close();
  });

  /** The files the console's HTML names under /assets/. */
  async function consoleAssets(): Promise<string[]> {
    const page = await h.app.inject({ url: '/console' });
    return [...page.body.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
  }

  test('GET /console is the HTML page with the strict CSP, no-cache, and 304 for its ETag', async () => {
    assert.deepEqual(PAGE_CSP, EXPECTED_CSP);
    const page = await h.app.inject({ url: '/console' });
    assert.equal(page.statusCode, 200);
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    assertPageHeaders(page.headers, '/console');
    assert.equal(page.headers['cache-control'], 'no-cache');
    assert.match(page.body, /<title>Pricepoint console<\/title>/);
    assert.doesNotMatch(page.body, /\{\{assets\}\}/, 'the assets prefix is written in');
    // No inline script or style for the CSP to refuse.
    assert.doesNotMatch(page.body, /<script(?![^>]*\bsrc=)[^>]*>/, 'every script is a file');
    assert.doesNotMatch(page.body, /<style|\sstyle=/, 'no inline style');

    const etag = String(page.headers.etag);
    const again = await h.app.inject({ url: '/console', headers: { 'if-none-match': etag } });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');

    const slash = await h.app.inject({ url: '/console/' });
    assert.equal(slash.statusCode, 302);
    assert.equal(slash.headers.location, '/console');
  });

  test('the files a page names are served with their types, a year of cache, compression and 304', async () => {
    const urls = await consoleAssets();
    assert.ok(
      urls.some((u) => u.endsWith('/vendor/uplot.css')),
      `uPlot's stylesheet: ${urls.join(', ')}`,
    );
    assert.ok(urls.some((u) => u.endsWith('/shared/style.css')));
    assert.ok(urls.some((u) => u.endsWith('/console/app.js')));
    const version = urls[0]!.split('/')[2]!;
    // The modules the page imports by relative paths, and uPlot itself from node_modules.
    urls.push(`${ASSETS_PREFIX}/${version}/shared/api.js`, `${ASSETS_PREFIX}/${version}/vendor/uplot.js`);
    for (const url of urls) {
      const answer = await h.app.inject({ url });
      assert.equal(answer.statusCode, 200, url);
      const type = url.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8';
      assert.equal(answer.headers['content-type'], type, url);
      assert.equal(answer.headers['cache-control'], 'public, max-age=31536000, immutable', url);
      assertPageHeaders(answer.headers, url);
      const again = await h.app.inject({ url, headers: { 'if-none-match': String(answer.headers.etag) } });
      assert.equal(again.statusCode, 304, `${url} again`);
    }

    const uplot = `${ASSETS_PREFIX}/${version}/vendor/uplot.js`;
    const plain = await h.app.inject({ url: uplot });
    assert.match(plain.body, /export \{ uPlot as default \}|export default uPlot/, 'uPlot as an ES module');
    const br = await h.app.inject({ url: uplot, headers: { 'accept-encoding': 'br' } });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(br.headers.vary, 'accept-encoding');
    assert.ok(br.rawPayload.length < plain.rawPayload.length / 2, 'compressed');
    assert.equal(brotliDecompressSync(br.rawPayload).toString('utf8'), plain.body);
    assert.notEqual(br.headers.etag, plain.headers.etag, 'each coding has its own ETag');
  });

  test('anything not in the table of files is a problem+json 404, however the path is spelled', async () => {
    const [first] = await consoleAssets();
    const version = first!.split('/')[2]!;
    for (const url of [
      `${ASSETS_PREFIX}/${version}/nothing.js`,
      `${ASSETS_PREFIX}/${version}/../package.json`,
      `${ASSETS_PREFIX}/${version}/..%2f..%2fpackage.json`,
      `${ASSETS_PREFIX}/${version}/%2e%2e/%2e%2e/package.json`,
      `${ASSETS_PREFIX}/${version}/console/index.html`,
      `${ASSETS_PREFIX}/${version}//etc/passwd`,
      `${ASSETS_PREFIX}/not-the-version/shared/style.css`,
      `${ASSETS_PREFIX}/${version}/shared/style.css%00.js`,
    ]) {
      const answer = await h.app.inject({ url });
      assert.equal(answer.statusCode, 404, url);
      assert.match(String(answer.headers['content-type']), /^application\/problem\+json/, url);
      assert.equal(answer.json().code, 'not_found', url);
      assert.doesNotMatch(answer.body, /"name": ?"pricepoint"|root:/, `${url} leaks no file`);
    }
    const post = await h.app.inject({ method: 'POST', url: '/console' });
    assert.equal(post.statusCode, 405);
    assert.match(String(post.headers['content-type']), /^application\/problem\+json/);
  });
});

test('a page is served only when web/<page>/index.html exists, and names its files under the version', async () => {
  const root = mkdtempSync(join(tmpdir(), 'pricepoint-web-'));
  try {
    mkdirSync(join(root, 'console'));
    mkdirSync(join(root, 'shared'));
    writeFileSync(
      join(root, 'console', 'index.html'),
      '<script type="module" src="{{assets}}/console/a.js">',
    );
    writeFileSync(join(root, 'console', 'a.js'), 'export {};');
    writeFileSync(join(root, 'shared', 'notes.md'), '# not a kind the pages serve');
    const files = await loadPageFiles(root);
    assert.deepEqual([...files.pages.keys()], ['console'], 'no portal without its index.html');
    assert.equal(
      files.pages.get('console')!.body.toString(),
      `<script type="module" src="${ASSETS_PREFIX}/${files.version}/console/a.js">`,
    );
    assert.deepEqual([...files.assets.keys()].sort(), [
      'console/a.js',
      'vendor/uplot.css',
      'vendor/uplot.js',
    ]);

    // Another byte anywhere, another version: browsers never mix old and new files.
    writeFileSync(join(root, 'console', 'a.js'), 'export {}; ');
    assert.notEqual((await loadPageFiles(root)).version, files.version);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
