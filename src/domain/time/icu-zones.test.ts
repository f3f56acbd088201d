import assert from 'node:assert/strict';
import { test } from 'node:test';
import { icuZones, intlOffsetMinutes } from './icu-zones.js';

const at = (iso: string) => Date.parse(iso);

test('ICU as the tz database answers offsets as Intl does, across clock changes and inside quarter hours', () => {
  const zones = icuZones();
  assert.equal(zones.offsetMinutes(at('2026-10-25T00:59:59.999Z'), 'Europe/Oslo'), 120);
  assert.equal(zones.offsetMinutes(at('2026-10-25T01:00:00Z'), 'Europe/Oslo'), 60);
  const names = ['Europe/Oslo', 'America/New_York', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'UTC'];
  // Every 7 hours and 13 minutes over a year: starts and insides of quarter hours, both kinds of change.
  for (let t = at('2026-01-01T00:00:00Z'); t < at('2027-01-01T00:00:00Z'); t += 26_003_000) {
    for (const name of names) assert.equal(zones.offsetMinutes(t, name), intlOffsetMinutes(t, name), name);
  }
});

test('every spelling resolves to one zone; only the database spelling is a name', () => {
  const zones = icuZones();
  assert.equal(zones.isName('Europe/Oslo'), true);
  assert.equal(zones.isName('europe/oslo'), false);
  assert.equal(zones.isName('+01:00'), false);
  assert.equal(zones.canonicalId('us/PaCiFiC'), 'America/Los_Angeles');
  assert.equal(zones.canonicalId('Not/AZone'), undefined);
  assert.equal(zones.suggestion('america/new_york'), 'America/New_York');
  assert.ok(zones.names().has('UTC') && zones.names().has('Europe/Oslo'));
  assert.throws(() => zones.offsetMinutes(0, 'Not/AZone'), RangeError);
});

test('each database holds caches of its own: a new one starts empty whatever another has read', () => {
  const first = icuZones();
  first.offsetMinutes(at('2026-07-01T12:00:00Z'), 'Europe/Oslo');
  first.offsetMinutes(at('2026-07-01T12:00:00Z'), 'asia/kathmandu');
  const used = first.cacheSizes();
  assert.ok(used.zones >= 2 && used.offsetBlocks >= 2, JSON.stringify(used));
  assert.deepEqual(icuZones().cacheSizes(), { zones: 0, spellings: 0, offsetBlocks: 0 });
  assert.deepEqual(first.cacheSizes(), used);
});
