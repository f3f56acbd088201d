/**
 * README.md's "Real prices without a token" as a newcomer follows it: its config block (with the
 * source's `baseUrl` pointed at a local stand-in for Energi Data Service: the only change), the server
 * started as its first block starts it, and its second block run as written. The stand-in serves
 * quarter hours around now, so today's DK1 comes back real, complete and named by its source.
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

/** Energi Data Service's `DayAheadPrices` answer: the quarter hours of three days either side of now. */
function dayAheadPrices(now: number): string {
  const first = Math.floor(now / QUARTER) * QUARTER - 3 * 86_400_000;
  const records = Array.from({ length: 6 * 96 }, (_, i) => {
    const start = first + i * QUARTER;
    return {
      TimeUTC: new Date(start).toISOString().slice(0, 19),
      PriceArea: 'DK1',
      DayAheadPriceEUR: priceAt(start),
    };
  });
  return JSON.stringify({ total: records.length, dataset: 'DayAheadPrices', records });
}

describe('README: real prices without a token', () => {
  let upstream: FakeUpstream;
  let server: ServerProcess;
  let folder: string;

  before(async () => {
    upstream = await new FakeUpstream().start();
    upstream.answer('/dataset/DayAheadPrices', {
      headers: { 'content-type': 'application/json' },
      body: dayAheadPrices(Date.now()),
    });
    const dataDir = await tempDir('pricepoint-readme-open-');
    folder = await repositoryLike(dataDir);
    const block = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
    assert.ok(block, 'the section has a yaml block');
    const config = parse(block) as { sources: Record<string, Record<string, unknown>> };
    assert.deepEqual(config, {
      sources: { dk1: { type: 'energidataservice', area: 'DK1', currency: 'EUR' } },
    });
    (config.sources.dk1 as Record<string, unknown>).baseUrl = upstream.url('/');
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

  test('the second block fetches DK1 and reads today back, complete, from the source dk1', async () => {
    assert.ok(fetchBlock, 'the section has a second sh block');
    const run = await runShBlock(fetchBlock.text, { folder, port: server.port });
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    assert.ok(
      upstream.requests.some((url) => url.pathname === '/dataset/DayAheadPrices'),
      'the source asked the stand-in',
    );
    const line = run.stdout.split('\n').find((text) => text.startsWith('{"generatedAt"'));
    assert.ok(line, `the curl answered prices: ${run.stdout}`);
    const [dk1] = (
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
    assert.deepEqual([dk1?.symbol, dk1?.complete, dk1?.source], ['DK1', true, 'dk1']);
    assert.deepEqual(
      [dk1?.license, dk1?.attribution],
      ['CC-BY-4.0', 'Source: Energinet (www.energidataservice.dk)'],
      'the terms the README names',
    );
    assert.ok((dk1?.prices.length ?? 0) >= 92, 'a whole day of quarter hours');
    for (const { start, price } of dk1?.prices ?? []) assert.equal(price, priceAt(Date.parse(start)), start);
  });
});
