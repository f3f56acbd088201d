/**
 * Setup (b) of `npm run bench` and `npm run bench:instructions`: what a user would build instead of
 * Pricepoint. Fastify 5 over HTTPS (or HTTP with BENCH_PLAIN=1) with the same certificate and TLS
 * settings, `@fastify/rate-limit` counting per key in memory (limits far above what
 * the benchmark sends), and a key check: `x-api-key` must equal BENCH_API_KEY, else 401. It answers
 * with the bytes Pricepoint gave (BENCH_BODIES, as for raw-https.mjs): the same body and the same
 * header fields, so that it does the work of the same answer. The plugin writes the
 * `x-ratelimit-*` fields with its own counts; the others, `ratelimit` and `ratelimit-policy`
 * among them, are sent as Pricepoint sent them, so this setup computes less per request than
 * Pricepoint does. Bodies are decoded once, at the start. No request logging.
 * Prints `{"port":N}` once listening.
 */
import { readFileSync } from 'node:fs';
import rateLimit from '@fastify/rate-limit';
import Fastify from 'fastify';
import { TLS_PROTOCOL } from '../../dist/http/transport/connections.js';

/** The fields `@fastify/rate-limit` writes itself (`addHeaders`), with the names Pricepoint uses. */
const NOT_COPIED = new Set(['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']);
const bodies = new Map(
  Object.entries(JSON.parse(readFileSync(process.env.BENCH_BODIES, 'utf8'))).map(([url, answer]) => {
    const body =
      answer.base64 === undefined ? Buffer.from(answer.body) : Buffer.from(answer.base64, 'base64');
    const fields = {};
    for (let i = 0; i < answer.headers.length; i += 2) {
      const name = answer.headers[i].toLowerCase();
      if (!NOT_COPIED.has(name)) fields[name] = answer.headers[i + 1];
    }
    return [url, { body, fields }];
  }),
);
const apiKey = process.env.BENCH_API_KEY;

const app = Fastify({
  logger: false,
  ...(process.env.BENCH_PLAIN !== '1' && {
    https: {
      cert: readFileSync(process.env.BENCH_CERT),
      key: readFileSync(process.env.BENCH_KEY),
      ...TLS_PROTOCOL,
    },
  }),
});
// An app-level onRequest hook runs before the rate limiter's route-level one: no key, no count.
app.addHook('onRequest', async (request, reply) => {
  if (request.headers['x-api-key'] !== apiKey) {
    reply.code(401).send({ error: 'invalid API key' });
    return reply;
  }
});
await app.register(rateLimit, {
  max: 1_000_000_000,
  timeWindow: 60_000,
  keyGenerator: (request) => String(request.headers['x-api-key']),
});
app.get('/api/v1/prices/today', async (request, reply) => {
  const coding = request.headers['accept-encoding'];
  const answer = (coding && bodies.get(`${request.url} ${coding}`)) || bodies.get(request.url);
  if (answer === undefined) return reply.code(404).send({ error: 'not found' });
  return reply.headers(answer.fields).send(answer.body);
});
await app.listen({ host: '127.0.0.1', port: 0 });
console.log(JSON.stringify({ port: app.server.address().port }));
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
