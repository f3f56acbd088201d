/**
 * Client addresses as rate-limit subjects. One IPv6 host usually owns a whole /64, so IPv6
 * addresses are grouped by their first 64 bits; IPv4 (also IPv4-mapped IPv6, however written) stays
 * as it is. Connection bounds (src/http/transport/client-groups.ts) and the failed-login budget count per group.
 */
import { isIPv4, isIPv6 } from 'node:net';

function expandIPv6(written: string): string[] {
  // A dotted IPv4 tail (`::ffff:192.0.2.7`, `64:ff9b::192.0.2.7`) is the last two groups.
  const address = written.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_all, a, b, c, d) =>
    [(Number(a) << 8) | Number(b), (Number(c) << 8) | Number(d)].map((n) => n.toString(16)).join(':'),
  );
  const [head = '', tail] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - left.length - right.length;
  return [...left, ...Array<string>(Math.max(0, missing)).fill('0'), ...right];
}

/**
 * @example addressGroup('2001:db8:1:2:3:4:5:6') // '2001:db8:1:2::/64'
 * @example addressGroup('::ffff:192.0.2.7') // '192.0.2.7'
 */
export function addressGroup(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1] !== undefined) return mapped[1];
  if (isIPv4(address)) return address;
  const bare = address.split('%')[0] ?? address;
  if (!isIPv6(bare)) return address;
  const groups = expandIPv6(bare.toLowerCase());
  // IPv4-mapped written in hex (`::ffff:c000:207`, as a proxy may forward it) is its IPv4 client too,
  // not one of the many clients of ::/64.
  if (/^0+:0+:0+:0+:0+:ffff$/.test(groups.slice(0, 6).join(':'))) {
    const [high = 0, low = 0] = groups.slice(6).map((g) => Number.parseInt(g, 16));
    return [high >> 8, high & 255, low >> 8, low & 255].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
