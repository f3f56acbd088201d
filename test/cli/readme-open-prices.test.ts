/**
 * README.md's "Real prices without a token" as a newcomer follows it: its config block (with the
 * source's `baseUrl` pointed at a local stand-in for Energy-Charts: the only change), the server
 * started as its first block starts it, and its second block run as written. The stand-in serves
 * quarter hours around now in Energy-Charts' `/price` format, so today's NL comes back real,
 * complete, named by its source and with its licence.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse, stringify } from 'yaml';
import { repositoryLike, runShBlock, shBlocks } from '../helpers/doc-blocks.js';
import { cleanUp, REPO, type ServerProcess, startServer, tempDir } from '../helpers/process.js';
import { FakeUpstream } from '../sources/fake-upstream.js';

const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
const section = readme.split('\n## Real prices without a token\n')[1]?.split('\n## ')[0] ?? '';
const sectionStart = readme.slice(0, readme.indexOf('\n## Real prices without a token\n')).split('\n').length;
const [startBlock, fetchBlock] = shBlocks('README.md').filter((block) => block.line > sectionStart);

const QUARTER = 15 * 60_000;
/** The price the stand-in gives the quarter hour starting at `start`: 40.00 to 63.75 over a day. */
const priceAt = (start: number) => 40 + ((start / QUARTER) % 96) / 4;

/** Energy-Charts' `/price?bzn=NL` answer: the quarter hours of three days either side of now. */
function energyChartsPrices(now: number): string {
  const first = Math.floor(now / QUARTER) * QUARTER - 3 * 86_400_000;
  const starts = Array.from({ length: 6 * 96 }, (_, i) => first + i * QUARTER);
  return JSON.stringify({
    license_info: 'CC BY 4.0 (creativecommons.org/licenses/by/4.0) from Bundesnetzagentur | SMARD.de',
    unix_seconds: starts.map((start) => start / 1000),
    price: starts.map(priceAt),
    unit: 'EUR / MWh',
    deprecated: false,
  });
}

describe('README: real prices without a token', () => {
  let upstream: FakeUpstream;
  let server: ServerProcess;
  let folder: string;

  before(async () => {
    upstream = await new FakeUpstream().start();
    upstream.answer('/price', {
      headers: { 'content-type': 'application/json' },
      body: energyChartsPrices(Date.now()),
    });
    const dataDir = await tempDir('pricepoint-readme-open-');
    folder = await repositoryLike(dataDir);
    const block = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
    assert.ok(block, 'the section has a yaml block');
    const config = parse(block) as { sources: Record<string, Record<string, unknown>> };
    assert.deepEqual(config, { sources: { nl: { type: 'energycharts', zone: 'NL' } } });
    (config.sources.nl as Record<string, unknown>).baseUrl = upstream.url('/');
    writeFileSync(join(folder, 'pricepoint.yaml'), stringify(config));
    // The first block exports the config file and runs `npm start`, which serves with --dev-data.
    assert.equal(startBlock?.text, 'export PRICEPOINT_CONFIG=pricepoint.yaml\nnpm start\n');
    server = await startServer(
      ['serve', '--dev-data'],
      { PRICEPOINT_CONFIG: 'pricepoint.yaml' },
      { cwd: folder },
    );
  });
  after(async () => {
    await cleanUp();
    await upstream.close();
  });

  test('the second block fetches NL and reads today back, complete, from the source nl, with its licence', async () => {
    assert.ok(fetchBlock, 'the section has a second sh block');
    const run = await runShBlock(fetchBlock.text, { folder, port: server.port });
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    assert.ok(
      upstream.requests.some((url) => url.pathname === '/price' && url.searchParams.get('bzn') === 'NL'),
      'the source asked the stand-in',
    );
    const line = run.stdout.split('\n').find((text) => text.startsWith('{"generatedAt"'));
    assert.ok(line, `the curl answered prices: ${run.stdout}`);
    const [nl] = (
      JSON.parse(line) as {
        series: {
          symbol: string;
          complete: boolean;
          source: string;
          license: string | null;
          attribution: string | null;
          prices: { start: string; price: number }[];
        }[];
      }
    ).series;
    assert.deepEqual([nl?.symbol, nl?.complete, nl?.source], ['NL', true, 'nl']);
    assert.deepEqual(
      [nl?.license, nl?.attribution],
      ['CC-BY-4.0', 'CC BY 4.0 (creativecommons.org/licenses/by/4.0) from Bundesnetzagentur | SMARD.de'],
      'the licence the README names, and the credit the upstream asks for',
    );
    assert.ok((nl?.prices.length ?? 0) >= 92, 'a whole day of quarter hours');
    for (const { start, price } of nl?.prices ?? []) assert.equal(price, priceAt(Date.parse(start)), start);
  });
});
