/**
 * Every fenced `sh` block of README.md and docs/*.md runs as written (docs/development.md "Blocks
 * that run as written"): against one fresh `pricepoint serve --dev-data`, one after the other in page
 * order, each in a folder that stands in for the repository folder, every curl failing on an HTTP
 * error. A block this file does not run is in one of the two reviewed lists below, with its reason:
 * run with its own assertions by another test, or needing what a test cannot have. A new block is
 * run here until someone adds it to a list; an entry whose block is gone fails, so the lists stay true.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { docPages, repositoryLike, runShBlock, type ShBlock, shBlocks } from '../helpers/doc-blocks.js';
import { cleanUp, REPO, type ServerProcess, startServer, tempDir } from '../helpers/process.js';

/** A block is named by its page and its first line. */
interface Listed {
  readonly file: string;
  readonly first: string;
}

/** Blocks another test runs as written, with assertions on what they print. */
const RUN_ELSEWHERE: readonly (Listed & { readonly test: string })[] = [
  {
    file: 'README.md',
    first: 'export PRICEPOINT_CONFIG=pricepoint.yaml',
    test: 'test/cli/readme-open-prices.test.ts',
  },
  {
    file: 'README.md',
    first: 'PRICEPOINT_CONFIG=pricepoint.yaml npx pricepoint sources run nl',
    test: 'test/cli/readme-open-prices.test.ts',
  },
  {
    file: 'docs/operating.md',
    first: 'export PRICEPOINT_DATA_DIR=.pricepoint/example PRICEPOINT_PORT=8444',
    test: 'test/cli/readme-example.test.ts',
  },
  {
    file: 'docs/python.md',
    first: 'python3 -m venv --system-site-packages .venv',
    test: 'test/client/python-client.test.ts',
  },
  {
    file: 'docs/real-prices.md',
    first: 'export ENTSOE_TOKEN=...            # your token',
    test: 'test/cli/readme-sources.test.ts',
  },
  {
    file: 'docs/real-prices.md',
    first: 'npx pricepoint sources status',
    test: 'test/cli/readme-sources.test.ts',
  },
  {
    file: 'docs/real-prices.md',
    first: 'curl --cacert .pricepoint/tls/localhost-cert.pem -H "x-api-key: $KEY" \\',
    test: 'test/cli/readme-sources.test.ts',
  },
];

/** Blocks that need what a test cannot have, and why. */
const NOT_RUN: readonly (Listed & { readonly why: string })[] = [
  {
    file: 'README.md',
    first: 'npm ci && npm start',
    why: 'the install and start every run of this suite begins with; test/cli/fast-start.test.ts starts as npm start does',
  },
  { file: 'README.md', first: 'npm test', why: 'the whole suite, this test among it' },
  {
    file: 'docs/operating.md',
    first: 'export PRICEPOINT_DATABASE_URL=postgres://pricepoint:secret@127.0.0.1:5432/pricepoint',
    why: "an operator's PostgreSQL role and database, and three servers left running; test/scale/nginx.test.ts runs the same instances",
  },
  {
    file: 'docs/usage-history.md',
    first: 'day=$(date -u -d yesterday +%F)',
    why: "sends events to an OpenMeter and to Stripe on the internet with the operator's tokens; test/services/usage-export.test.ts checks the lines they send",
  },
];

/** What some blocks must print besides running: the point of the block, checked. */
const PRINTS: readonly (Listed & { readonly pattern: RegExp })[] = [
  {
    file: 'README.md',
    first: 'curl --cacert .pricepoint/tls/localhost-cert.pem \\',
    pattern: /^\{"generatedAt"/,
  },
  { file: 'README.md', first: 'cacert=.pricepoint/tls/localhost-cert.pem', pattern: /^304$/m },
  { file: 'README.md', first: 'KEY=pp_demo_TryPricepointDemo2026x1pqsyk', pattern: /"cheapest":\{"start"/ },
  {
    file: 'README.md',
    first: 'KEY=$(npx pricepoint keys create --tier pro --scopes read,write --name uploads --json |',
    pattern: /^\{"symbol":"NO1","written":\d+\}$/m,
  },
  {
    file: 'docs/webhooks.md',
    first: 'ADMIN_KEY=$(npx pricepoint keys create --tier pro --scopes read,admin --name hooks --json |',
    pattern: /"secret":"whsec_/,
  },
];

/** Blocks of a stream that never ends: each curl is stopped after a few seconds. */
const ENDLESS = new Set(['curl -N --cacert .pricepoint/tls/localhost-cert.pem \\']);

const firstLine = (block: ShBlock) => block.text.split('\n')[0] ?? '';
const named = (list: readonly Listed[], block: ShBlock) =>
  list.find((entry) => entry.file === block.file && entry.first === firstLine(block));

const blocks = docPages().flatMap(shBlocks);

describe('every sh block of README.md and docs/ runs as written', () => {
  test('the reviewed lists name blocks that exist, and the tests they name run those pages', () => {
    for (const entry of [...RUN_ELSEWHERE, ...NOT_RUN, ...PRINTS]) {
      assert.ok(
        blocks.some((block) => block.file === entry.file && firstLine(block) === entry.first),
        `${entry.file} has no sh block starting "${entry.first}": update the list`,
      );
    }
    for (const entry of RUN_ELSEWHERE) {
      assert.ok(existsSync(join(REPO, entry.test)), `${entry.test} exists`);
      const page = entry.file === 'README.md' ? "'README.md'" : `'${entry.file.slice('docs/'.length)}'`;
      assert.ok(
        readFileSync(join(REPO, entry.test), 'utf8').includes(page),
        `${entry.test} reads ${entry.file}`,
      );
    }
    for (const entry of NOT_RUN) assert.ok(entry.why.length > 20, `${entry.first}: a reason`);
  });

  describe('against a fresh server with the development data set', () => {
    let server: ServerProcess;
    let folder: string;
    before(async () => {
      const dataDir = await tempDir('pricepoint-doc-blocks-');
      server = await startServer(['serve', '--dev-data'], { PRICEPOINT_DATA_DIR: dataDir });
      folder = await repositoryLike(dataDir);
    });
    after(cleanUp);

    for (const block of blocks) {
      if (named(RUN_ELSEWHERE, block) || named(NOT_RUN, block)) continue;
      test(`${block.file}:${block.line} (${firstLine(block)})`, async () => {
        const endless = ENDLESS.has(firstLine(block));
        const run = await runShBlock(block.text, {
          folder,
          port: server.port,
          curlSeconds: endless ? 3 : undefined,
        });
        const printed = `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;
        if (endless) {
          // Stopped by its --max-time (28) after the stream opened and said how to resume.
          assert.equal(run.code, 28, printed);
          assert.match(run.stdout, /^retry: \d+$/m, printed);
        } else {
          assert.equal(run.code, 0, printed);
        }
        assert.doesNotMatch(run.stdout, /"status":\s*[45]\d\d/, `no problem answer: ${printed}`);
        const expected = PRINTS.find(
          (entry) => entry.file === block.file && entry.first === firstLine(block),
        );
        if (expected) assert.match(run.stdout, expected.pattern, printed);
      });
    }
  });
});
