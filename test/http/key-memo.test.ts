/**
 * One connection, several keys: the fingerprint remembered per connection (src/services/
 * authenticator.ts `KeyMemo`) saves the hash of a key sent again, and never lets one key stand for
 * another. Each answer is counted to, and logged with, the key its own request sent, whichever way
 * in (the fast entry point or Fastify).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { generateKey } from '../../src/domain/keys/key-format.js';
import { createHarness, type Harness, listenHttps, testTls } from '../helpers/harness.js';

const PATH = '/api/v1/prices/today?symbols=NO1';

describe('keys on one keep-alive connection', () => {
  let h: Harness;
  let base: string;
  let agent: Agent;
  let connections = 0;
  before(async () => {
    h = await createHarness({ https: true });
    ({ base } = await listenHttps(h));
    // One keep-alive connection (the harness' own client opens one per request).
    agent = new Agent({ connect: { ca: (await testTls()).cert, servername: 'localhost' }, connections: 1 });
    h.app.server.on('secureConnection', () => {
      connections += 1;
    });
  });
  after(async () => {
    await agent.close();
    await h.close();
  });

  const get = async (headers: Record<string, string>) => {
    const response = await request(`${base}${PATH}`, { headers, dispatcher: agent });
    await response.body.text();
    return response;
  };

  test('each request is answered for the key it sent, and an unknown key between known ones is refused', async () => {
    const a = await h.createKey({ tier: 'free' });
    const b = await h.createKey({ tier: 'pro' });
    const unknown = generateKey('live');
    const sequence = [
      { key: a, header: 'x-api-key' },
      { key: a, header: 'x-api-key' },
      { key: b, header: 'authorization' },
      { key: a, header: 'x-api-key' },
      { key: undefined, header: 'x-api-key' },
      { key: a, header: 'authorization' },
      { key: b, header: 'x-api-key' },
    ] as const;
    const from = h.logs.length;
    const statuses: number[] = [];
    const limits: (string | undefined)[] = [];
    for (const step of sequence) {
      const key = step.key?.key ?? unknown;
      const value = step.header === 'authorization' ? `Bearer ${key}` : key;
      const response = await get({ [step.header]: value });
      statuses.push(response.statusCode);
      limits.push(response.headers['x-ratelimit-limit'] as string | undefined);
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 401, 200, 200]);
    assert.equal(connections, 1, 'every request went over the one connection');
    // The tiers' own first limits: free and pro differ, so each answer was counted to its own key.
    const free = limits[0];
    const pro = limits[2];
    assert.notEqual(free, pro);
    assert.deepEqual(limits, [free, free, pro, free, undefined, free, pro]);
    const logged = h.logs
      .slice(from)
      .filter((line) => line.msg === 'request')
      .map((line) => line.keyId);
    assert.deepEqual(logged, [a.id, a.id, b.id, a.id, null, a.id, b.id]);
  });

  test('a key in the query is refused between requests whose query holds none', async () => {
    const a = await h.createKey({ tier: 'free' });
    const asked = async (query: string) => {
      const response = await request(`${base}${PATH}${query}`, {
        headers: { 'x-api-key': a.key },
        dispatcher: agent,
      });
      const body = await response.body.text();
      return response.statusCode === 401 ? `401 ${JSON.parse(body).code}` : String(response.statusCode);
    };
    const statuses: string[] = [];
    for (const query of ['', '', `&api_key=${a.key}`, '', `&${a.key}`, '&token=x', ''])
      statuses.push(await asked(query));
    assert.deepEqual(statuses, [
      '200',
      '200',
      '401 api_key_in_query',
      '200',
      '401 api_key_in_query',
      '401 api_key_in_query',
      '200',
    ]);
    assert.equal(connections, 1, 'every request went over the one connection');
  });
});
