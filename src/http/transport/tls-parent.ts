/**
 * The TCP connection beneath a TLS socket, for the one answer that must bypass TLS: a plain
 * `http://` request sent to the HTTPS port (connections.ts). Node keeps it as the TLS socket's
 * `_parent`, which is not typed or documented; tls-parent.test.ts holds it to a real handshake
 * failure. Where a Node version keeps it another way, this finds nothing and the connection is
 * closed without the hint, as Node does by itself.
 */
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';

/** The TCP connection `tlsSocket` wraps, if Node exposes it and it is still open. */
export function tcpBeneath(tlsSocket: TLSSocket): Duplex | undefined {
  const parent = (tlsSocket as TLSSocket & { _parent?: unknown })._parent;
  if (parent === null || typeof parent !== 'object') return undefined;
  const tcp = parent as Duplex;
  return typeof tcp.write === 'function' && !tcp.destroyed ? tcp : undefined;
}
