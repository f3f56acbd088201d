/**
 * A TCP proxy a test can cut, to play "the database went away" without stopping the real server
 * that other tests use. Point a client at `port`, then:
 * - `cut()`: every proxied connection is dropped and new ones are refused (the server is down);
 * - `stall()`: connections stay open but nothing moves, in either direction (the server hangs);
 *   bytes are held, not lost, so the protocol stays in step when traffic moves again;
 * - `strand()`: the connections open now stay open but never move a byte again (a dead network
 *   path, a NAT or firewall that forgot them); new connections work as before;
 * - `restore()`: connections are accepted (on the same port) and traffic moves again.
 * Works for any TCP service: Redis, PostgreSQL.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  /** The local port clients should use. */
  readonly port: number;
  /** Drops every connection and refuses new ones until `restore()`. */
  cut(): Promise<void>;
  /** Keeps connections (and accepts new ones) but moves no bytes until `restore()`. */
  stall(): void;
  /** The connections open now go silent for good, even after `restore()`; new ones are not affected. */
  strand(): void;
  /** Accepts connections again, on the same port, and moves bytes again. */
  restore(): Promise<void>;
  /** Drops everything and stops for good. */
  close(): Promise<void>;
}

interface Pair {
  readonly client: Socket;
  readonly upstream: Socket;
}

/** @example const proxy = await startTcpProxy(6379); new Redis(proxy.port); await proxy.cut(); */
export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  /** Connections `strand()` silenced for good; dropped only by `cut()` and `close()`. */
  const stranded = new Set<Pair>();
  let stalled = false;

  const flow = ({ client, upstream }: Pair) => {
    client.pipe(upstream);
    upstream.pipe(client);
  };
  const hold = ({ client, upstream }: Pair) => {
    client.unpipe(upstream);
    upstream.unpipe(client);
    client.pause();
    upstream.pause();
  };
  const newServer = () =>
    createServer((client) => {
      const pair = { client, upstream: connect(targetPort, targetHost) };
      pairs.add(pair);
      // Either side failing or closing ends both: the client must see the connection drop.
      const end = () => {
        pairs.delete(pair);
        stranded.delete(pair);
        pair.client.destroy();
        pair.upstream.destroy();
      };
      for (const socket of [pair.client, pair.upstream]) socket.on('error', end).on('close', end);
      if (stalled) hold(pair);
      else flow(pair);
    });
  const listen = (server: Server, port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        const address = server.address();
        resolve(typeof address === 'object' && address !== null ? address.port : port);
      });
    });
  const stop = async (server: Server | undefined) => {
    stalled = false;
    if (server === undefined) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const { client, upstream } of [...pairs, ...stranded]) {
      client.destroy();
      upstream.destroy();
    }
    await closed;
  };

  let server: Server | undefined = newServer();
  const port = await listen(server, 0);
  return {
    port,
    async cut() {
      const current = server;
      server = undefined;
      await stop(current);
    },
    stall() {
      if (stalled) return;
      stalled = true;
      for (const pair of pairs) hold(pair);
    },
    strand() {
      for (const pair of pairs) {
        hold(pair);
        pairs.delete(pair);
        stranded.add(pair);
      }
    },
    async restore() {
      if (stalled) {
        stalled = false;
        for (const pair of pairs) flow(pair);
      }
      if (server !== undefined) return;
      const next = newServer();
      await listen(next, port);
      server = next;
    },
    async close() {
      const current = server;
      server = undefined;
      await stop(current);
    },
  };
}
