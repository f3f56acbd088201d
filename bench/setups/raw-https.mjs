/**
 * Setup (a) of `npm run bench`, the limit: plain `node:https` answering each known URL with the exact
 * bytes Pricepoint gave for it, headers and body, with the same certificate: what TLS and the bytes
 * themselves cost. No key check, no limits, nothing computed per request. Settings from the
 * environment: BENCH_CERT and BENCH_KEY (PEM files), BENCH_BODIES (a JSON file
 * `{ "<url>": { "contentType", "body", "headers": [name, value, ...] } }`). Prints `{"port":N}` once listening.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';

const bodies = new Map(
  Object.entries(JSON.parse(readFileSync(process.env.BENCH_BODIES, 'utf8'))).map(([url, answer]) => [
    url,
    {
      body: Buffer.from(answer.body),
      head: [...answer.headers, 'content-length', String(Buffer.byteLength(answer.body))],
    },
  ]),
);

const server = createServer(
  { cert: readFileSync(process.env.BENCH_CERT), key: readFileSync(process.env.BENCH_KEY) },
  (request, response) => {
    const answer = bodies.get(request.url ?? '');
    if (answer === undefined) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, answer.head);
    response.end(answer.body);
  },
);
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
process.on('SIGTERM', () => server.close(() => process.exit(0)).closeAllConnections());
