/**
 * Setup (a) of `npm run bench` and `npm run bench:instructions`, the limit: plain `node:https` (or
 * `node:http` with BENCH_PLAIN=1) answering each known request with the exact bytes Pricepoint gave
 * for it, headers and body, with the same certificate and TLS settings: what TLS and the bytes
 * themselves cost. No key check, no limits, nothing computed per request. Settings from the
 * environment: BENCH_CERT and BENCH_KEY (PEM files), BENCH_BODIES (a JSON file
 * `{ "<url>" or "<url> <coding>": { "contentType", "body" or "base64", "headers": [name, value, ...] } }`:
 * a request with `Accept-Encoding` gets the entry of its URL and that header's value, if there is one).
 * Prints `{"port":N}` once listening.
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { TLS_PROTOCOL } from '../../dist/http/transport/connections.js';

const bodies = new Map(
  Object.entries(JSON.parse(readFileSync(process.env.BENCH_BODIES, 'utf8'))).map(([url, answer]) => {
    const body =
      answer.base64 === undefined ? Buffer.from(answer.body) : Buffer.from(answer.base64, 'base64');
    return [url, { body, head: [...answer.headers, 'content-length', String(body.length)] }];
  }),
);

function answer(request, response) {
  const coding = request.headers['accept-encoding'];
  const found = (coding && bodies.get(`${request.url} ${coding}`)) || bodies.get(request.url ?? '');
  if (found === undefined) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, found.head);
  response.end(found.body);
}

const server =
  process.env.BENCH_PLAIN === '1'
    ? createHttpServer(answer)
    : createHttpsServer(
        {
          cert: readFileSync(process.env.BENCH_CERT),
          key: readFileSync(process.env.BENCH_KEY),
          ...TLS_PROTOCOL,
        },
        answer,
      );
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
process.on('SIGTERM', () => server.close(() => process.exit(0)).closeAllConnections());
