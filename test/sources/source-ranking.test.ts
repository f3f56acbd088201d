/**
 * Two sources that fill one series rank in the config file's order (docs/sources.md): the second
 * fills only the hours the first left missing and never overwrites a day the first delivered
 * complete; the first replaces what the second wrote.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { dayBounds } from '../../src/domain/time/days.js';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import { cleanUp, runCli, tempDir } from '../helpers/process.js';
import { FakeUpstream, fixture } from './fake-upstream.js';

/** The NO1 document of 2026-11-23 with `price(hour)` at every hour, or none where it answers undefined. */
function day(price: (hour: number) => string | undefined): string {
  const text = fixture('entsoe/no1-a01-pt60m.xml').toString('utf8');
  const head = text.slice(0, text.indexOf('<Point>'));
  const tail = text.slice(text.lastIndexOf('</Point>') + '</Point>'.length);
  const points = Array.from({ length: 24 }, (_, i) => price(i))
    .map((p, i) =>
      p === undefined ? '' : `<Point><position>${i + 1}</position><price.amount>${p}</price.amount></Point>`,
    )
    .filter((p) => p !== '');
  return `${head}${points.join('\n')}${tail}`;
}

describe('two sources for one series, ranked by the config file', () => {
  let upstream: FakeUpstream;
  let settings: Record<string, string>;
  let dataDir: string;

  before(async () => {
    upstream = await new FakeUpstream().start();
    dataDir = await tempDir();
    const file = join(dataDir, 'pricepoint.yaml');
    // Runs follow one another as fast as the test goes: the spacing of manual runs is off.
    const source = (name: string) =>
      `  ${name}:\n    type: entsoe\n    zone: NO1\n    token: \${ENTSOE_TOKEN}\n    baseUrl: ${upstream.url(`/${name}`)}\n    minSpacingSeconds: 0\n`;
    writeFileSync(file, `sources:\n${source('first')}${source('second')}`);
    settings = { PRICEPOINT_CONFIG: file, PRICEPOINT_DATA_DIR: dataDir, ENTSOE_TOKEN: 'tok-ranking' };
  });
  after(async () => {
    await upstream.close();
    await cleanUp();
  });

  const run = async (name: string) => {
    const output = await runCli(
      ['sources', 'run', name, '--from', '2026-11-23', '--to', '2026-11-23', '--json'],
      settings,
    );
    assert.equal(output.code, 0, output.stderr);
  };
  const stored = async () => {
    const stores = await openEmbeddedStores(join(dataDir, 'pricepoint.db'));
    try {
      const { start, end } = dayBounds('2026-11-23', 'Europe/Oslo');
      const prices = await stores.prices.pricesBetween('NO1', start, end);
      const [provenance] = (await stores.prices.dayProvenance?.('NO1', '2026-11-23', '2026-11-23')) ?? [];
      return {
        prices: prices.map((p) => p.price),
        source: provenance?.source,
        complete: provenance?.complete,
      };
    } finally {
      await stores.close();
    }
  };

  test('the second fills the hours the first left out, and the day keeps the first name', async () => {
    upstream.answer('/first', { body: day((h) => (h < 12 ? `1${h}.5` : undefined)) });
    upstream.answer('/second', { body: day((h) => `2${h}.5`) });
    await run('first');
    assert.deepEqual(await stored(), {
      prices: Array.from({ length: 12 }, (_, h) => `1${h}.5`),
      source: 'first',
      complete: false,
    });
    await run('second');
    const filled = await stored();
    assert.deepEqual(
      filled.prices,
      Array.from({ length: 24 }, (_, h) => (h < 12 ? `1${h}.5` : `2${h}.5`)),
    );
    assert.deepEqual([filled.source, filled.complete], ['first', true]);
  });

  test('a day the first delivered complete is left alone by the second, and replaced by the first', async () => {
    upstream.answer('/first', { body: day((h) => `3${h}.5`) });
    upstream.answer('/second', { body: day((h) => `4${h}.5`) });
    await run('first');
    await run('second');
    const kept = await stored();
    assert.deepEqual(
      kept.prices,
      Array.from({ length: 24 }, (_, h) => `3${h}.5`),
    );
    assert.deepEqual([kept.source, kept.complete], ['first', true]);
  });
});
