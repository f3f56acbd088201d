/**
 * Setup (b) of `npm run bench` and `npm run bench:instructions`: what a user would build instead of
 * Pricepoint. Fastify 5 over HTTPS (or HTTP with BENCH_PLAIN=1) with the same certificate and TLS
 * settings, `@fastify/rate-limit` counting per key in memory (limits far above what
 * the benchmark sends), and a key check: `x-api-key` must equal BENCH_API_KEY, else 401. It answers
 * the payloads Pricepoint gave (BENCH_BODIES, as for raw-https.mjs). No request logging.
 * Prints `{"port":N}` once listening.
 */
import { readFileSync } from 'node:fs';
import rateLimit from '@fastify/rate-limit';
import Fastify from 'fastify';
import { TLS_PROTOCOL } from '../../dist/http/connections.js';

const bodies = new Map(Object.entries(JSON.parse(readFileSync(process.env.BENCH_BODIES, 'utf8'))));
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
  if (answer.base64 !== undefined) {
    return reply
      .type(answer.contentType)
      .header('content-encoding', coding)
      .send(Buffer.from(answer.base64, 'base64'));
  }
  return reply.type(answer.contentType).send(answer.body);
});
await app.listen({ host: '127.0.0.1', port: 0 });
console.log(JSON.stringify({ port: app.server.address().port }));
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
