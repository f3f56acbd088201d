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
 * answer of any size still reaches a client that reads it. docs/decisions.md says the same. An
 * answer that never ends (an event stream) is counted by the sweep each second, with the text it
 * queues in front of its socket (`countUnsent`).
 */
import {
  type Server as HttpServer,
  type IncomingMessage,
  type RequestListener,
  ServerResponse,
} from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { addressGroup } from '../../domain/net/client-address.js';
import type { TrustFunction } from './trust.js';

export interface ClientGroupLimits {
  /** Connections one group may hold open at once; 0: no bound. */
  readonly perAddress: number;
  /** Bytes of answers one group's connections may hold unsent; 0: no bound. */
  readonly unsentBytes: number;
  /** Proxies carry many clients' connections and are trusted to bound them themselves: exempt. */
  /** Proxies to believe (./trust.ts): their connections carry many clients and are not counted. */
  readonly trust: TrustFunction | undefined;
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

/** An open connection, as its requests see it (the TLS socket under HTTPS). */
interface Answering {
  readonly socket: Socket;
  /** The open connections of its client group. */
  readonly group: Set<Answering>;
  /** Answers queued behind the one that holds the socket (pipelined requests), until they finish. */
  readonly answers: Set<ServerResponse>;
  /** Bytes an answer keeps before its socket (an event stream's queue: `countUnsent`), while open. */
  readonly held: Set<() => number>;
}

/** How often every group is counted again, besides when its answers are handed over or ended. */
const SWEEP_MS = 1_000;

/**
 * Bytes written for `connection` and not yet taken: in its socket, in answers waiting their turn,
 * and in what answers keep before the socket.
 */
function unsentOf({ socket, answers, held }: Answering): number {
  if (socket.destroyed) return 0;
  let bytes = socket.writableLength;
  // An answer queued behind another keeps its bytes itself until the socket is handed to it.
  for (const answer of answers) if (answer.socket !== socket) bytes += answer.writableLength;
  for (const kept of held) bytes += kept();
  return bytes;
}

/**
 * Counts each group's connections (refusing those past the bound) and watches what their answers
 * leave unsent. The server must be made with `ServerResponse` as its response class, which checks
 * the group of each answer the moment it is ended, and with `listener(...)` as its request
 * listener, which follows answers queued behind others; `watch` then follows the server's
 * connections. `unsentBytes` is read by the metrics.
 * @example const groups = clientGroups(limits); const server = createServer({ ServerResponse: groups.ServerResponse }, groups.listener(serve)); groups.watch(server)
 */
export function clientGroups(limits: ClientGroupLimits): {
  readonly ServerResponse: typeof ServerResponse;
  /** `inner`, as the server's request listener that also follows answers queued behind others. */
  listener(inner: RequestListener): RequestListener;
  watch(server: HttpServer | HttpsServer): void;
  unsentBytes(): UnsentBytes;
  /**
   * Counts what `bytes()` reports with the unsent bytes of the connection of `response`, until the
   * answer closes: for an answer that keeps text of its own before writing it to the socket and
   * never ends (an event stream), which the group's bound must see too.
   */
  countUnsent(response: ServerResponse, bytes: () => number): void;
} {
  const trusted = limits.trust;
  const groupOf = (address: string | undefined): string | undefined =>
    address === undefined || trusted?.(address, 0) === true ? undefined : addressGroup(address);

  const answering = new Map<string, Set<Answering>>();
  /** Every followed connection of this server, by its socket. */
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
      // The answer that holds the socket, with none queued behind it: one answer still gets through.
      if (left === 1 && connection.answers.size === 0) return;
      group.delete(connection);
      connection.socket.destroy();
      limits.closedUnsent();
      total -= bytes;
      left--;
    }
  };

  /** Joins a connection (the TLS socket under HTTPS) to its client's group until it closes. */
  const follow = (socket: Socket): void => {
    const key = groupOf(socket.remoteAddress);
    if (key === undefined || socket.destroyed) return;
    let group = answering.get(key);
    if (group === undefined) {
      group = new Set();
      answering.set(key, group);
    }
    const connection: Answering = { socket, group, answers: new Set(), held: new Set() };
    bySocket.set(socket, connection);
    group.add(connection);
    const joined = group;
    socket.once('close', () => {
      joined.delete(connection);
      if (joined.size === 0 && answering.get(key) === joined) answering.delete(key);
    });
  };

  /**
   * Just after an answer was ended: the whole answer has been handed to the socket (or, for one
   * queued behind another, is kept by the answer), which is when a group can pass its bound. An
   * answer the socket took at once (a client that reads) added nothing, and the group need not be
   * counted; that is the common case, and it costs one look at the socket.
   */
  const ended = (response: ServerResponse): void => {
    const socket = response.socket;
    if (socket !== null && socket.writableLength === 0) return;
    const connection = bySocket.get(socket ?? response.req.socket);
    if (connection !== undefined && !connection.socket.destroyed) enforce(connection.group);
  };

  /**
   * An answer queued behind another (pipelining: no socket yet) keeps its bytes itself until the
   * socket is handed to it; it is counted with its connection until it has finished.
   */
  const queued = (request: IncomingMessage, response: ServerResponse): void => {
    const connection = bySocket.get(request.socket);
    if (connection === undefined) return;
    connection.answers.add(response);
    response.once('prefinish', () => {
      if (unsentOf(connection) > 0) enforce(connection.group);
    });
    // An answer that never finishes goes with its connection, and `answers` with it.
    response.once('finish', () => connection.answers.delete(response));
  };

  // One class per server, so that a process with several servers keeps their groups apart.
  const end = ServerResponse.prototype.end;
  class GuardedResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {}
  GuardedResponse.prototype.end = function guardedEnd(
    this: ServerResponse,
    chunk?: unknown,
    encoding?: unknown,
    callback?: unknown,
  ) {
    const result = Reflect.apply(end, this, [chunk, encoding, callback]) as ServerResponse;
    ended(this);
    return result;
  } as typeof end;

  return {
    ServerResponse: limits.unsentBytes > 0 ? GuardedResponse : ServerResponse,

    countUnsent(response, bytes) {
      const connection = bySocket.get(response.req.socket);
      if (connection === undefined) return;
      connection.held.add(bytes);
      response.once('close', () => connection.held.delete(bytes));
    },

    // The server's one listener rather than a second one beside it: with two, Node's `emit` copies
    // the listeners and calls each through `Reflect.apply` on every request (bench/README.md).
    listener(inner) {
      if (limits.unsentBytes <= 0) return inner;
      return (request, response) => {
        if (response.socket === null) queued(request, response);
        inner(request, response);
      };
    },

    watch(server) {
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
      if (limits.unsentBytes <= 0) return;
      // The socket that requests are read from and answers written to: the TLS socket under HTTPS.
      if ('setSecureContext' in server) server.on('secureConnection', follow);
      else server.on('connection', follow);
      const sweep = setInterval(() => {
        for (const group of answering.values()) enforce(group);
      }, SWEEP_MS).unref();
      server.once('close', () => clearInterval(sweep));
    },

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
