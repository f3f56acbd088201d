/**
 * Where webhooks may go (docs/webhooks.md): `https` (and `http` when the operator allows it), and
 * never to loopback, private, link-local, metadata or other special addresses unless the operator
 * allows them. Checked on every address a name resolves to, at delivery time; the connection then
 * goes to the address that was checked, so a name that resolves differently a moment later (DNS
 * rebinding) cannot move it.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

export interface TargetPolicy {
  /** Loopback, private, link-local and metadata addresses allowed (tests, a trusted network). */
  readonly allowPrivate: boolean;
  /** `http://` allowed besides `https://`. */
  readonly allowHttp: boolean;
  /** Every address of a name; `dns.lookup` (the system's resolver, as other clients use) by default. */
  readonly resolve?: (host: string) => Promise<{ address: string; family: number }[]>;
}

const systemResolve = (host: string) => lookup(host, { all: true, verbatim: true });

const special = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, with the cloud metadata address 169.254.169.254
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  special.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96], // NAT64 of any IPv4 address, private ones included
  ['fc00::', 7], // unique local, with the metadata address fd00:ec2::254
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  special.addSubnet(net, bits, 'ipv6');
}

/** True for an address webhooks may not reach without `allowPrivate`. */
export function isSpecialAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return special.check(address, 'ipv4');
  if (family !== 6) return true;
  // IPv4-mapped (::ffff:a.b.c.d) reaches the IPv4 address: judge that.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1] !== undefined) return special.check(mapped[1], 'ipv4');
  return special.check(address, 'ipv6');
}

/** Why `url` cannot be a webhook endpoint, or undefined when it can (checked again at delivery). */
export function urlProblem(url: string, policy: TargetPolicy): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a URL';
  }
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && policy.allowHttp)) {
    return policy.allowHttp
      ? 'must use https or http'
      : 'must use https (PRICEPOINT_WEBHOOK_ALLOW_HTTP allows http)';
  }
  if (parsed.username !== '' || parsed.password !== '') return 'must not carry a user name or password';
  const host = hostOf(parsed);
  if (isIP(host) !== 0 && !policy.allowPrivate && isSpecialAddress(host)) {
    return 'points to a loopback, private, link-local or metadata address (PRICEPOINT_WEBHOOK_ALLOW_PRIVATE allows them)';
  }
  return undefined;
}

/** The host without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * The address to connect to for `url`: every address its host resolves to must be allowed, so a
 * name cannot pass by listing one public address beside a private one.
 */
export async function resolveTarget(
  url: URL,
  policy: TargetPolicy,
): Promise<{ address: string; family: 4 | 6 }> {
  const host = hostOf(url);
  const literal = isIP(host);
  const addresses =
    literal !== 0
      ? [{ address: host, family: literal }]
      : await (policy.resolve ?? systemResolve)(host).catch((error: NodeJS.ErrnoException) => {
          throw new Error(`cannot resolve ${host}: ${error.code ?? error.message}`);
        });
  const first = addresses[0];
  if (first === undefined) throw new Error(`${host} has no address`);
  if (!policy.allowPrivate) {
    const refused = addresses.find((a) => isSpecialAddress(a.address));
    if (refused) {
      throw new Error(
        `${host} resolves to ${refused.address}, a loopback, private, link-local or metadata address`,
      );
    }
  }
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}
