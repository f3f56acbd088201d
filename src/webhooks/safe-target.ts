/**
 * Where webhooks may go (docs/webhooks.md): `https` (and `http` when the operator allows it), and
 * never to loopback, private, link-local, metadata or other special addresses unless the operator
 * allows them. Checked on every address a name resolves to, at delivery time; the connection then
 * goes to the address that was checked, so a name that resolves differently a moment later (DNS
 * rebinding) cannot move it.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface TargetPolicy {
  /** Loopback, private, link-local and metadata addresses allowed (tests, a trusted network). */
  readonly allowPrivate: boolean;
  /** `http://` allowed besides `https://`. */
  readonly allowHttp: boolean;
  /** Every address of a name; `dns.lookup` (the system's resolver, as other clients use) by default. */
  readonly resolve?: (host: string) => Promise<{ address: string; family: number }[]>;
}

const systemResolve = (host: string) => lookup(host, { all: true, verbatim: true });

/** NAT64's well-known prefix (RFC 6052): on an IPv6-only network DNS64 answers with it for IPv4 hosts. */
const NAT64 = ipaddr.parseCIDR('64:ff9b::/96');
/** Global unicast (RFC 4291): every IPv6 address outside it is local, special or unassigned. */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

/**
 * True for an address webhooks may not reach without `allowPrivate`: any address that ipaddr.js's
 * range table (kept with the IANA special-purpose registries) does not class as plain `unicast`, and
 * any IPv6 address outside global unicast. An IPv4 address inside IPv6 is judged as that IPv4 address
 * where the form reaches it (IPv4-mapped, NAT64's well-known prefix); every other form that embeds
 * one (IPv4-compatible, SIIT, local-use NAT64, 6to4, Teredo) is refused outright.
 * @example isSpecialAddress('::ffff:127.0.0.1') // true
 */
export function isSpecialAddress(address: string): boolean {
  if (isIP(address) === 0 || !ipaddr.isValid(address)) return true;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return parsed.range() !== 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return isSpecialAddress(v6.toIPv4Address().toString());
  if (v6.match(NAT64)) return isSpecialAddress(ipaddr.fromByteArray(v6.toByteArray().slice(12)).toString());
  return v6.range() !== 'unicast' || !v6.match(GLOBAL_UNICAST);
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
