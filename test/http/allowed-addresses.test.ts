/**
 * A key's allow-list over real HTTPS behind a trusted proxy (docs/keys-and-tiers.md "Allowed
 * addresses"): the client address comes from X-Forwarded-For, and a repeated cached read, which the
 * fast entry answers before the framework (src/speed/fast-entry.ts), is refused from other addresses
 * with the same 403 address_not_allowed as the full path, since both ask the one authenticator.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';

const TODAY = '/api/v1/prices/today?symbols=NO1';

describe('allowed addresses behind a trusted proxy, on the fast entry too', () => {
  let h: Harness;
  let client: Awaited<ReturnType<typeof listenHttps>>;
  let key: string;

  before(async () => {
    h = await createHarness({ https: true, env: { PRICEPOINT_TRUST_PROXY: '127.0.0.1' } });
    client = await listenHttps(h, 4);
    key = (await h.createKey({ tier: 'enterprise', allowedAddresses: ['203.0.113.0/24', '2001:db8:1::/48'] }))
      .key;
  });
  after(async () => {
    await client.close();
    await h.close();
  });

  const fastAnswers = async (): Promise<number> => {
    const metric = await h.app.inject({ url: '/metrics' });
    const line = metric.body.split('\n').find((l) => l.startsWith('pricepoint_fast_path_answers_total{'));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  };
  const from = (address: string) => client.get(TODAY, { 'x-api-key': key, 'x-forwarded-for': address });

  test('an allowed address is served, and its repeated read comes from the fast entry', async () => {
    const first = await from('203.0.113.9');
    assert.equal(first.status, 200, first.text);
    const before = await fastAnswers();
    const second = await from('203.0.113.10');
    assert.equal(second.status, 200, second.text);
    assert.equal(await fastAnswers(), before + 1, 'the second answer came from the fast entry');
    assert.equal((await from('2001:db8:1:ff::7')).status, 200);
  });

  test('another address gets 403 address_not_allowed from the fast entry as from the full path, and nothing is counted', async () => {
    // The answer is cached (the test before), so the fast entry sees this request first.
    const allowed = await from('203.0.113.9');
    const remaining = Number(allowed.headers['x-ratelimit-remaining']);
    const before = await fastAnswers();
    for (const address of ['198.51.100.4', '2001:db8:2::1', '203.0.114.1']) {
      const refused = await from(address);
      assert.equal(refused.status, 403, refused.text);
      assert.match(String(refused.headers['content-type']), /^application\/problem\+json/);
      const body = JSON.parse(refused.text) as { code: string; detail: string };
      assert.equal(body.code, 'address_not_allowed');
      assert.equal(refused.text.includes(key), false, 'the key is not in the answer');
      assert.equal(refused.headers['x-ratelimit-remaining'], undefined, 'nothing counted, no limit headers');
    }
    assert.equal(await fastAnswers(), before, 'no refused request was answered by the fast entry');
    const after = await from('203.0.113.9');
    assert.equal(after.status, 200);
    assert.equal(Number(after.headers['x-ratelimit-remaining']), remaining - 1, 'the refusals took nothing');
  });

  test('without the trusted proxy, the peer address is the client: the loopback is not in the list', async () => {
    const direct = await h.app.inject({
      url: TODAY,
      headers: { 'x-api-key': key },
      remoteAddress: '192.0.2.1',
    });
    assert.equal(direct.statusCode, 403, direct.body);
    assert.equal(direct.json().code, 'address_not_allowed');
  });
});
