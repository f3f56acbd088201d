/**
 * `tcpBeneath` finds the TCP connection of a TLS socket whose handshake failed on a plain HTTP
 * request, and bytes written to it reach the client unencrypted: what the plain-HTTP hint needs.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { test } from 'node:test';
import { createServer, type TLSSocket } from 'node:tls';
import { testTls } from '../../../test/helpers/harness.js';
import { tcpBeneath } from './tls-parent.js';

test('the TCP connection beneath a failed TLS handshake takes a plain answer', async () => {
  const { key, cert } = await testTls();
  const server = createServer({ key, cert });
  server.on('tlsClientError', (error: NodeJS.ErrnoException, tlsSocket: TLSSocket) => {
    assert.equal(error.code, 'ERR_SSL_HTTP_REQUEST');
    const tcp = tcpBeneath(tlsSocket);
    assert.ok(tcp, 'found');
    tcp.end('plain words\n');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const client = connect({ host: '127.0.0.1', port });
  let text = '';
  client.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
  });
  client.write('GET / HTTP/1.1\r\nhost: localhost\r\n\r\n');
  await once(client, 'close');
  server.close();
  assert.equal(text, 'plain words\n');
});
