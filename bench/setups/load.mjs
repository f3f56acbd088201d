/**
 * The load generator of `npm run bench`, in a process of its own so it never shares an event loop
 * with a server: one autocannon run against one URL. Takes a JSON argument
 * `{ url, headers, connections, seconds }` and prints one JSON line with the figures.
 */
import autocannon from 'autocannon';
import { printFigures } from './figures.mjs';

const { url, headers, connections, seconds } = JSON.parse(process.argv[2]);
const result = await autocannon({ url, headers, connections, duration: seconds, pipelining: 1 });
printFigures(result);
