/**
 * Tiers and rate limits through the app (docs/keys-and-tiers.md): the headers on every authenticated
 * answer, the 429, what is counted per what, tiers from the config file, and exactness under a
 * burst of real HTTPS requests. The harness clock stands still at 10:15:03.120Z unless a test moves
 * it, so no burst straddles a window boundary.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { keyHash } from '../../src/domain/keys/key-format.js';
import { createRateLimiter } from '../../src/services/rate-limiter.js';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';

const TODAY = '/api/v1/prices/today?symbols=NO1';
const START = '2026-11-22T10:15:03.120Z';
/** The demo tier's minute window at START ends at 10:16:00Z: 56.88 s later, 57 whole seconds. */
const NEXT_MINUTE = Date.parse('2026-11-22T10:16:00Z');
const NEXT_MIDNIGHT = Date.parse('2026-11-23T00:00:00Z');
const DEMO_POLICY = '"minute";q=30;w=60, "day";q=1000;w=86400';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'pricepoint-limits-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

function writeConfig(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

async function withHarness(
  options: Parameters<typeof createHarness>[0],
  body: (h: Harness) => Promise<void>,
): Promise<void> {
  const h = await createHarness(options);
  try {
    await body(h);
  } finally {
    await h.close();
  }
}

function get(h: Harness, key: string, url = TODAY, remoteAddress = '127.0.0.1') {
  return h.app.inject({ method: 'GET', url, headers: { 'x-api-key': key }, remoteAddress });
}

/** Sends `count` requests one after another and asserts each got `status`. */
async function spend(h: Harness, key: string, count: number, status = 200, remoteAddress = '127.0.0.1') {
  for (let i = 0; i < count; i++) {
    const response = await get(h, key, TODAY, remoteAddress);
    assert.equal(response.statusCode, status, `request ${i + 1}: ${response.body}`);
  }
}

function limitHeaders(response: LightMyRequestResponse) {
  return {
    policy: response.headers['ratelimit-policy'],
    rateLimit: response.headers['ratelimit'],
    limit: response.headers['x-ratelimit-limit'],
    remaining: response.headers['x-ratelimit-remaining'],
    reset: response.headers['x-ratelimit-reset'],
    retryAfter: response.headers['retry-after'],
  };
}

describe('rate-limit headers on every authenticated answer', () => {
  test('a 200 carries the policy and the minute limit of the demo tier, closest to running out', async () => {
    await withHarness({ now: START }, async (h) => {
      const response = await get(h, h.demoKey);
      assert.equal(response.statusCode, 200);
      assert.deepEqual(limitHeaders(response), {
        policy: DEMO_POLICY,
        rateLimit: '"minute";r=29;t=57',
        limit: '30',
        remaining: '29',
        reset: String(NEXT_MINUTE / 1000),
        retryAfter: undefined,
      });
    });
  });

  test('remaining counts down per request and t= counts down with the clock to the next whole minute', async () => {
    await withHarness({ now: START }, async (h) => {
      await get(h, h.demoKey);
      h.clock.advance(20_000); // 10:15:23.120
      const second = await get(h, h.demoKey);
      assert.equal(second.headers['ratelimit'], '"minute";r=28;t=37');
      assert.equal(second.headers['x-ratelimit-remaining'], '28');
      assert.equal(second.headers['x-ratelimit-reset'], String(NEXT_MINUTE / 1000));
      h.clock.set('2026-11-22T10:15:59.500Z');
      const last = await get(h, h.demoKey);
      assert.equal(last.headers['ratelimit'], '"minute";r=27;t=1');
      assert.equal(last.headers['x-ratelimit-reset'], String(NEXT_MINUTE / 1000));
    });
  });

  test('the Bearer form gets the same headers as x-api-key', async () => {
    await withHarness({ now: START }, async (h) => {
      const response = await h.app.inject({ url: TODAY, headers: { authorization: `Bearer ${h.demoKey}` } });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['ratelimit-policy'], DEMO_POLICY);
      assert.equal(response.headers['ratelimit'], '"minute";r=29;t=57');
    });
  });

  test('errors after authentication (400, 404, 406) carry the headers too, and count', async () => {
    await withHarness({ now: START }, async (h) => {
      const errors = [
        { url: `${TODAY}&colour=red`, status: 400 },
        { url: '/api/v1/prices/today?tz=Mars/Olympus', status: 400 },
        { url: '/api/v1/prices/today?symbols=NOPE', status: 404 },
      ];
      let remaining = 30;
      for (const { url, status } of errors) {
        const response = await get(h, h.demoKey, url);
        remaining -= 1;
        assert.equal(response.statusCode, status, response.body);
        assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
        assert.deepEqual(limitHeaders(response), {
          policy: DEMO_POLICY,
          rateLimit: `"minute";r=${remaining};t=57`,
          limit: '30',
          remaining: String(remaining),
          reset: String(NEXT_MINUTE / 1000),
          retryAfter: undefined,
        });
      }
      const csvOnly = await h.app.inject({
        url: TODAY,
        headers: { 'x-api-key': h.demoKey, accept: 'image/png' },
      });
      assert.equal(csvOnly.statusCode, 406, csvOnly.body);
      assert.equal(csvOnly.headers['x-ratelimit-remaining'], String(remaining - 1));
      assert.equal(csvOnly.headers['ratelimit-policy'], DEMO_POLICY);
    });
  });
});

describe('the demo tier: 30 a minute', () => {
  test('the 31st request in a minute gets 429 problem+json naming the minute limit, with Retry-After', async () => {
    await withHarness({ now: START }, async (h) => {
      await spend(h, h.demoKey, 30);
      const refused = await get(h, h.demoKey);
      assert.equal(refused.statusCode, 429);
      assert.match(String(refused.headers['content-type']), /^application\/problem\+json/);
      const body = refused.json();
      assert.equal(body.code, 'rate_limited');
      assert.equal(body.status, 429);
      assert.equal(body.type, 'https://iana.org/assignments/http-problem-types#quota-exceeded');
      assert.equal(body.instance, '/api/v1/prices/today');
      assert.deepEqual(body['violated-policies'], ['minute']);
      assert.match(body.detail, /minute limit of tier demo \(30\).*resets in 57 s/);
      assert.deepEqual(limitHeaders(refused), {
        policy: DEMO_POLICY,
        rateLimit: '"minute";r=0;t=57',
        limit: '30',
        remaining: '0',
        reset: String(NEXT_MINUTE / 1000),
        retryAfter: '57',
      });
      // Retry-After never points before the reset.
      assert.ok(h.clock.now + Number(refused.headers['retry-after']) * 1000 >= NEXT_MINUTE);
    });
  });

  test('refused requests take nothing: after the minute resets, the day limit shows 30 taken plus the new one', async () => {
    await withHarness({ now: START }, async (h) => {
      await spend(h, h.demoKey, 30);
      await spend(h, h.demoKey, 10, 429);
      h.clock.set('2026-11-22T10:16:00.000Z');
      const next = await get(h, h.demoKey);
      assert.equal(next.statusCode, 200);
      assert.equal(next.headers['ratelimit'], '"minute";r=29;t=60');

      const record = await h.stores.keys.findByHash(keyHash(h.demoKey, h.config.keySecret));
      assert.ok(record);
      const limiter = createRateLimiter({
        store: h.stores.rateLimits,
        tiers: h.config.tiers,
        clock: h.clock.read,
      });
      const usage = await limiter.peek(record, '127.0.0.1');
      const day = usage.states.find((s) => s.rule.name === 'day');
      assert.equal(day?.remaining, 1000 - 31);
      assert.equal(day?.resetAtMs, NEXT_MIDNIGHT);
    });
  });

  test('refused up to the last millisecond of the minute, accepted at the first one of the next', async () => {
    await withHarness({ now: START }, async (h) => {
      await spend(h, h.demoKey, 30);
      h.clock.set('2026-11-22T10:15:59.999Z');
      const late = await get(h, h.demoKey);
      assert.equal(late.statusCode, 429);
      assert.equal(late.headers['retry-after'], '1');
      h.clock.set('2026-11-22T10:16:00.000Z');
      const first = await get(h, h.demoKey);
      assert.equal(first.statusCode, 200);
      assert.equal(first.headers['x-ratelimit-remaining'], '29');
      assert.equal(first.headers['x-ratelimit-reset'], String(Date.parse('2026-11-22T10:17:00Z') / 1000));
    });
  });

  test('counts per key and client address: another address has its own budget', async () => {
    await withHarness({ now: START }, async (h) => {
      await spend(h, h.demoKey, 30, 200, '192.0.2.1');
      assert.equal((await get(h, h.demoKey, TODAY, '192.0.2.1')).statusCode, 429);
      const other = await get(h, h.demoKey, TODAY, '192.0.2.2');
      assert.equal(other.statusCode, 200);
      assert.equal(other.headers['x-ratelimit-remaining'], '29');
      assert.equal((await get(h, h.demoKey, TODAY, '192.0.2.1')).statusCode, 429);
    });
  });

  test('IPv6 addresses of one /64 share a budget, another /64 has its own', async () => {
    await withHarness({ now: START }, async (h) => {
      await spend(h, h.demoKey, 30, 200, '2001:db8:1:2::1');
      assert.equal((await get(h, h.demoKey, TODAY, '2001:db8:1:2:ffff::7')).statusCode, 429);
      assert.equal((await get(h, h.demoKey, TODAY, '2001:db8:1:3::1')).statusCode, 200);
    });
  });
});

describe('the free tier: 60 a minute per key', () => {
  test('counts per key only: another client address shares the budget', async () => {
    await withHarness({ now: START }, async (h) => {
      const { key } = await h.createKey({ tier: 'free' });
      const first = await get(h, key, TODAY, '192.0.2.1');
      assert.equal(first.headers['ratelimit-policy'], '"minute";q=60;w=60, "day";q=5000;w=86400');
      await spend(h, key, 59, 200, '192.0.2.1');
      const elsewhere = await get(h, key, TODAY, '198.51.100.9');
      assert.equal(elsewhere.statusCode, 429);
      assert.deepEqual(elsewhere.json()['violated-policies'], ['minute']);
    });
  });

  test('every key has its own budget', async () => {
    await withHarness({ now: START }, async (h) => {
      const a = await h.createKey({ tier: 'free' });
      const b = await h.createKey({ tier: 'free' });
      await spend(h, a.key, 60);
      assert.equal((await get(h, a.key)).statusCode, 429);
      const other = await get(h, b.key);
      assert.equal(other.statusCode, 200);
      assert.equal(other.headers['x-ratelimit-remaining'], '59');
    });
  });
});

describe('tiers from the PRICEPOINT_CONFIG file', () => {
  const demoFive = { limits: [{ name: 'minute', limit: 5, windowSeconds: 60 }] };
  const partner = {
    limits: [
      { name: 'minute', limit: 3, windowSeconds: 60 },
      { name: 'day', limit: 4, windowSeconds: 86_400 },
    ],
    countPer: 'key',
    kinds: ['electricity'],
    historyDays: 365,
    streams: 2,
  };

  /** The overridden demo tier: 5 a minute and no day limit any more. */
  async function demoTakesFive(h: Harness) {
    const first = await get(h, h.demoKey);
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers['ratelimit-policy'], '"minute";q=5;w=60');
    assert.equal(first.headers['ratelimit'], '"minute";r=4;t=57');
    await spend(h, h.demoKey, 4);
    const refused = await get(h, h.demoKey);
    assert.equal(refused.statusCode, 429);
    assert.deepEqual(refused.json()['violated-policies'], ['minute']);
    // Still counted per key and address: only the limits were overridden.
    assert.equal((await get(h, h.demoKey, TODAY, '192.0.2.50')).statusCode, 200);
  }

  /** The new partner tier: 3 a minute, 4 a day, all or nothing, electricity only. */
  async function partnerApplies(h: Harness) {
    const { key } = await h.createKey({ tier: 'partner' });
    const first = await get(h, key);
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.headers['ratelimit-policy'], '"minute";q=3;w=60, "day";q=4;w=86400');
    assert.equal(first.headers['ratelimit'], '"minute";r=2;t=57');
    await spend(h, key, 2);
    const minuteUsedUp = await get(h, key);
    assert.equal(minuteUsedUp.statusCode, 429);
    assert.deepEqual(minuteUsedUp.json()['violated-policies'], ['minute']);

    // Next minute: the refusal took nothing from the day limit, so exactly one request is left today.
    h.clock.set('2026-11-22T10:16:30.000Z');
    const lastOfDay = await get(h, key);
    assert.equal(lastOfDay.statusCode, 200);
    assert.equal(lastOfDay.headers['ratelimit'], `"day";r=0;t=${(NEXT_MIDNIGHT - h.clock.now) / 1000}`);
    assert.equal(lastOfDay.headers['x-ratelimit-limit'], '4');
    assert.equal(lastOfDay.headers['x-ratelimit-reset'], String(NEXT_MIDNIGHT / 1000));
    const dayUsedUp = await get(h, key);
    assert.equal(dayUsedUp.statusCode, 429);
    assert.deepEqual(dayUsedUp.json()['violated-policies'], ['day']);
    assert.equal(dayUsedUp.headers['retry-after'], String((NEXT_MIDNIGHT - h.clock.now) / 1000));

    // The tier reads electricity only.
    const other = await h.createKey({ tier: 'partner' });
    assert.equal((await get(h, other.key, '/api/v1/prices/today?symbols=NO1,DE-LU')).statusCode, 200);
    const fx = await get(h, other.key, '/api/v1/prices/today?symbols=EURUSD');
    assert.equal(fx.statusCode, 403);
    const all = await get(h, other.key, '/api/v1/prices/today');
    assert.ok(all.json().series.every((s: { kind: string }) => s.kind === 'electricity'));
  }

  test('a JSON file overrides demo to 5 a minute and adds a partner tier', async () => {
    const path = writeConfig('tiers.json', JSON.stringify({ tiers: { demo: demoFive, partner } }));
    await withHarness({ now: START, env: { PRICEPOINT_CONFIG: path } }, async (h) => {
      await demoTakesFive(h);
      await partnerApplies(h);
    });
  });

  test('a YAML file does the same', async () => {
    const yaml = [
      'tiers:',
      '  demo:',
      '    limits:',
      '      - name: minute',
      '        limit: 5',
      '        windowSeconds: 60',
      '  partner:',
      '    limits:',
      '      - { name: minute, limit: 3, windowSeconds: 60 }',
      '      - { name: day, limit: 4, windowSeconds: 86400 }',
      '    countPer: key',
      '    kinds: [electricity]',
      '    historyDays: 365',
      '    streams: 2',
      '',
    ].join('\n');
    const path = writeConfig('tiers.yaml', yaml);
    await withHarness({ now: START, env: { PRICEPOINT_CONFIG: path } }, async (h) => {
      assert.deepEqual(h.config.tiers['partner'], { name: 'partner', ...partner, selfRotate: false });
      await demoTakesFive(h);
      await partnerApplies(h);
    });
  });
});

describe('exact under concurrency', () => {
  test('of ten times the limit fired at once over real HTTPS, exactly the limit get 200 and the rest 429', async () => {
    const limit = 25;
    const path = writeConfig(
      'burst.json',
      JSON.stringify({ tiers: { burst: { limits: [{ name: 'minute', limit, windowSeconds: 60 }] } } }),
    );
    await withHarness({ now: START, https: true, env: { PRICEPOINT_CONFIG: path } }, async (h) => {
      const { key } = await h.createKey({ tier: 'burst' });
      const client = await listenHttps(h);
      try {
        const answers = await Promise.all(
          Array.from({ length: 10 * limit }, () => client.get(TODAY, { 'x-api-key': key })),
        );
        const statuses = new Map<number, number>();
        for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
        assert.deepEqual(Object.fromEntries(statuses), { 200: limit, 429: 9 * limit });

        // Each accepted request took a different unit: remaining 24, 23, ... 0, once each.
        const remaining = answers
          .filter((a) => a.status === 200)
          .map((a) => Number(a.headers['x-ratelimit-remaining']))
          .sort((x, y) => x - y);
        assert.deepEqual(
          remaining,
          Array.from({ length: limit }, (_, i) => i),
        );
        for (const refused of answers.filter((a) => a.status === 429)) {
          assert.equal(refused.headers['retry-after'], '57');
          assert.equal(refused.headers['x-ratelimit-remaining'], '0');
        }
      } finally {
        await client.close();
      }
    });
  });
});
