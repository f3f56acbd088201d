/**
 * How many event streams a key may hold open (docs/events.md, "Bounded"): the tier's `streams`,
 * counted the way the tier counts requests, so the shared demo key's streams are shared fairly
 * between the clients using it. Real TLS connections from several loopback addresses.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { DEFAULT_TIERS, mergeTiers, type TierOverride } from '../../src/domain/limits/tiers.js';
import { createHarness, listenHttps, testTls } from '../helpers/harness.js';

/** Room for every stream these tests open: the limits are not what is tested here. */
const ROOMY = [{ name: 'minute', limit: 10_000, windowSeconds: 60 }];

interface Opened {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** The problem's JSON for a refusal. */
  readonly problem?: { detail?: string; 'violated-policies'?: string[] };
}

async function serverWith(tiers: Record<string, TierOverride>) {
  const h = await createHarness({
    https: true,
    config: { tiers: mergeTiers(DEFAULT_TIERS, tiers) },
  });
  const server = await listenHttps(h);
  const { cert } = await testTls();
  const agents = new Map<string, Agent>();
  const streams: { destroy(): void }[] = [];
  return {
    h,
    /** Opens a stream with `key` from `address` (127.0.0.0/8 is all loopback); it stays open. */
    async open(key: string, address: string): Promise<Opened> {
      let agent = agents.get(address);
      if (agent === undefined) {
        agent = new Agent({ localAddress: address, connect: { ca: cert, servername: 'localhost' } });
        agents.set(address, agent);
      }
      const response = await request(`https://127.0.0.1:${server.port}/api/v1/events`, {
        headers: { 'x-api-key': key },
        dispatcher: agent,
      });
      if (response.statusCode === 200) {
        streams.push(response.body);
        return { status: 200, headers: response.headers };
      }
      const problem = (await response.body.json()) as Opened['problem'];
      return { status: response.statusCode, headers: response.headers, ...(problem && { problem }) };
    },
    async close() {
      for (const stream of streams) stream.destroy();
      for (const agent of agents.values()) await agent.close();
      await server.close();
      await h.close();
    },
  };
}

type Server = Awaited<ReturnType<typeof serverWith>>;

/** Opens `count` streams and returns their statuses. */
async function statuses(server: Server, key: string, address: string, count: number): Promise<number[]> {
  const opened: number[] = [];
  for (let n = 0; n < count; n++) opened.push((await server.open(key, address)).status);
  return opened;
}

describe('open event streams are counted as the tier counts requests', () => {
  const servers: Server[] = [];
  after(async () => {
    for (const server of servers) await server.close();
  });

  test('one client at five addresses holds 50 demo streams, and another client still gets one', async () => {
    const server = await serverWith({ demo: { limits: ROOMY } });
    servers.push(server);
    const demo = server.h.demoKey;
    for (let n = 2; n <= 6; n++) {
      assert.deepEqual(await statuses(server, demo, `127.0.0.${n}`, 10), Array(10).fill(200));
    }
    // Another user of the demo key, at another address.
    assert.equal((await server.open(demo, '127.0.0.7')).status, 200);
    // One address holds at most the demo tier's 50.
    assert.deepEqual(await statuses(server, demo, '127.0.0.2', 40), Array(40).fill(200));
    const refused = await server.open(demo, '127.0.0.2');
    assert.equal(refused.status, 429);
    assert.match(String(refused.headers['content-type']), /^application\/problem\+json/);
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.deepEqual(refused.problem?.['violated-policies'], ['streams']);
    assert.equal(refused.problem?.detail, 'This key already holds 50 open event streams from this address.');
  });

  test("the tier's streams setting is the bound, per key where the tier counts per key", async () => {
    const server = await serverWith({
      demo: { limits: ROOMY, streams: 2 },
      free: { limits: ROOMY, streams: 2 },
    });
    servers.push(server);
    const demo = server.h.demoKey;
    assert.deepEqual(await statuses(server, demo, '127.0.0.2', 3), [200, 200, 429]);
    assert.deepEqual(await statuses(server, demo, '127.0.0.3', 3), [200, 200, 429]);

    const free = (await server.h.createKey({ tier: 'free', scopes: ['read'] })).key;
    assert.deepEqual(await statuses(server, free, '127.0.0.2', 1), [200]);
    assert.deepEqual(await statuses(server, free, '127.0.0.3', 2), [200, 429]);
    const refused = await server.open(free, '127.0.0.4');
    assert.equal(refused.problem?.detail, 'This key already holds 2 open event streams.');
  });
});
