/**
 * `GET /llms.txt` (docs/mcp.md): served without a key, in the llms.txt shape (a title, a summary,
 * lists of links), every link reaching a page of the server or a file of docs/, and every operation
 * of the OpenAPI document listed, so the guide cannot go stale.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../helpers/harness.js';

const REPO = new URL('../../', import.meta.url);

let h: Harness;
let text: string;
before(async () => {
  h = await createHarness();
  const answer = await h.app.inject({ url: '/llms.txt' });
  assert.equal(answer.statusCode, 200, answer.body);
  assert.match(String(answer.headers['content-type']), /^text\/markdown/);
  text = answer.body;
});
after(() => h.close());

describe('GET /llms.txt', () => {
  test('is Markdown after the llms.txt convention: a title, a quoted summary, then sections of links', () => {
    const lines = text.split('\n');
    assert.equal(lines[0], '# Pricepoint');
    assert.ok(
      lines.some((line) => line.startsWith('> ')),
      'a summary in a blockquote',
    );
    assert.ok(lines.includes('## Docs'));
    assert.match(text, /x-api-key/);
  });

  test('every link reaches a page of the server (without a key) or a file in docs/', async () => {
    const links = [...text.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1] ?? '');
    assert.ok(links.length >= 6, links.join(' '));
    for (const link of links) {
      if (link.startsWith('/')) {
        const answer = await h.app.inject({ url: link });
        assert.ok(answer.statusCode < 400, `${link} answers ${answer.statusCode}`);
      } else {
        assert.match(link, /^docs\/[a-z-]+\.md$/);
        assert.ok(existsSync(new URL(link, REPO)), `${link} exists`);
      }
    }
  });

  test('lists every operation of the OpenAPI document with its summary, and nothing else', async () => {
    const document = (await h.app.inject({ url: '/api/v1/openapi.json' })).json() as {
      paths: Record<string, Record<string, { summary: string }>>;
    };
    const expected = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations).map(([method, op]) => `${method.toUpperCase()} ${path}: ${op.summary}`),
    );
    const listed = text
      .split('\n')
      .filter((line) => /^- [A-Z]+ \//.test(line))
      .map((line) => line.slice(2).replace(/ \(no key\)$/, ''));
    assert.deepEqual(listed, expected);
    assert.ok(listed.includes("GET /api/v1/prices/today: Today's prices"));
  });
});
