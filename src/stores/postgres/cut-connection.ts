/**
 * Closes the socket under a pg client at once, for a database that stopped answering: `end()`
 * would wait for it. pg keeps the socket as `client.connection.stream`, which it does not document;
 * cut-connection.test.ts holds it to a real query on a real server. Where a pg version keeps it
 * another way, nothing is cut (`false`) and the guarded pool's deadlines still answer the caller.
 */
import type pg from 'pg';

/** Destroys the socket of `client`; `false` when it could not be found. */
export function cutConnection(client: pg.ClientBase): boolean {
  const stream = (client as unknown as { connection?: { stream?: unknown } }).connection?.stream;
  if (
    stream === null ||
    typeof stream !== 'object' ||
    typeof (stream as { destroy?: unknown }).destroy !== 'function'
  )
    return false;
  (stream as { destroy(): void }).destroy();
  return true;
}
