import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addressGroup } from './client-address.js';

test('IPv4 addresses are their own group, also when written IPv4-mapped', () => {
  assert.equal(addressGroup('192.0.2.7'), '192.0.2.7');
  assert.equal(addressGroup('::ffff:192.0.2.7'), '192.0.2.7');
  assert.equal(addressGroup('::FFFF:192.0.2.7'), '192.0.2.7');
  assert.equal(addressGroup('::ffff:c000:207'), '192.0.2.7', 'mapped, written in hex');
  assert.equal(addressGroup('0:0:0:0:0:ffff:192.0.2.7'), '192.0.2.7');
  assert.equal(addressGroup('0000:0000:0000:0000:0000:ffff:c000:0207'), '192.0.2.7');
});

test('IPv6 addresses are grouped by their /64, however they are written', () => {
  assert.equal(addressGroup('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
  assert.equal(addressGroup('2001:db8:1:2::9'), '2001:db8:1:2::/64');
  assert.equal(addressGroup('2001:0DB8:0001:0002:ffff::1'), '2001:db8:1:2::/64');
  assert.notEqual(addressGroup('2001:db8:1:3::1'), addressGroup('2001:db8:1:2::1'));
  assert.equal(addressGroup('::1'), '0:0:0:0::/64');
  assert.equal(addressGroup('fe80::1%eth0'), 'fe80:0:0:0::/64');
  assert.equal(addressGroup('64:ff9b::192.0.2.7'), '64:ff9b:0:0::/64', 'a dotted tail is two groups');
  assert.equal(addressGroup('2001:db8:1:2:3:4:192.0.2.7'), '2001:db8:1:2::/64');
});
