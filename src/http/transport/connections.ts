/**
 * What a connection may cost the server: every phase of a connection has a deadline, so a client
 * that trickles its headers or opens connections and sends nothing cannot hold them; one client
 * (an address, an IPv6 /64: src/domain/net/client-address.ts) may hold only so many connections at
 * once, so it cannot take the sockets (file descriptors) every other client needs, and only so many
 * bytes of answers it does not read (client-groups.ts), so it cannot take the server's memory.
 */
import type { Server as HttpServer, RequestListener, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket, TlsOptions } from 'node:tls';
import { plainHttpAnswer } from '../contract/problem.js';
import type { Metrics } from '../metrics.js';
import { clientGroups } from './client-groups.js';
import { tcpBeneath } from './tls-parent.js';
import type { TrustFunction } from './trust.js';

export interface ConnectionLimits {
  /** The TLS handshake must be done within this many milliseconds of the connection opening. */
  readonly handshakeMs: number;
  /** A request's line and headers must have arrived within this many milliseconds of its first byte. */
  readonly headersMs: number;
  /** A whole request, body included (bodies are at most 1 MiB, 16 MiB for a price import). */
  readonly requestMs: number;
  /** An idle keep-alive connection is closed after this many milliseconds. */
  readonly keepAliveMs: number;
  /**
   * A connection on which nothing moves is closed after this many milliseconds (to a second more):
   * before its first request, and one whose client stopped taking its answer or event stream (a
   * client that takes it, however slowly, keeps it). Between requests `keepAliveMs` applies instead.
   * `PRICEPOINT_IDLE_SECONDS` sets it.
   */
  readonly idleMs: number;
  /** Connections one client group may hold open at once; 0: no bound. Trusted proxies are exempt. */
  readonly perAddress: number;
  /** Answer bytes one client group's connections may hold unsent; 0: no bound. Trusted proxies are exempt. */
  readonly unsentBytesPerAddress: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  handshakeMs: 10_000,
  headersMs: 10_000,
  requestMs: 30_000,
  keepAliveMs: 5_000,
  idleMs: 30_000,
  perAddress: 256,
  unsentBytesPerAddress: 32 * 1024 * 1024,
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
function serverTimeouts(limits: ConnectionLimits) {
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
 * Bounds idle sockets, and what one client group may hold (client-groups.ts): connections past
 * `limits.perAddress` are closed as soon as they open, before any TLS or HTTP work is spent on them,
 * and unsent answers past `limits.unsentBytesPerAddress` close the connections holding the most.
 * `options` and `listener(serve)` are for `http(s).createServer` (the deadlines, and the response
 * class and request listener that count unsent answers); `guard` is then called with the server
 * made with them.
 * @example const guard = connectionGuard(limits, [], metrics); guard.guard(createServer(guard.options, guard.listener(serve)))
 */
export function connectionGuard(
  limits: ConnectionLimits,
  trust: TrustFunction | undefined,
  metrics: Metrics,
) {
  const groups =
    limits.perAddress > 0 || limits.unsentBytesPerAddress > 0
      ? clientGroups({
          perAddress: limits.perAddress,
          unsentBytes: limits.unsentBytesPerAddress,
          trust,
          refused: () => metrics.connectionsRefused.inc(),
          closedUnsent: () => metrics.connectionsClosedUnsent.inc(),
        })
      : undefined;
  return {
    options: {
      ...serverTimeouts(limits),
      ...(groups && { ServerResponse: groups.ServerResponse }),
    },
    listener: (serve: RequestListener): RequestListener => (groups ? groups.listener(serve) : serve),
    /** See `clientGroups`; nothing where no bound applies. */
    countUnsent(response: ServerResponse, bytes: () => number): void {
      groups?.countUnsent(response, bytes);
    },
    guard(server: HttpServer | HttpsServer): void {
      if (limits.idleMs > 0) idleDeadline(server, limits.idleMs);
      if ('setSecureContext' in server) answerPlainHttp(server);
      if (groups === undefined) return;
      groups.watch(server);
      metrics.observeUnsentBytes(groups.unsentBytes);
    },
  };
}

/** How often the idle deadline looks for answers left unsent. */
const IDLE_SWEEP_MS = 1_000;

/**
 * The idle deadline (`ConnectionLimits.idleMs`), without a timer set on every request.
 *
 * Node's `server.setTimeout(idleMs)` sets each socket's timer again at the start of every request
 * and refreshes it on every read and write: a measurable share of a cached answer (bench/README.md),
 * for the rare client that stops taking its answer. Here the timer is set when a connection opens
 * (a client that never sends a request), and by a look at every open connection each second, on
 * those that hold answer bytes their client has not taken (Node refreshes it while the client
 * takes them). Between requests Node's keep-alive deadline replaces it; while a request is read,
 * the headers and request deadlines bound it. A request the server itself takes long to answer is
 * not cut.
 */
function idleDeadline(server: HttpServer | HttpsServer, idleMs: number): void {
  const open = new Set<Socket>();
  const idle = (socket: Socket): void => {
    if (socket.timeout !== idleMs && !socket.destroyed) socket.setTimeout(idleMs);
  };
  // The socket requests are read from and answers written to: the TLS socket under HTTPS.
  server.on('setSecureContext' in server ? 'secureConnection' : 'connection', (socket: Socket) => {
    if (socket.destroyed) return;
    idle(socket);
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  const sweep = setInterval(() => {
    for (const socket of open) if (socket.writableLength > 0) idle(socket);
  }, IDLE_SWEEP_MS).unref();
  server.once('close', () => clearInterval(sweep));
}

/**
 * A plain `http://` request to the HTTPS port fails the TLS handshake with ERR_SSL_HTTP_REQUEST
 * (OpenSSL recognises `GET `, `POST ` and the like); it is answered in plain HTTP with a 400 that
 * says to use https. Every other failed handshake is closed, as Node does with no listener.
 */
function answerPlainHttp(server: HttpsServer): void {
  server.on('tlsClientError', (error: NodeJS.ErrnoException, tlsSocket: TLSSocket) => {
    const tcp = error.code === 'ERR_SSL_HTTP_REQUEST' ? tcpBeneath(tlsSocket) : undefined;
    if (tcp !== undefined) plainHttpAnswer(tcp);
    else tlsSocket.destroy();
  });
}
