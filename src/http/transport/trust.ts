/**
 * The proxies whose `X-Forwarded-For` is believed (`trustProxy`, docs/settings.md), compiled once per
 * app and given to Fastify (its `request.ip`), the connection guard (which connections come from a
 * proxy) and the fast entry (the client address it admits).
 */

import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';

/** Whether the peer `address`, `hop` proxies away, is a proxy to believe (proxy-addr's form). */
export type TrustFunction = (address: string, hop: number) => boolean;

/** `undefined` when no proxy is believed: the client is the peer. */
export function trustedProxies(list: readonly string[]): TrustFunction | undefined {
  return list.length > 0 ? proxyAddr.compile([...list]) : undefined;
}

/** The client address of `req`, as Fastify's `request.ip` works it out with the same `trust`. */
export function clientAddress(req: IncomingMessage, trust: TrustFunction | undefined): string {
  if (trust === undefined) return req.socket.remoteAddress ?? '';
  const all = proxyAddr.all(req, trust);
  return all[all.length - 1] ?? '';
}
