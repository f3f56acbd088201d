/**
 * docs/real-prices.md, step by step, with its own config block and
 * commands, against a local stand-in for both upstreams (each source's `baseUrl` added to the
 * page's block: the only change) serving fixture documents. Runs are asked for the fixtures'
 * days (`--from`/`--to`), since the scheduled window follows the clock.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse, stringify } from 'yaml';
import {
  cleanUp,
  httpsClient,
  REPO,
  runCli,
  type ServerProcess,
  startServer,
  tempDir,
} from '../helpers/process.js';
import { FakeUpstream, fixture } from '../sources/fake-upstream.js';

const TOKEN = 'readme-token-5d6e7f';
const section = (() => {
  const page = readFileSync(join(REPO, 'docs', 'real-prices.md'), 'utf8');
  assert.ok(
    page.startsWith('# Real prices from ENTSO-E and the ECB'),
    'docs/real-prices.md is the walk-through',
  );
  return page;
})();

/** The section's YAML block, its indentation removed. */
function readmeConfig(): { sources: Record<string, Record<string, unknown>> } {
  const block = /```yaml\n([\s\S]*?)\n\s*```/.exec(section)?.[1];
  assert.ok(block, 'the section has a yaml block');
  const indent = /^ */.exec(block)?.[0].length ?? 0;
  return parse(
    block
      .split('\n')
      .map((line) => line.slice(indent))
      .join('\n'),
  );
}

/** The NO1 fixture of 2026-11-23 with a price at each of its 24 hours (the fixture leaves gaps). */
function wholeDay(): string {
  const text = fixture('entsoe/no1-a01-pt60m.xml').toString('utf8');
  const head = text.slice(0, text.indexOf('<Point>'));
  const tail = text.slice(text.lastIndexOf('</Point>') + '</Point>'.length);
  const points = Array.from(
    { length: 24 },
    (_, i) => `<Point><position>${i + 1}</position><price.amount>${40 + i}.25</price.amount></Point>`,
  );
  return `${head}${points.join('\n')}${tail}`;
}

describe('docs/real-prices.md: real prices from ENTSO-E and the ECB', () => {
  let upstream: FakeUpstream;
  let settings: Record<string, string>;
  let server: ServerProcess | undefined;
  let key = '';

  const cli = async (...args: string[]) => {
    const output = await runCli(args, settings);
    for (const text of [output.stdout, output.stderr]) assert.ok(!text.includes(TOKEN), 'the token leaked');
    assert.equal(output.code, 0, `${args.join(' ')}: ${output.stderr}`);
    return output.stdout;
  };

  before(async () => {
    upstream = await new FakeUpstream().start();
    upstream.answer('/api', { body: wholeDay() });
    upstream.answer('/stats/eurofxref/eurofxref-daily.xml', { body: fixture('ecb/eurofxref-daily.xml') });
    upstream.answer('/stats/eurofxref/eurofxref-hist-90d.xml', {
      body: fixture('ecb/eurofxref-hist-90d.xml'),
    });
    const dataDir = await tempDir();
    const config = readmeConfig();
    assert.deepEqual(Object.keys(config.sources), ['entsoe-no1', 'ecb']);
    assert.equal(config.sources['entsoe-no1']?.token, `\${ENTSOE_TOKEN}`, 'the token is named, not written');
    (config.sources['entsoe-no1'] as Record<string, unknown>).baseUrl = upstream.url('/api');
    (config.sources.ecb as Record<string, unknown>).baseUrl = upstream.url('/stats/eurofxref');
    const file = join(dataDir, 'pricepoint.yaml');
    writeFileSync(file, stringify(config));
    settings = { PRICEPOINT_CONFIG: file, PRICEPOINT_DATA_DIR: dataDir, ENTSOE_TOKEN: TOKEN };
  });
  after(async () => {
    await server?.stop();
    await upstream.close();
    await cleanUp();
  });

  test('3. a key to read with, and the server starts with both sources', async () => {
    assert.match(section, /keys create --tier pro --scopes read,admin --name me --json/);
    key = JSON.parse(
      await cli('keys', 'create', '--tier', 'pro', '--scopes', 'read,admin', '--name', 'me', '--json'),
    ).key;
    assert.match(key, /^pp_/);
    server = await startServer(['serve'], settings);
  });

  test('4. sources run fetches the days and sources status shows the runs', async () => {
    const day = JSON.parse(
      await cli('sources', 'run', 'entsoe-no1', '--from', '2026-11-23', '--to', '2026-11-23', '--json'),
    );
    assert.equal(day.outcome, 'written', JSON.stringify(day));
    const rates = JSON.parse(
      await cli('sources', 'run', 'ecb', '--from', '2026-11-20', '--to', '2026-11-20', '--json'),
    );
    assert.equal(rates.outcome, 'written', JSON.stringify(rates));
    const status = await cli('sources', 'status');
    assert.match(status, /entsoe-no1/);
    assert.match(status, /ecb/);
    const client = httpsClient(join(settings.PRICEPOINT_DATA_DIR ?? '', 'tls', 'localhost-cert.pem'));
    const listed = await client.get(`${server?.url}/api/v1/sources`, { 'x-api-key': key });
    assert.equal(listed.status, 200, listed.text);
    assert.ok(!listed.text.includes(TOKEN));
    assert.deepEqual(
      (JSON.parse(listed.text) as { sources: { name: string }[] }).sources.map((s) => s.name),
      ['entsoe-no1', 'ecb'],
    );
  });

  test('5. the day reads back, complete, from entsoe-no1; the rates as EURNOK', async () => {
    const client = httpsClient(join(settings.PRICEPOINT_DATA_DIR ?? '', 'tls', 'localhost-cert.pem'));
    const answer = await client.get(`${server?.url}/api/v1/prices/2026-11-23?symbols=NO1`, {
      'x-api-key': key,
    });
    assert.equal(answer.status, 200, answer.text);
    const [no1] = (
      JSON.parse(answer.text) as {
        series: { symbol: string; complete: boolean; source: string; prices: unknown[] }[];
      }
    ).series;
    assert.deepEqual(
      [no1?.symbol, no1?.complete, no1?.source, no1?.prices.length],
      ['NO1', true, 'entsoe-no1', 24],
    );
    const fx = await client.get(`${server?.url}/api/v1/prices/2026-11-20?symbols=EURNOK`, {
      'x-api-key': key,
    });
    assert.equal(fx.status, 200, fx.text);
    assert.equal((JSON.parse(fx.text) as { series: { source: string }[] }).series[0]?.source, 'ecb');
  });
});
