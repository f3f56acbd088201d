/**
 * The MCP streamable HTTP transport at `POST /mcp` (docs/mcp.md), driven by the official SDK's own
 * client over real HTTPS: the tools it lists, each one called, a bad input answered with the API's
 * problem as the tool's error, a missing or bad key refused, and every tool call counted against the
 * key's limits like the API call it makes. The harness clock stands still, so one window holds all.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fetch as undiciFetch } from 'undici';
import { DEFAULT_TIERS, type Tier } from '../../src/domain/limits/tiers.js';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';

/** A tier with room for three requests a minute. */
const tiny: Tier = {
  name: 'tiny',
  limits: [{ name: 'minute', limit: 3, windowSeconds: 60 }],
  countPer: 'key',
  kinds: null,
  historyDays: null,
  streams: 1,
};

let h: Harness;
let server: Awaited<ReturnType<typeof listenHttps>>;
before(async () => {
  h = await createHarness({ https: true, config: { tiers: { ...DEFAULT_TIERS, tiny } } });
  server = await listenHttps(h);
});
after(async () => {
  await server.close();
  await h.close();
});

/** An SDK client connected to `/mcp` with `headers` on every request. */
async function connect(headers: Record<string, string>): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`), {
    requestInit: { headers },
    // The test certificate is trusted through the harness' own agent.
    fetch: ((url: string | URL, init?: RequestInit) =>
      undiciFetch(url, { ...(init as object), dispatcher: server.agent })) as unknown as typeof fetch,
  });
  const client = new Client({ name: 'pricepoint-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

type ToolAnswer = { content: { type: string; text: string }[]; isError?: boolean };

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const answer = (await client.callTool({ name, arguments: args })) as ToolAnswer;
  assert.equal(answer.content[0]?.type, 'text');
  return { isError: answer.isError === true, body: JSON.parse(answer.content[0]?.text ?? '') };
}

const remaining = async (key: string) => {
  const usage = await server.get('/api/v1/usage', { 'x-api-key': key });
  return (JSON.parse(usage.text) as { limits: { remaining: number }[] }).limits[0]?.remaining;
};

describe('POST /mcp with the SDK client', () => {
  test('lists the five tools, each with the input schema of its API route', async () => {
    const client = await connect({ 'x-api-key': h.demoKey });
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ['list_series', 'get_prices_for_day', 'get_price_range', 'get_latest_prices', 'find_cheapest_window'],
    );
    const day = tools.find((t) => t.name === 'get_prices_for_day');
    assert.deepEqual(day?.inputSchema.required, ['date']);
    for (const parameter of ['symbols', 'tz', 'currency', 'unit', 'tariff', 'include', 'resolution']) {
      assert.ok(day?.inputSchema.properties?.[parameter], `get_prices_for_day takes ${parameter}`);
    }
    assert.equal(day?.inputSchema.properties?.format, undefined, 'a tool always answers JSON');
    const cheapest = tools.find((t) => t.name === 'find_cheapest_window');
    assert.deepEqual(cheapest?.inputSchema.required, ['symbols', 'from', 'to']);
    await client.close();
  });

  test('each tool answers what the API answers the same key', async () => {
    const client = await connect({ authorization: `Bearer ${h.demoKey}` });
    const headers = { 'x-api-key': h.demoKey };
    const api = async (path: string) => JSON.parse((await server.get(path, headers)).text);

    const catalogue = await call(client, 'list_series', {});
    assert.equal(catalogue.isError, false);
    assert.deepEqual(catalogue.body, await api('/api/v1/series'));

    const day = await call(client, 'get_prices_for_day', {
      date: 'today',
      symbols: 'NO1',
      currency: 'NOK',
      unit: 'kWh',
      tariff: 'no1-household',
      include: 'rank',
    });
    assert.equal(day.isError, false, JSON.stringify(day.body));
    const entry = day.body.series[0];
    assert.equal(entry.currency, 'NOK');
    assert.equal(entry.unit, 'kWh');
    assert.equal(entry.prices.length, 96);
    for (const key of ['total', 'spot', 'fees', 'vat', 'rank', 'level'])
      assert.ok(key in entry.prices[0], key);
    assert.deepEqual(
      { ...day.body, generatedAt: null },
      {
        ...(await api(
          '/api/v1/prices/today?symbols=NO1&currency=NOK&unit=kWh&tariff=no1-household&include=rank',
        )),
        generatedAt: null,
      },
    );

    const range = await call(client, 'get_price_range', {
      from: 'yesterday',
      to: 'today',
      symbols: ['NO1', 'DE-LU'],
    });
    assert.deepEqual(
      range.body.series.map((s: { symbol: string; date: string }) => `${s.symbol} ${s.date}`),
      ['NO1 2026-11-21', 'NO1 2026-11-22', 'DE-LU 2026-11-21', 'DE-LU 2026-11-22'],
    );

    const latest = await call(client, 'get_latest_prices', { symbols: 'EURUSD' });
    assert.equal(latest.body.series[0].symbol, 'EURUSD');
    assert.equal(latest.body.series[0].prices.length, 1);

    const cheapest = await call(client, 'find_cheapest_window', {
      symbols: 'NO1',
      from: 'today',
      to: 'tomorrow',
      duration: 'PT3H',
    });
    assert.equal(cheapest.isError, false, JSON.stringify(cheapest.body));
    assert.deepEqual(
      cheapest.body,
      await api('/api/v1/prices/cheapest?symbols=NO1&from=today&to=tomorrow&duration=PT3H'),
    );
    await client.close();
  });

  test('a bad input is the problem the API answers, as the tool error', async () => {
    const client = await connect({ 'x-api-key': h.demoKey });
    const badZone = await call(client, 'get_latest_prices', { tz: 'Mars/Olympus' });
    assert.equal(badZone.isError, true);
    assert.equal(badZone.body.code, 'invalid_parameter');
    assert.equal(badZone.body.parameter, 'tz');
    assert.equal(badZone.body.status, 400);
    const unknown = await call(client, 'get_prices_for_day', { date: 'today', symbols: 'NOPE' });
    assert.equal(unknown.isError, true);
    assert.equal(unknown.body.code, 'unknown_series');
    const missing = await call(client, 'find_cheapest_window', { symbols: 'NO1' });
    assert.equal(missing.isError, true);
    assert.equal(missing.body.code, 'invalid_parameter');
    const extra = await call(client, 'list_series', { colour: 'blue' });
    assert.equal(extra.isError, true);
    assert.equal(extra.body.parameter, 'colour');
    await client.close();
  });

  test('without a key, or with a bad one, /mcp answers 401 problem+json and the client cannot connect', async () => {
    const none = await server.request('POST', '/mcp', {
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(none.status, 401);
    assert.match(String(none.headers['content-type']), /^application\/problem\+json/);
    assert.equal(JSON.parse(none.text).code, 'missing_api_key');
    await assert.rejects(connect({}), /401/);
    await assert.rejects(connect({ 'x-api-key': 'pp_live_0000000000000000000000000000000000' }), /401/);
  });

  test('a POST no MCP client would send is answered problem+json, not a JSON-RPC error', async () => {
    const post = (headers: Record<string, string>, body: string) =>
      server.request('POST', '/mcp', { headers: { 'x-api-key': h.demoKey, ...headers }, body });
    const json = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const notJsonRpc = await post(json, '5');
    assert.equal(notJsonRpc.status, 400);
    assert.match(String(notJsonRpc.headers['content-type']), /^application\/problem\+json/);
    assert.equal(JSON.parse(notJsonRpc.text).code, 'invalid_parameter');
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const jsonOnly = await post({ ...json, accept: 'application/json' }, list);
    assert.equal(jsonOnly.status, 406);
    assert.equal(JSON.parse(jsonOnly.text).code, 'not_acceptable');
    const listed = await post(json, list);
    assert.equal(listed.status, 200);
    assert.equal(JSON.parse(listed.text).result.tools.length, 5);
  });

  test('each tool call is counted against the key; past its limit the tool answers rate_limited', async () => {
    const { key } = await h.createKey({ tier: 'tiny' });
    const client = await connect({ 'x-api-key': key });
    await client.listTools();
    assert.equal(await remaining(key), 3, 'connecting and listing tools take nothing');
    assert.equal((await call(client, 'list_series', {})).isError, false);
    assert.equal(await remaining(key), 2);
    assert.equal((await call(client, 'get_latest_prices', { symbols: 'NO1' })).isError, false);
    assert.equal(
      (await call(client, 'get_prices_for_day', { date: 'today', symbols: 'NO1' })).isError,
      false,
    );
    assert.equal(await remaining(key), 0);
    const refused = await call(client, 'get_prices_for_day', { date: 'today', symbols: 'NO1' });
    assert.equal(refused.isError, true);
    assert.equal(refused.body.code, 'rate_limited');
    assert.equal(refused.body.status, 429);
    await client.close();
  });
});
