/**
 * Per-key IP allow-lists (docs/keys-and-tiers.md "Allowed addresses"): CIDRs in IPv4 or IPv6, a bare
 * address being its own /32 or /128. Matching is node:net's BlockList, which also matches an
 * IPv4-mapped IPv6 client (`::ffff:192.0.2.7`, as a dual-stack listener reports it) against IPv4 ranges.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** How many entries one key may list: an operator's handful of offices and servers, not a database. */
export const MAX_ALLOWED_ADDRESSES = 100;

/**
 * The CIDR as stored (lower case, prefix written out), or `undefined` when `text` is none.
 * @example canonicalCidr('192.0.2.0/24') // '192.0.2.0/24'
 * @example canonicalCidr('2001:DB8::1') // '2001:db8::1/128'
 */
export function canonicalCidr(text: string): string | undefined {
  const [address = '', prefix, extra] = text.trim().toLowerCase().split('/');
  if (extra !== undefined) return undefined;
  const family = isIPv4(address) ? 4 : isIPv6(address) ? 6 : 0;
  if (family === 0) return undefined;
  const max = family === 4 ? 32 : 128;
  if (prefix === undefined) return `${address}/${max}`;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) return undefined;
  return `${address}/${Number(prefix)}`;
}

/**
 * Whether an address may use the key: a test built once per allow-list.
 * @example allowedBy(['192.0.2.0/24'])('192.0.2.7') // true
 */
export function allowedBy(cidrs: readonly string[]): (address: string) => boolean {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address = '', prefix = ''] = cidr.split('/');
    list.addSubnet(address, Number(prefix), isIPv4(address) ? 'ipv4' : 'ipv6');
  }
  return (address) => {
    // A zone index (`fe80::1%eth0`) names the interface, not the host.
    const bare = address.split('%')[0] ?? '';
    if (isIPv4(bare)) return list.check(bare, 'ipv4');
    return isIPv6(bare) && list.check(bare, 'ipv6');
  };
}
