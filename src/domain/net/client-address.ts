/**
 * Client addresses as rate-limit subjects. One IPv6 host usually owns a whole /64, so IPv6
 * addresses are grouped by their first 64 bits; IPv4 (also IPv4-mapped IPv6) stays as it is.
 */
import { isIPv4, isIPv6 } from 'node:net';

function expandIPv6(address: string): string[] {
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
  const groups = expandIPv6(bare.toLowerCase()).slice(0, 4);
  return `${groups.map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}
