/**
 * What a connection may cost the server (issue 7): every phase of a connection has a deadline, so a
 * client that trickles its headers or opens connections and sends nothing cannot hold them, and one
 * client address may hold only so many connections at once, so it cannot take the sockets (file
 * descriptors) every other client needs.
 */
import type { Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { TlsOptions } from 'node:tls';
import proxyAddr from '@fastify/proxy-addr';

export interface ConnectionLimits {
  /** The TLS handshake must be done within this many milliseconds of the connection opening. */
  readonly handshakeMs: number;
  /** A request's line and headers must have arrived within this many milliseconds of its first byte. */
  readonly headersMs: number;
  /** A whole request, body included (bodies are at most 1 MiB, 16 MiB for a price import). */
  readonly requestMs: number;
  /** An idle keep-alive connection is closed after this many milliseconds. */
  readonly keepAliveMs: number;
  /** A connection on which nothing moves at all is closed after this many milliseconds. */
  readonly idleMs: number;
  /** Connections one client address may hold open at once; 0: no bound. Trusted proxies are exempt. */
  readonly perAddress: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  handshakeMs: 10_000,
  headersMs: 10_000,
  requestMs: 30_000,
  keepAliveMs: 5_000,
  idleMs: 30_000,
  perAddress: 256,
};

/**
 * TLS 1.2 and 1.3 only, and on 1.2 only suites with forward secrecy and authenticated encryption
 * (Mozilla's "intermediate" list without DHE): no CBC, no RSA key exchange, no SHA-1 MACs.
 */
export const TLS_PROTOCOL: Pick<TlsOptions, 'minVersion' | 'ciphers' | 'honorCipherOrder'> = {
  minVersion: 'TLSv1.2',
  ciphers: [
    'TLS_AES_128_GCM_SHA256',
    'TLS_AES_256_GCM_SHA384',
    'TLS_CHACHA20_POLY1305_SHA256',
    'ECDHE-ECDSA-AES128-GCM-SHA256',
    'ECDHE-RSA-AES128-GCM-SHA256',
    'ECDHE-ECDSA-AES256-GCM-SHA384',
    'ECDHE-RSA-AES256-GCM-SHA384',
    'ECDHE-ECDSA-CHACHA20-POLY1305',
    'ECDHE-RSA-CHACHA20-POLY1305',
  ].join(':'),
  honorCipherOrder: true,
};

/** The options of `http(s).createServer` that bound each phase of a connection. */
export function serverTimeouts(limits: ConnectionLimits) {
  return {
    handshakeTimeout: limits.handshakeMs,
    headersTimeout: limits.headersMs,
    requestTimeout: limits.requestMs,
    keepAliveTimeout: limits.keepAliveMs,
    // How often Node looks for requests past headersTimeout or requestTimeout (30 s by default,
    // which would let a trickling client keep a connection for half a minute past its deadline).
    connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(limits.headersMs / 4))),
  };
}

/**
 * Closes each connection past `limits.perAddress` from one address as soon as it opens, before
 * any TLS or HTTP work is spent on it, and bounds idle sockets. `refused` is told of each one closed.
 */
export function guardConnections(
  server: HttpServer | HttpsServer,
  limits: ConnectionLimits,
  trustProxy: readonly string[],
  refused: () => void,
): void {
  server.setTimeout(limits.idleMs);
  if (limits.perAddress <= 0) return;
  // A proxy in front carries every client's connections; it is trusted to bound them itself.
  const trusted = trustProxy.length > 0 ? proxyAddr.compile([...trustProxy]) : () => false;
  const open = new Map<string, number>();
  // Before the server's own listener, so a refused socket never reaches TLS or the HTTP parser.
  server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || trusted(address, 0)) return;
    const count = open.get(address) ?? 0;
    if (count >= limits.perAddress) {
      refused();
      socket.destroy();
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}
