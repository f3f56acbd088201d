// One `pricepoint import` run in its own process (the compiled CLI, as an operator runs it); it prints
// its own peak resident set size as one JSON line on stderr when the import is done.
import { main } from '../dist/cli/main.js';

const started = process.hrtime.bigint();
const status = await main(['node', 'pricepoint', ...process.argv.slice(2)]);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
// maxRSS is in kilobytes.
process.stderr.write(`${JSON.stringify({ status, seconds, maxRssKiB: process.resourceUsage().maxRSS })}\n`);
process.exitCode = status;
