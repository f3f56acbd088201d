/**
 * The load generator of bench/memory.ts, in a process of its own: one autocannon run whose requests
 * rotate over many API keys and a mix of read paths. Takes a JSON argument
 * `{ url, keysFile, paths, connections, seconds }` (keysFile: a JSON array of keys) and prints one
 * JSON line with the figures. Keys go round in order, so every key is used equally often; the path
 * of each request is drawn at random from `paths`.
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { printFigures } from './figures.mjs';

const { url, keysFile, paths, connections, seconds } = JSON.parse(process.argv[2]);
const keys = JSON.parse(readFileSync(keysFile, 'utf8'));
let next = 0;

const result = await autocannon({
  url,
  connections,
  duration: seconds,
  pipelining: 1,
  requests: [
    {
      method: 'GET',
      // autocannon hands over a fresh copy of the request (headers included) each time.
      setupRequest(request) {
        request.path = paths[Math.floor(Math.random() * paths.length)];
        request.headers['x-api-key'] = keys[next];
        next = (next + 1) % keys.length;
        return request;
      },
    },
  ],
});
printFigures(result);
