/**
 * `pricepoint mcp` (docs/mcp.md), spawned by the official SDK's stdio client as Claude Desktop would,
 * against a live `pricepoint serve --dev-data`: the tools it lists, each one called over HTTPS with
 * the key of PRICEPOINT_API_KEY, a bad input and a bad key answered with the API's problem, and
 * each call counted against the key (a tier of two requests a day runs out through MCP).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  BIN,
  cleanUp,
  cliEnv,
  httpsClient,
  onlyJson,
  runCli,
  type ServerProcess,
  type Settings,
  startServer,
  tempDir,
} from '../helpers/process.js';

const DEMO_KEY = 'pp_demo_TryPricepointDemo2026x1pqsyk';

let server: ServerProcess;
let settings: Settings;
let certFile: string;
const clients: Client[] = [];
before(async () => {
  const dataDir = await tempDir();
  // Two requests a day: the day window outlasts the test, whenever it runs.
  const configFile = join(dataDir, 'tiers.json');
  writeFileSync(
    configFile,
    JSON.stringify({ tiers: { scant: { limits: [{ name: 'day', limit: 2, windowSeconds: 86400 }] } } }),
  );
  settings = { PRICEPOINT_DATA_DIR: dataDir, PRICEPOINT_CONFIG: configFile };
  server = await startServer(['serve', '--dev-data', '--json'], settings);
  certFile = String(server.info?.certFile);
});
after(async () => {
  for (const client of clients) await client.close();
  await server.stop();
  await cleanUp();
});

/** `pricepoint mcp` started by the SDK's stdio client with `env` (the key, the URL, the CA). */
async function connect(env: Record<string, string>): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp'],
    env: cliEnv({ NODE_EXTRA_CA_CERTS: certFile, ...env }) as Record<string, string>,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'pricepoint-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

type ToolAnswer = { content: { type: string; text: string }[]; isError?: boolean };

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const answer = (await client.callTool({ name, arguments: args })) as ToolAnswer;
  return { isError: answer.isError === true, body: JSON.parse(answer.content[0]?.text ?? '') };
}

describe('pricepoint mcp over stdio', () => {
  test('lists the tools and answers each with the API of PRICEPOINT_URL', async () => {
    const client = await connect({ PRICEPOINT_URL: server.url, PRICEPOINT_API_KEY: DEMO_KEY });
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ['list_series', 'get_prices_for_day', 'get_price_range', 'get_latest_prices', 'find_cheapest_window'],
    );
    const catalogue = await call(client, 'list_series', { symbols: 'NO1,EURUSD' });
    assert.deepEqual(
      catalogue.body.series.map((s: { symbol: string }) => s.symbol),
      ['NO1', 'EURUSD'],
    );
    const day = await call(client, 'get_prices_for_day', {
      date: 'today',
      symbols: 'NO1',
      tariff: 'no1-household',
      include: 'rank',
      resolution: 'PT1H',
    });
    assert.equal(day.isError, false, JSON.stringify(day.body));
    const hour = day.body.series[0].prices[0];
    for (const key of ['total', 'spot', 'fees', 'vat', 'rank', 'level']) assert.ok(key in hour, key);
    const range = await call(client, 'get_price_range', { from: 'yesterday', to: 'today', symbols: 'NO1' });
    assert.equal(range.body.series.length, 2);
    const latest = await call(client, 'get_latest_prices', { symbols: 'BTC-USD' });
    assert.equal(latest.body.series[0].prices.length, 1);
    const cheapest = await call(client, 'find_cheapest_window', {
      symbols: 'NO1',
      from: 'today',
      to: 'tomorrow',
      duration: 'PT2H',
    });
    assert.equal(cheapest.isError, false, JSON.stringify(cheapest.body));
    assert.equal(cheapest.body.series[0].cheapest.prices.length, 8, 'two hours of quarter hours');
  });

  test('a bad input and a bad key come back as the problem the API answered, as the tool error', async () => {
    const client = await connect({ PRICEPOINT_URL: server.url, PRICEPOINT_API_KEY: DEMO_KEY });
    const bad = await call(client, 'get_prices_for_day', { date: '2026-02-30' });
    assert.equal(bad.isError, true);
    assert.equal(bad.body.code, 'invalid_parameter');
    const stranger = await connect({
      PRICEPOINT_URL: server.url,
      PRICEPOINT_API_KEY: 'pp_live_0000000000000000000000000000000000',
    });
    const refused = await call(stranger, 'list_series', {});
    assert.equal(refused.isError, true);
    assert.equal(refused.body.code, 'invalid_api_key');
    assert.equal(refused.body.status, 401);
  });

  test('without PRICEPOINT_API_KEY the command refuses to start and says why', async () => {
    const run = await runCli(['mcp'], { PRICEPOINT_URL: server.url });
    assert.equal(run.code, 2);
    assert.match(run.stderr, /PRICEPOINT_API_KEY/);
    assert.equal(run.stdout, '');
  });

  test('each tool call is counted against the key: a tier of two a day answers the third rate_limited', async () => {
    const created = await runCli(
      ['keys', 'create', '--tier', 'scant', '--name', 'agent', '--json'],
      settings,
    );
    const key = (onlyJson(created) as { key: string }).key;
    const client = await connect({ PRICEPOINT_URL: server.url, PRICEPOINT_API_KEY: key });
    await client.listTools();
    const usage = httpsClient(certFile);
    const left = async () =>
      JSON.parse((await usage.get(`${server.url}/api/v1/usage`, { 'x-api-key': key })).text).limits[0]
        .remaining;
    assert.equal(await left(), 2, 'starting and listing tools take nothing');
    assert.equal((await call(client, 'get_latest_prices', { symbols: 'NO1' })).isError, false);
    assert.equal(await left(), 1);
    assert.equal((await call(client, 'list_series', {})).isError, false);
    const refused = await call(client, 'get_latest_prices', { symbols: 'NO1' });
    assert.equal(refused.isError, true);
    assert.equal(refused.body.code, 'rate_limited');
    assert.equal(await left(), 0);
    await usage.close();
  });
});
