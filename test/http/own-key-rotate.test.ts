/**
 * A key rotating itself over real HTTPS (docs/keys-and-tiers.md, "Rotating your own key"): only
 * where its tier says `selfRotate: true` in the config file, which `/usage` tells; the new key is
 * shown once and the old one lives for the grace period; a refusal is 403
 * `self_rotation_not_allowed`; both are in the audit log with the key itself as actor; bad input is
 * problem+json.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';

describe('selfRotate in the config file', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pricepoint-self-rotate-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const load = async (yaml: string, devData: boolean) => {
    const path = join(dir, `config-${Math.random().toString(36).slice(2)}.yaml`);
    await writeFile(path, yaml);
    return loadConfig({ PRICEPOINT_CONFIG: path }, { devData });
  };

  test('false by default; the development data set lets pro keys rotate themselves, never the demo key', async () => {
    const plain = await load('', false);
    assert.deepEqual(
      Object.values(plain.tiers).map((t) => [t.name, t.selfRotate]),
      [
        ['demo', false],
        ['free', false],
        ['pro', false],
        ['enterprise', false],
      ],
    );
    const dev = await load('', true);
    assert.equal(dev.tiers.pro?.selfRotate, true);
    assert.equal(dev.tiers.demo?.selfRotate, false);
    assert.equal(dev.tiers.free?.selfRotate, false);
  });

  test("the file's word wins, for a default tier and a new one; a value that is not a boolean is named", async () => {
    const config = await load(
      [
        'tiers:',
        '  pro: { selfRotate: false }',
        '  partner:',
        '    limits: [{ name: minute, limit: 100, windowSeconds: 60 }]',
        '    selfRotate: true',
      ].join('\n'),
      true,
    );
    assert.equal(config.tiers.pro?.selfRotate, false);
    assert.equal(config.tiers.partner?.selfRotate, true);
    await assert.rejects(load('tiers:\n  free: { selfRotate: "yes" }', false), /tiers\.free\.selfRotate/);
  });
});

describe('POST /api/v1/key/rotate over HTTPS', () => {
  let h: Harness;
  let client: Awaited<ReturnType<typeof listenHttps>>;
  let admin: string;

  const post = (key: string | undefined, body?: string, headers: Record<string, string> = {}) =>
    client.request('POST', '/api/v1/key/rotate', {
      headers: {
        ...(key && { 'x-api-key': key }),
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body !== undefined && { body }),
    });
  const usage = async (key: string) => client.get('/api/v1/usage', { 'x-api-key': key });
  const audit = async (actor: string) => {
    const answer = await client.get(`/api/v1/audit?actor=${actor}&action=keys.rotate`, {
      'x-api-key': admin,
    });
    assert.equal(answer.status, 200, answer.text);
    return (JSON.parse(answer.text) as { entries: Record<string, unknown>[] }).entries;
  };

  before(async () => {
    // The development data set's tiers: pro keys may rotate themselves.
    h = await createHarness({ https: true });
    client = await listenHttps(h, 4);
    admin = (await h.createKey({ name: 'operator', tier: 'enterprise', scopes: ['admin'] })).key;
  });
  after(async () => {
    await client.close();
    await h.close();
  });

  test('a pro key sees it may, rotates itself, and the old key works for the grace period only', async () => {
    const own = await h.createKey({ name: 'customer', tier: 'pro', scopes: ['read', 'write'] });
    const before = JSON.parse((await usage(own.key)).text);
    assert.equal(before.selfRotate, true);

    const answer = await post(own.key, JSON.stringify({ graceSeconds: 60 }));
    assert.equal(answer.status, 201, answer.text);
    assert.equal(answer.headers['cache-control'], 'no-store');
    const rotated = JSON.parse(answer.text);
    assert.match(rotated.key, /^pp_live_/);
    assert.notEqual(rotated.key, own.key);
    assert.notEqual(rotated.id, own.id);
    assert.deepEqual([rotated.name, rotated.tier, rotated.scopes], ['customer', 'pro', ['read', 'write']]);
    assert.equal(rotated.previous.id, own.id);
    assert.equal(rotated.previous.expiresAt, new Date(h.clock.now + 60_000).toISOString());

    const fresh = await usage(rotated.key);
    assert.equal(fresh.status, 200);
    assert.equal(JSON.parse(fresh.text).keyId, rotated.id);
    assert.equal((await usage(own.key)).status, 200, 'the old key lives for the grace period');
    h.clock.advance(61_000);
    assert.equal((await usage(own.key)).status, 401);
    assert.equal((await usage(rotated.key)).status, 200);

    const [entry] = await audit(own.id);
    assert.equal(entry?.actor, own.id);
    assert.equal(entry?.target, own.id);
    assert.deepEqual(entry?.outcome, { status: 201, code: null });
    assert.equal(entry?.address, '127.0.0.1');
  });

  test('without a body: the default grace of a day', async () => {
    const own = await h.createKey({ name: 'customer', tier: 'pro' });
    const answer = await post(own.key);
    assert.equal(answer.status, 201, answer.text);
    assert.equal(
      JSON.parse(answer.text).previous.expiresAt,
      new Date(h.clock.now + 86_400_000).toISOString(),
    );
  });

  test('a tier without selfRotate, the demo key among them, is refused with a code of its own and recorded', async () => {
    const free = await h.createKey({ name: 'free customer', tier: 'free' });
    assert.equal(JSON.parse((await usage(free.key)).text).selfRotate, false);
    for (const key of [free.key, h.demoKey]) {
      const answer = await post(key, '{}');
      assert.equal(answer.status, 403, answer.text);
      assert.match(String(answer.headers['content-type']), /^application\/problem\+json/);
      const problem = JSON.parse(answer.text);
      assert.equal(problem.code, 'self_rotation_not_allowed');
      assert.equal(problem.title, 'Self rotation not allowed');
      assert.match(problem.detail, /may not rotate themselves/);
      assert.equal((await usage(key)).status, 200, 'the refused key still works');
    }
    const [entry] = await audit(free.id);
    assert.deepEqual(entry?.outcome, { status: 403, code: 'self_rotation_not_allowed' });
    assert.equal(entry?.target, free.id);
    // No key was made for either.
    const names = JSON.parse((await client.get('/api/v1/keys', { 'x-api-key': admin })).text).map(
      (k: { name: string }) => k.name,
    );
    assert.equal(names.filter((n: string) => n === 'free customer').length, 1);
  });

  test('bad input is problem+json, and rotates nothing', async () => {
    const own = await h.createKey({ name: 'careful', tier: 'pro' });
    const cases: [string | undefined, Record<string, string>, number, string][] = [
      ['{"graceSeconds": -1}', {}, 400, 'invalid_parameter'],
      ['{"graceSeconds": 2592001}', {}, 400, 'invalid_parameter'],
      ['{"graceSeconds": "60"}', {}, 400, 'invalid_parameter'],
      ['{"grace": 60}', {}, 400, 'invalid_parameter'],
      ['{"graceSeconds": ', {}, 400, 'invalid_parameter'],
      ['[]', {}, 400, 'invalid_parameter'],
      [
        'graceSeconds=60',
        { 'content-type': 'application/x-www-form-urlencoded' },
        415,
        'unsupported_media_type',
      ],
      [JSON.stringify({ graceSeconds: 1, pad: 'x'.repeat(2_000_000) }), {}, 413, 'payload_too_large'],
    ];
    for (const [body, headers, status, code] of cases) {
      const answer = await post(own.key, body, headers);
      assert.equal(answer.status, status, `${body?.slice(0, 40)}: ${answer.text}`);
      assert.match(String(answer.headers['content-type']), /^application\/problem\+json/);
      assert.equal(JSON.parse(answer.text).code, code);
    }
    const query = await client.request('POST', '/api/v1/key/rotate?graceSeconds=60', {
      headers: { 'x-api-key': own.key },
    });
    assert.equal(query.status, 400);
    const missing = await post(undefined, '{}');
    assert.equal(missing.status, 401);
    assert.equal(JSON.parse(missing.text).code, 'missing_api_key');
    const unknown = await post('pp_live_NotAKeyAtAll0000000000000000', '{}');
    assert.equal(unknown.status, 401);
    const names = JSON.parse((await client.get('/api/v1/keys', { 'x-api-key': admin })).text).map(
      (k: { name: string }) => k.name,
    );
    assert.equal(names.filter((n: string) => n === 'careful').length, 1, 'nothing was rotated');
  });
});
