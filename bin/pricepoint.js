#!/usr/bin/env -S node --max-semi-space-size=64
// The `pricepoint` command. The TypeScript sources are compiled to dist/ by `npm install` (prepare).
// --max-semi-space-size=64: a server allocates a little per request and keeps almost none of it; a
// 64 MiB young generation (V8's default is 16) collects that in fewer, cheaper scavenges, about a
// tenth of the server's CPU per request (bench/README.md). Started as `node bin/pricepoint.js`,
// pass the flag yourself, as `npm start` does.
import { holdTickShape } from '../dist/speed/tick-shape.js';

// Before anything else runs: keeps `process.nextTick` on V8's fast path (src/speed/tick-shape.ts).
await holdTickShape();
const { main } = await import('../dist/cli/main.js');

process.exitCode = await main(process.argv, process.env);
