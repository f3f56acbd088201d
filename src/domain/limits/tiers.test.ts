import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { countedAs, DEFAULT_TIERS, type LimitRule, mergeTiers, type Tier } from './tiers.js';

const perMinute = (limit: number): LimitRule => ({ name: 'minute', limit, windowSeconds: 60 });

describe('DEFAULT_TIERS', () => {
  test('are the four tiers of the table in docs/using-the-api.md "Rate limits", with their limits, counting, history and streams', () => {
    const tenYears = 3653; // ten years including the leap days in them
    const expected: Record<string, Tier> = {
      demo: {
        name: 'demo',
        limits: [
          { name: 'minute', limit: 30, windowSeconds: 60 },
          { name: 'day', limit: 1000, windowSeconds: 86_400 },
        ],
        countPer: 'key+ip',
        kinds: null,
        historyDays: 31,
        streams: 50,
        selfRotate: false,
      },
      free: {
        name: 'free',
        limits: [
          { name: 'minute', limit: 60, windowSeconds: 60 },
          { name: 'day', limit: 5000, windowSeconds: 86_400 },
        ],
        countPer: 'key',
        kinds: null,
        historyDays: 31,
        streams: 3,
        selfRotate: false,
      },
      pro: {
        name: 'pro',
        limits: [
          { name: 'second', limit: 20, windowSeconds: 1 },
          { name: 'minute', limit: 1200, windowSeconds: 60 },
        ],
        countPer: 'key',
        kinds: null,
        historyDays: tenYears,
        streams: 20,
        selfRotate: false,
      },
      enterprise: {
        name: 'enterprise',
        limits: [{ name: 'second', limit: 200, windowSeconds: 1 }],
        countPer: 'key',
        kinds: null,
        historyDays: null,
        streams: 200,
        selfRotate: false,
      },
    };
    assert.deepEqual(DEFAULT_TIERS, expected);
  });
});

describe('mergeTiers: the operator config over the defaults, by name', () => {
  test('without overrides the result equals the defaults', () => {
    assert.deepEqual(mergeTiers(DEFAULT_TIERS, {}), DEFAULT_TIERS);
  });

  test('a field given for a default tier replaces that field only; the others are kept', () => {
    const merged = mergeTiers(DEFAULT_TIERS, { demo: { limits: [perMinute(5)] } });
    assert.deepEqual(merged['demo'], {
      name: 'demo',
      limits: [perMinute(5)],
      countPer: 'key+ip',
      kinds: null,
      historyDays: 31,
      streams: 50,
      selfRotate: false,
    });
    assert.deepEqual(merged['free'], DEFAULT_TIERS['free']);
  });

  test('limits are replaced as a whole list, not merged rule by rule', () => {
    // Overriding only the minute limit of demo drops its day limit: what the file says is what applies.
    const merged = mergeTiers(DEFAULT_TIERS, { demo: { limits: [perMinute(5)] } });
    assert.equal(merged['demo']?.limits.length, 1);
  });

  test('countPer, kinds, historyDays and streams override one at a time', () => {
    const merged = mergeTiers(DEFAULT_TIERS, {
      free: { countPer: 'key+ip' },
      pro: { kinds: ['electricity', 'fx'] },
      enterprise: { historyDays: 3650 },
      demo: { streams: 5 },
    });
    assert.equal(merged['demo']?.streams, 5);
    assert.equal(merged['demo']?.countPer, 'key+ip');
    assert.equal(merged['free']?.streams, 3);
    assert.equal(merged['free']?.countPer, 'key+ip');
    assert.deepEqual(merged['free']?.limits, DEFAULT_TIERS['free']?.limits);
    assert.deepEqual(merged['pro']?.kinds, ['electricity', 'fx']);
    assert.equal(merged['pro']?.historyDays, 3653);
    assert.equal(merged['enterprise']?.historyDays, 3650);
    assert.equal(merged['enterprise']?.kinds, null);
  });

  test('an explicit null means "every kind" or "unlimited history" and overrides a default value', () => {
    const restricted = mergeTiers(DEFAULT_TIERS, { free: { kinds: ['electricity'] } });
    const reopened = mergeTiers(restricted, { free: { kinds: null, historyDays: null } });
    assert.equal(reopened['free']?.kinds, null);
    assert.equal(reopened['free']?.historyDays, null);
  });

  test('a field that is left out keeps the default value, also a non-null kinds list', () => {
    const restricted = mergeTiers(DEFAULT_TIERS, { free: { kinds: ['electricity'] } });
    const again = mergeTiers(restricted, { free: { historyDays: 7 } });
    assert.deepEqual(again['free']?.kinds, ['electricity']);
    assert.equal(again['free']?.historyDays, 7);
  });

  test('a new tier brings its limits; the other fields default to per key, every kind, unlimited history, 3 streams, no self rotation', () => {
    const merged = mergeTiers(DEFAULT_TIERS, { partner: { limits: [perMinute(300)] } });
    assert.deepEqual(merged['partner'], {
      name: 'partner',
      limits: [perMinute(300)],
      countPer: 'key',
      kinds: null,
      historyDays: null,
      streams: 3,
      selfRotate: false,
    });
    assert.deepEqual(Object.keys(merged), ['demo', 'free', 'pro', 'enterprise', 'partner']);
  });

  test('a new tier keeps every field it sets', () => {
    const partner = {
      limits: [perMinute(300), { name: 'day', limit: 100_000, windowSeconds: 86_400 }],
      countPer: 'key+ip' as const,
      kinds: ['electricity'],
      historyDays: 365,
      streams: 12,
      selfRotate: true,
    };
    assert.deepEqual(mergeTiers(DEFAULT_TIERS, { partner })['partner'], { name: 'partner', ...partner });
  });

  test('a new tier without limits is refused with the path of the missing setting', () => {
    assert.throws(
      () => mergeTiers(DEFAULT_TIERS, { partner: { countPer: 'key', historyDays: 365 } }),
      /tiers\.partner\.limits is required/,
    );
  });

  test('merging never changes the defaults it starts from', () => {
    const before = structuredClone(DEFAULT_TIERS);
    mergeTiers(DEFAULT_TIERS, {
      demo: { limits: [perMinute(1)], historyDays: null },
      partner: { limits: [] },
    });
    assert.deepEqual(DEFAULT_TIERS, before);
  });
});

describe("countedAs: what a key's use is counted by", () => {
  test('per key, or with key+ip per key and client address group (IPv4 address, IPv6 /64)', () => {
    const demo = DEFAULT_TIERS['demo'] as Tier;
    const free = DEFAULT_TIERS['free'] as Tier;
    assert.equal(countedAs(free, 'k1', '192.0.2.7'), countedAs(free, 'k1', '198.51.100.1'));
    assert.notEqual(countedAs(demo, 'k1', '192.0.2.7'), countedAs(demo, 'k1', '198.51.100.1'));
    assert.equal(countedAs(demo, 'k1', '2001:db8:1:2::5'), countedAs(demo, 'k1', '2001:db8:1:2:ff::9'));
    assert.equal(countedAs(demo, 'k1', '::ffff:192.0.2.7'), countedAs(demo, 'k1', '192.0.2.7'));
    assert.notEqual(countedAs(demo, 'k1', '192.0.2.7'), countedAs(demo, 'k2', '192.0.2.7'));
  });
});
