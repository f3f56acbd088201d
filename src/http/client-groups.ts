/**
 * What one client may hold of the server. A client is a group of addresses (addressGroup: an IPv4
 * address, or an IPv6 /64, since one host usually owns a whole /64 and would otherwise get a bound
 * per address). A group may hold only so many connections, and only so many bytes of answers that
 * were written for it and not yet taken by it: a client that asks for large answers and does not
 * read them makes the server keep each one (encrypted, under TLS) until its socket takes it.
 *
 * Past the byte bound the group's connections holding the most are closed until it is back under
 * the bound, so a slow reader loses its own connections while a client beside it that reads is
 * served. The group's last connection holding bytes is spared while it holds a single answer: one
 * answer of any size still reaches a client that reads it. README "Decisions" says the same.
 */
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import proxyAddr from '@fastify/proxy-addr';
import { addressGroup } from '../domain/net/client-address.js';

export interface ClientGroupLimits {
  /** Connections one group may hold open at once; 0: no bound. */
  readonly perAddress: number;
  /** Bytes of answers one group's connections may hold unsent; 0: no bound. */
  readonly unsentBytes: number;
  /** Proxies carry many clients' connections and are trusted to bound them themselves: exempt. */
  readonly trustProxy: readonly string[];
  /** Told of each connection closed on opening for being past `perAddress`. */
  readonly refused: () => void;
  /** Told of each connection closed for its group holding more than `unsentBytes`. */
  readonly closedUnsent: () => void;
}

export interface UnsentBytes {
  /** Bytes of answers not yet taken by their clients, over every group. */
  readonly total: number;
  /** The most any one group holds. */
  readonly largestGroup: number;
}

/** A connection that has asked for something, as its requests see it (the TLS socket under HTTPS). */
interface Answering {
  readonly socket: Socket;
  /** The connections of its client group that have asked for something. */
  readonly group: Set<Answering>;
  /** Answers begun and not yet all sent; pipelined requests wait behind the first. */
  readonly answers: Set<ServerResponse>;
}

/** How often every group is counted again, besides when its answers are handed over or ended. */
const SWEEP_MS = 1_000;

/** Bytes written for `connection` and not yet taken: in its socket, and in answers waiting their turn. */
function unsentOf({ socket, answers }: Answering): number {
  if (socket.destroyed) return 0;
  let bytes = socket.writableLength;
  // An answer queued behind another keeps its bytes itself until the socket is handed to it.
  for (const answer of answers) if (answer.socket !== socket) bytes += answer.writableLength;
  return bytes;
}

/**
 * Counts each group's connections on the server (refusing those past the bound) and watches what
 * their answers leave unsent; `unsentBytes` is read by the metrics.
 */
export function trackClientGroups(
  server: HttpServer | HttpsServer,
  limits: ClientGroupLimits,
): { unsentBytes: () => UnsentBytes } {
  const trusted = limits.trustProxy.length > 0 ? proxyAddr.compile([...limits.trustProxy]) : () => false;
  const groupOf = (address: string | undefined): string | undefined =>
    address === undefined || trusted(address, 0) ? undefined : addressGroup(address);

  if (limits.perAddress > 0) {
    const open = new Map<string, number>();
    // Before the server's own listener, so a refused socket never reaches TLS or the HTTP parser.
    server.prependListener('connection', (socket: Socket) => {
      const group = groupOf(socket.remoteAddress);
      if (group === undefined) return;
      const count = open.get(group) ?? 0;
      if (count >= limits.perAddress) {
        limits.refused();
        socket.destroy();
        return;
      }
      open.set(group, count + 1);
      socket.once('close', () => {
        const left = (open.get(group) ?? 1) - 1;
        if (left <= 0) open.delete(group);
        else open.set(group, left);
      });
    });
  }

  const answering = new Map<string, Set<Answering>>();
  const bySocket = new WeakMap<Socket, Answering>();

  /** Closes the group's connections holding the most until it holds at most the bound. */
  const enforce = (group: Set<Answering>): void => {
    let total = 0;
    const holding: { connection: Answering; bytes: number }[] = [];
    for (const connection of group) {
      const bytes = unsentOf(connection);
      if (bytes === 0) continue;
      total += bytes;
      holding.push({ connection, bytes });
    }
    if (total <= limits.unsentBytes) return;
    holding.sort((a, b) => b.bytes - a.bytes);
    let left = holding.length;
    for (const { connection, bytes } of holding) {
      if (total <= limits.unsentBytes) return;
      if (left === 1 && connection.answers.size <= 1) return;
      group.delete(connection);
      connection.socket.destroy();
      limits.closedUnsent();
      total -= bytes;
      left--;
    }
  };

  if (limits.unsentBytes > 0) {
    server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
      const { socket } = request;
      let connection = bySocket.get(socket);
      if (connection === undefined) {
        const key = groupOf(socket.remoteAddress);
        if (key === undefined) return;
        const group = answering.get(key) ?? new Set<Answering>();
        answering.set(key, group);
        const created: Answering = { socket, group, answers: new Set() };
        connection = created;
        bySocket.set(socket, created);
        group.add(created);
        socket.once('close', () => {
          group.delete(created);
          if (group.size === 0 && answering.get(key) === group) answering.delete(key);
        });
      }
      const current = connection;
      const { answers, group } = connection;
      answers.add(response);
      // 'prefinish': the whole answer has just been handed to the socket (or the one it queued
      // behind has finished), which is when a group can pass its bound. An answer the socket took
      // at once (a client that reads) added nothing, and the group need not be counted.
      response.once('prefinish', () => {
        if (unsentOf(current) > 0) enforce(group);
      });
      // An answer queued behind another (no socket yet) keeps its bytes itself, and emits nothing
      // when it has them all: the group is counted as soon as the answer is ended, not only at the
      // next sweep, so pipelined answers cannot pass the bound for up to a sweep's length.
      if (response.socket === null) {
        const end = response.end;
        response.end = ((...args: unknown[]) => {
          const result: unknown = Reflect.apply(end, response, args);
          if (!current.socket.destroyed) enforce(group);
          return result;
        }) as typeof response.end;
      }
      // An answer that never finishes goes with its connection, and `answers` with it.
      response.once('finish', () => answers.delete(response));
    });
    const sweep = setInterval(() => {
      for (const group of answering.values()) enforce(group);
    }, SWEEP_MS).unref();
    server.once('close', () => clearInterval(sweep));
  }

  return {
    unsentBytes() {
      let total = 0;
      let largestGroup = 0;
      for (const group of answering.values()) {
        let bytes = 0;
        for (const connection of group) bytes += unsentOf(connection);
        total += bytes;
        largestGroup = Math.max(largestGroup, bytes);
      }
      return { total, largestGroup };
    },
  };
}
