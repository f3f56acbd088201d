/**
 * The project documents itself: source, tests, benchmarks, packages and scripts point to docs/ and
 * the README, never to a contract or issue tracker outside the repository; and every relative link
 * in docs/*.md and README.md reaches a file (and, with a `#fragment`, a heading) that exists.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SCANNED = ['src', 'test', 'bench', 'packages', 'scripts', '.ci'];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.pricepoint', 'test-artifacts']);

/** References to what is not in the repository. Built from pieces, so this file does not match itself. */
const OUTSIDE_REFERENCES: readonly RegExp[] = [
  new RegExp(['DESIGN', 'section'].join(' ')),
  new RegExp(['DESIGN', 'md'].join('\\.')),
  new RegExp(['\\.\\.', 'shared'].join('/')),
  new RegExp(['\\bissue', '#?\\d+'].join(' '), 'i'),
];

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (!SKIPPED_DIRS.has(name)) found.push(...filesUnder(path));
    } else found.push(path);
  }
  return found;
}

/** Each line of `text` that cites something outside the repository, as `line: text`. */
function outsideReferences(text: string): string[] {
  return text
    .split('\n')
    .map((line, i) => ({ line, n: i + 1 }))
    .filter(({ line }) => OUTSIDE_REFERENCES.some((pattern) => pattern.test(line)))
    .map(({ line, n }) => `${n}: ${line.trim()}`);
}

/** GitHub's anchor of each heading of a Markdown file (a repeated heading gets `-1`, `-2`, ...). */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutCodeBlocks(markdown).split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

function withoutCodeBlocks(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1\s*$/gm, '').replace(/`[^`\n]*`/g, (code) => {
    // Inline code keeps its text for headings (`GET /api/v1/usage`), but no link inside it counts.
    return code.replace(/[[\]()]/g, '');
  });
}

/** The relative links of a Markdown file: `[text](target)`, outside code. */
function relativeLinks(markdown: string): string[] {
  const links: string[] = [];
  for (const match of withoutCodeBlocks(markdown).matchAll(/\[[^\]\n]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = match[1] ?? '';
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    links.push(target);
  }
  return links;
}

describe('the repository documents itself', () => {
  test('the patterns find what they look for', () => {
    assert.equal(outsideReferences(`see ${'DESIGN'} section 2`).length, 1);
    assert.equal(outsideReferences(`the ${'DESIGN'}.md table`).length, 1);
    assert.equal(outsideReferences(`read ../${'shared'}/STYLE.md`).length, 1);
    assert.equal(outsideReferences(`fixed in ${'Issue'} 7, point 2`).length, 1);
    assert.equal(outsideReferences('a tissue 3 times; docs/errors.md').length, 0);
  });

  test('no file under src, test, bench, packages, scripts or .ci cites a contract or issue outside it', () => {
    const found: string[] = [];
    for (const file of SCANNED.flatMap((dir) => filesUnder(join(ROOT, dir)))) {
      for (const hit of outsideReferences(readFileSync(file, 'utf8')))
        found.push(`${relative(ROOT, file)}:${hit}`);
    }
    assert.deepEqual(found, [], 'point these to docs/ or a README section instead');
  });

  test('docs/ exists, with an index, and the README links to it', () => {
    assert.ok(existsSync(join(ROOT, 'docs/README.md')));
    assert.ok(relativeLinks(readFileSync(join(ROOT, 'README.md'), 'utf8')).some((l) => /^docs\/?/.test(l)));
  });

  test('every relative link in docs/*.md and README.md reaches an existing file and heading', () => {
    const pages = [
      join(ROOT, 'README.md'),
      ...readdirSync(join(ROOT, 'docs'))
        .filter((name) => name.endsWith('.md'))
        .map((name) => join(ROOT, 'docs', name)),
    ];
    const broken: string[] = [];
    for (const page of pages) {
      for (const link of relativeLinks(readFileSync(page, 'utf8'))) {
        const [path = '', fragment] = link.split('#');
        const target = path === '' ? page : resolve(dirname(page), decodeURIComponent(path));
        const where = `${relative(ROOT, page)} -> ${link}`;
        if (!existsSync(target)) broken.push(`${where}: no such file`);
        else if (
          fragment &&
          target.endsWith('.md') &&
          !headingAnchors(readFileSync(target, 'utf8')).has(fragment)
        ) {
          broken.push(`${where}: no such heading`);
        }
      }
    }
    assert.deepEqual(broken, []);
  });
});
