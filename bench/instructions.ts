/**
 * Instructions per request, counted, not timed: wall time on a shared machine moves by tens of
 * percent from one run to the next, while `valgrind --tool=callgrind` counts the same instructions
 * for the same work whatever else the machine does. Benchmark, not a test.
 *
 * Each server runs under callgrind with instrumentation off; it is warmed up (BENCH_WARMUP requests
 * of the path, so V8 has compiled what it will compile), then counting is switched on for exactly
 * BENCH_REQUESTS keep-alive requests, one at a time, and off again (`callgrind_control`). Every
 * thread of the process is counted: the main thread, V8's compiler and GC threads, libuv's pool.
 * Counts are made until the last BENCH_COUNTS (3) agree within BENCH_STEADY (3%), at most
 * BENCH_MAX_COUNTS (12) times; the table takes the median of the last three and prints their spread.
 *
 * Servers, over HTTPS and over plain HTTP, all with the same certificate and TLS settings:
 *  raw      `node:https` / `node:http` sending Pricepoint's own head and body bytes (bench/setups/raw-https.mjs)
 *  fastify  Fastify 5 with @fastify/rate-limit and a key check, the same bytes (bench/setups/fastify-minimal.mjs)
 *  pricepoint  `pricepoint serve --dev-data` on the embedded default; plain HTTP with PRICEPOINT_INSECURE_HTTP
 *  switch off  the same with PRICEPOINT_FAST_PATH=false, the one speed switch: the plain reference
 * Paths: one series (`?symbols=NO1`), the full answer, the full answer with Brotli; mixed traffic
 * (five URLs, several keys, many keep-alive connections, interleaved; raw and Pricepoint); and,
 * Pricepoint's alone, three uncached reads (the first read of a day, a 31-day range, the cheapest
 * window over 3 days), each request on days never read before, against the cached one series.
 *
 * Run with `npm run bench:instructions` (it builds first; needs valgrind). Writes
 * bench/results-instructions.md. BENCH_WARMUP (8000), BENCH_WARMUP_MS (75000), BENCH_REQUESTS
 * (1000), BENCH_COUNTS, BENCH_STEADY, BENCH_MAX_COUNTS. To count only some of it while working on one path: BENCH_SETUPS
 * (`raw,pricepoint,switch off`), BENCH_PROTOCOLS (`https`), BENCH_PATHS (`one series,mixed traffic`); a
 * partial run prints its table and leaves the results file alone. BENCH_KEEP=1 keeps the dumps for
 * `callgrind_annotate`. Mixed traffic: BENCH_MIX_CONNECTIONS (16), BENCH_MIX_KEYS (8); uncached
 * rows: BENCH_UNCACHED_SCALE (1), BENCH_UNCACHED_MAX_COUNTS (6).
 */
import { createWriteStream, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { control, controlAsync, median, newestTotal, requireValgrind, thousands } from './callgrind.js';
import { CLI, cleanups, cli, envWith, REPO, runBench, startChild, stop } from './lib.js';

// V8 was still optimising after 4,000 requests (the two counts of a setup differed by up to 60%);
// by 8,000 they agree within a few percent.
const WARMUP = Number(process.env.BENCH_WARMUP ?? 8000);
/**
 * Warm-up also lasts this long from the server's start (BENCH_WARMUP_MS, 75 s), so that what
 * happens once in a server's first minute falls into it and not into a count: the first roll-over
 * of the one-minute limit windows (code that first runs then is compiled again, about 100,000
 * instructions a request over a count) and the first event prune, a minute after the start.
 */
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 75_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1000);
/**
 * Counts that must agree, made one after another in one process. Now and then a count holds work
 * that is no part of a request's steady cost and that callgrind's slowness (about fifty times)
 * makes fifty times more frequent per request: a major GC (concurrent marking and sweeping), and
 * after it TurboFan compiling again the code it threw away (V8 drops optimised code that holds
 * objects the GC found dead, `--trace-deopt` says "weak objects"), or the limits' window rolling
 * over each minute (the major GCs seen doing this were the memory reducer's, now off: `UNDER_LOAD`).
 * Such a phase can last several counts (a run of 2026-11-25: 157,000, 675,000,
 * 159,000, 166,000 and 111,000 for a path that counts 92,000 otherwise), so neither the median nor
 * the least of a fixed number of counts is safe. Counting goes on until the last COUNTS agree
 * within STEADY of their median, at most MAX_COUNTS times; a path that never settles is marked.
 */
const COUNTS = Number(process.env.BENCH_COUNTS ?? 3);
/**
 * What every server is started with so that V8 runs as under load, where callgrind makes every
 * rate look fifty times lower:
 * - The young generation held at its largest (what `--max-semi-space-size` lets it grow to). V8
 *   shrinks it when the allocation rate it measures is low (under about 1,000 bytes a
 *   millisecond): after a major GC it shrank, and a scavenge then fell into every count (one path
 *   went from 91,000 to 98,600 a request and stayed there).
 * - No memory reducer. It starts a major GC when the allocation rate says the process went idle,
 *   which under callgrind it always seems to: `--trace-gc` showed every major GC in the counts of
 *   2026-11-25 as "Mark-Compact (reduce)". After it TurboFan compiles again the code it threw away
 *   (V8 drops optimised code that holds objects the GC found dead, "weak objects"): counts of
 *   600,000, then 150,000, then a plateau of 101,000 to 105,000 for a path that counts 92,000,
 *   which three counts in a row could mistake for settled. A loaded server is never idle; major
 *   GCs still come when the old generation fills, as they would there.
 */
const UNDER_LOAD = ['--min-semi-space-size=64', '--no-memory-reducer'];
const STEADY = Number(process.env.BENCH_STEADY ?? 0.03);
const MAX_COUNTS = Number(process.env.BENCH_MAX_COUNTS ?? 12);
/** How far apart counts are, as a share of their median. */
const spreadOf = (values: number[]) => (Math.max(...values) - Math.min(...values)) / median(values);
/** Whether the last counts of a path agree, so that counting stops. */
const settled = (kept: number[]) => kept.length === COUNTS && spreadOf(kept) <= STEADY;
const TIER = 'bench';
/** The series every uncached row reads, and the one the imported years are written into. */
const SYMBOL = 'NO1';
const DAY_MS = 86_400_000;
/** `YYYY-MM-DD` of the UTC day `days` after today's. */
const dayFromToday = (days: number) => new Date(Date.now() + days * DAY_MS).toISOString().slice(0, 10);
/** `YYYY-MM-DD` `days` after `date`. */
const addDays = (date: string, days: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

/**
 * Mixed traffic: the URLs a real client population asks for, all kept in the answer cache once
 * asked: one series, the full answer, a past date of every series, a range of three days and the
 * cheapest three hours of two days (fixed dates: an answer relative to now is built every time).
 * The dates lie well inside the development data set (90 days back).
 */
const MIX_URLS = [
  `/api/v1/prices/today?symbols=${SYMBOL}`,
  '/api/v1/prices/today',
  `/api/v1/prices/${dayFromToday(-10)}`,
  `/api/v1/prices?symbols=${SYMBOL}&from=${dayFromToday(-6)}&to=${dayFromToday(-4)}`,
  `/api/v1/prices/cheapest?symbols=${SYMBOL}&duration=PT3H&from=${dayFromToday(-3)}&to=${dayFromToday(-2)}`,
];
/** Keep-alive connections the mixed traffic is spread over (BENCH_MIX_CONNECTIONS, 16). */
const MIX_CONNECTIONS = Number(process.env.BENCH_MIX_CONNECTIONS ?? 16);
/** Keys it is sent with, each connection holding one as a client does (BENCH_MIX_KEYS, 8). */
const MIX_KEYS = Number(process.env.BENCH_MIX_KEYS ?? 8);

/**
 * Uncached rows are much dearer per request and do the same work each time (a read of SQLite and
 * an answer built), so fewer requests make a count; BENCH_UNCACHED_SCALE (1) scales warm-up and
 * count alike, BENCH_UNCACHED_MAX_COUNTS (6) bounds the counts. Each request names days no request
 * before it read, so neither the answer cache nor the read cache holds them.
 */
const UNCACHED_SCALE = Number(process.env.BENCH_UNCACHED_SCALE ?? 1);
const UNCACHED_MAX_COUNTS = Number(process.env.BENCH_UNCACHED_MAX_COUNTS ?? 6);
/** The uncached rows stay out of the development data's days (90 back): they end this far back. */
const UNCACHED_END_DAYS_BACK = 120;

interface CachedPath {
  readonly kind: 'cached';
  readonly name: 'one series' | 'full answer' | 'full, Brotli';
  readonly path: string;
  readonly coding: 'br' | undefined;
}
interface MixedPath {
  readonly kind: 'mixed';
  readonly name: 'mixed traffic';
}
interface UncachedPath {
  readonly kind: 'uncached';
  readonly name: 'first read of a day' | '31-day range' | 'cheapest over 3 days';
  /** Days each request reads, all new. */
  readonly days: number;
  /** The URL of the request whose days begin at `first`. */
  readonly url: (first: string) => string;
  readonly warmup: number;
  readonly requests: number;
  /** At most this many times a cached read of one series, counted in the same process. */
  readonly goal: number;
}
type PathSpec = CachedPath | MixedPath | UncachedPath;

const ONE_SERIES: CachedPath = {
  kind: 'cached',
  name: 'one series',
  path: `/api/v1/prices/today?symbols=${SYMBOL}`,
  coding: undefined,
};
const scaled = (n: number) => Math.max(1, Math.round(n * UNCACHED_SCALE));
const ALL_PATHS: readonly PathSpec[] = [
  ONE_SERIES,
  { kind: 'cached', name: 'full answer', path: '/api/v1/prices/today', coding: undefined },
  { kind: 'cached', name: 'full, Brotli', path: '/api/v1/prices/today', coding: 'br' },
  { kind: 'mixed', name: 'mixed traffic' },
  {
    kind: 'uncached',
    name: 'first read of a day',
    days: 1,
    url: (first) => `/api/v1/prices/${first}?symbols=${SYMBOL}`,
    warmup: scaled(200),
    requests: scaled(100),
    goal: 10,
  },
  {
    kind: 'uncached',
    name: '31-day range',
    days: 31,
    url: (first) => `/api/v1/prices?symbols=${SYMBOL}&from=${first}&to=${addDays(first, 30)}`,
    warmup: scaled(20),
    requests: scaled(10),
    goal: 150,
  },
  {
    kind: 'uncached',
    name: 'cheapest over 3 days',
    days: 3,
    url: (first) =>
      `/api/v1/prices/cheapest?symbols=${SYMBOL}&duration=PT3H&from=${first}&to=${addDays(first, 2)}`,
    warmup: scaled(60),
    requests: scaled(30),
    goal: 40,
  },
];
const ALL_PROTOCOLS = ['https', 'http'] as const;
type Protocol = (typeof ALL_PROTOCOLS)[number];
/** `switch off`: Pricepoint with PRICEPOINT_FAST_PATH=false, the plain implementation. */
const ALL_SETUPS = ['raw', 'fastify', 'pricepoint', 'switch off'] as const;
type SetupName = (typeof ALL_SETUPS)[number];

/** The entries of `all` named in the comma-separated `setting`, or all of them when it is unset. */
function chosen<T>(all: readonly T[], setting: string | undefined, name: (t: T) => string): T[] {
  if (setting === undefined || setting === '') return [...all];
  const known = new Set(all.map(name));
  const pieces = setting.split(',').map((s) => s.trim());
  const wanted: string[] = [];
  // A name may hold a comma itself (`full, Brotli`): two pieces that join into a name are one entry.
  for (let i = 0; i < pieces.length; i++) {
    const joined = `${pieces[i]}, ${pieces[i + 1]}`;
    if (known.has(joined)) {
      wanted.push(joined);
      i++;
    } else wanted.push(pieces[i] ?? '');
  }
  const found = all.filter((t) => wanted.includes(name(t)));
  if (found.length !== wanted.length) throw new Error(`unknown entry in ${setting}`);
  return found;
}
const PATHS = chosen(ALL_PATHS, process.env.BENCH_PATHS, (p) => p.name);
const PROTOCOLS = chosen(ALL_PROTOCOLS, process.env.BENCH_PROTOCOLS, (p) => p);
const SETUPS = chosen(ALL_SETUPS, process.env.BENCH_SETUPS, (s) => s);
const PARTIAL =
  PATHS.length < ALL_PATHS.length ||
  PROTOCOLS.length < ALL_PROTOCOLS.length ||
  SETUPS.length < ALL_SETUPS.length;
const UNCACHED = PATHS.filter((p): p is UncachedPath => p.kind === 'uncached');

/**
 * The paths each setup counts. Fastify serves only `/prices/today` (bench/setups/fastify-minimal.mjs)
 * and raw only the bytes it was given, so the uncached rows are Pricepoint's alone; they are read
 * against the cached one series of the same process, counted first even when not asked for.
 */
function pathsOf(setup: SetupName): PathSpec[] {
  switch (setup) {
    case 'fastify':
      return PATHS.filter((p) => p.kind === 'cached');
    case 'raw':
    case 'switch off':
      return PATHS.filter((p) => p.kind !== 'uncached');
    case 'pricepoint':
      return UNCACHED.length > 0 && !PATHS.includes(ONE_SERIES) ? [ONE_SERIES, ...PATHS] : PATHS;
  }
}

/** Goals of the cached paths, as ratios of Pricepoint's instructions per request to raw's on the same bytes. */
const GOALS: Record<Protocol, Record<CachedPath['name'] | MixedPath['name'], number>> = {
  https: { 'one series': 1.1, 'full answer': 1.05, 'full, Brotli': 1.25, 'mixed traffic': 1.2 },
  http: { 'one series': 1.25, 'full answer': 1.25, 'full, Brotli': 1.25, 'mixed traffic': 1.2 },
};

interface Answer {
  status: number;
  headers: string[];
  body: Buffer;
}

/** A client of one keep-alive connection: requests go one at a time, as in the counted runs. */
function client(protocol: Protocol, port: number, ca: string) {
  const agent =
    protocol === 'https'
      ? new HttpsAgent({ keepAlive: true, maxSockets: 1, ca, servername: 'localhost' })
      : new HttpAgent({ keepAlive: true, maxSockets: 1 });
  const request = protocol === 'https' ? httpsRequest : httpRequest;
  const once = (path: string, headers: Record<string, string>) =>
    new Promise<Answer>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
        // The agent opens a new connection by itself for one the server closed while it sat free.
        if (!req.reusedSocket) opened++;
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.rawHeaders, body: Buffer.concat(chunks) }),
        );
      });
      req.once('error', (error: NodeJS.ErrnoException) =>
        reject(Object.assign(error, { reused: req.reusedSocket })),
      );
      req.end();
    });
  /**
   * A kept-alive connection the server closed after its keep-alive deadline (5 s) as the request
   * left is sent again on a new one, as HTTP clients do for idempotent requests. Under callgrind a
   * connection of the mixed traffic can sit that long while the others are served.
   */
  const send = (path: string, headers: Record<string, string>) =>
    once(path, headers).catch((error: NodeJS.ErrnoException & { reused?: boolean }) => {
      if (!error.reused || (error.code !== 'ECONNRESET' && error.code !== 'EPIPE')) throw error;
      resent++;
      return once(path, headers);
    });
  return { send, close: () => agent.destroy() };
}
/** Requests that went on a new connection (`client`): sent again after a reset, or on one the agent opened. */
let resent = 0;
let opened = 0;
type Client = ReturnType<typeof client>;

interface Count {
  /** Every count made, in order. */
  runs: number[];
  /** The last `COUNTS` of them, which the table goes by (`settled` or not). */
  kept: number[];
}

/** The fields Node writes itself, which the setups do not copy from Pricepoint's answer. */
const NODE_OWN_FIELDS = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);
/** The names of an answer's header fields but Node's own, sorted: what every setup must send alike. */
const fieldNames = (rawHeaders: string[]) =>
  rawHeaders
    .filter((_, i) => i % 2 === 0)
    .map((name) => name.toLowerCase())
    .filter((name) => !NODE_OWN_FIELDS.has(name))
    .sort()
    .join(', ');

/** Where the setups look up an answer in BENCH_BODIES (bench/setups/raw-https.mjs). */
const bodyKey = (path: string, coding?: string) => (coding ? `${path} ${coding}` : path);

/** Header fields (name, value, ...) without Strict-Transport-Security. */
function withoutHsts(headers: string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i] ?? '';
    if (name.toLowerCase() !== 'strict-transport-security') kept.push(name, headers[i + 1] ?? '');
  }
  return kept;
}

/** One request of a path: on which of the setup's connections, to which URL, with which headers. */
interface Sent {
  conn: number;
  path: string;
  headers: Record<string, string>;
}

/** The first day of the `n`th request of an uncached path: each request's days follow the last's. */
type DaysOf = (spec: UncachedPath, n: number) => string;

/** The `n`th request of `spec`, counted from the setup's first request of it. */
function requestOf(spec: PathSpec, n: number, keys: readonly string[], daysOf: DaysOf): Sent {
  const key = keys[0] ?? '';
  switch (spec.kind) {
    case 'cached':
      return {
        conn: 0,
        path: spec.path,
        headers: { 'x-api-key': key, ...(spec.coding && { 'accept-encoding': spec.coding }) },
      };
    case 'mixed': {
      // Each connection is one client with one key and asks for every URL in turn, each from its
      // own place in the list, so that consecutive requests differ in connection, key and URL.
      const conn = n % MIX_CONNECTIONS;
      const round = Math.floor(n / MIX_CONNECTIONS);
      return {
        conn,
        path: MIX_URLS[(round + conn) % MIX_URLS.length] ?? '',
        headers: { 'x-api-key': keys[conn % keys.length] ?? key },
      };
    }
    case 'uncached':
      return { conn: 0, path: spec.url(daysOf(spec, n)), headers: { 'x-api-key': key } };
  }
}

/** Requests of an uncached path at most: the first, its warm-up, and every count it may make. */
const mostRequests = (spec: UncachedPath) => 1 + spec.warmup + UNCACHED_MAX_COUNTS * spec.requests;

/**
 * Where each uncached path's days lie: from `UNCACHED_END_DAYS_BACK` backwards, a block of days per
 * path and protocol (each protocol's server reads them anew), never two requests on one day. The
 * first day of all of them, for the import, and the first day of a path's `n`th request.
 */
function uncachedDays(): { first: string; last: string; daysOf: (protocol: Protocol) => DaysOf } {
  const last = dayFromToday(-UNCACHED_END_DAYS_BACK);
  const starts = new Map<string, string>();
  let end = last;
  for (const protocol of PROTOCOLS) {
    for (const spec of UNCACHED) {
      const first = addDays(end, 1 - mostRequests(spec) * spec.days);
      starts.set(`${protocol} ${spec.name}`, first);
      end = addDays(first, -1);
    }
  }
  return {
    first: addDays(end, 1),
    last,
    daysOf: (protocol) => (spec, n) => {
      if (n >= mostRequests(spec)) throw new Error(`${spec.name}: more requests than days imported`);
      return addDays(starts.get(`${protocol} ${spec.name}`) ?? '', n * spec.days);
    },
  };
}

/** Writes quarter-hour prices of `SYMBOL` from `first` to `last` (UTC days) as the CSV `pricepoint import` reads. */
async function writeYears(file: string, first: string, last: string): Promise<number> {
  const out = createWriteStream(file);
  const write = (text: string) =>
    out.write(text) ? Promise.resolve() : new Promise<void>((done) => out.once('drain', () => done()));
  await write('symbol,start,price\n');
  const end = Date.parse(`${last}T00:00:00Z`) + DAY_MS;
  let points = 0;
  let chunk = '';
  for (let t = Date.parse(`${first}T00:00:00Z`); t < end; t += 900_000) {
    // Two decimals that vary over the day and now and then go below zero, as day-ahead prices do.
    const cents = (((t / 900_000) * 7919) % 20000) - 2000;
    chunk += `${SYMBOL},${new Date(t).toISOString().slice(0, 19)}Z,${(cents / 100).toFixed(2)}\n`;
    points++;
    if (chunk.length > 1 << 20) {
      await write(chunk);
      chunk = '';
    }
  }
  await write(chunk);
  await new Promise<void>((done, fail) => out.end((error?: Error | null) => (error ? fail(error) : done())));
  return points;
}

/** What each path's first answers must be alike in: the header field names Pricepoint sent for each URL. */
type Names = ReadonlyMap<string, string>;

/**
 * Checks the first answer of each URL of a path: 200, and (but for the uncached paths, which only
 * Pricepoint serves) the field names Pricepoint sent. Raw and Fastify must send the same, or the
 * counts compare unlike work; with the switch off a difference is reported, not fatal, since that
 * is what the switch's parity test is for.
 */
function checkFirst(
  setup: SetupName,
  protocol: Protocol,
  spec: PathSpec,
  sent: Sent,
  answer: Answer,
  names: Names,
) {
  if (answer.status !== 200) {
    throw new Error(
      `${setup} ${protocol} ${sent.path}: ${answer.status} ${answer.body.toString().slice(0, 300)}`,
    );
  }
  if (spec.kind === 'uncached') {
    if (!answer.body.includes('"price":'))
      throw new Error(`${sent.path} answered no prices: is the data imported?`);
    return;
  }
  const expected = names.get(bodyKey(sent.path, sent.headers['accept-encoding']));
  const got = fieldNames(answer.headers);
  if (got === expected) return;
  const message = `${setup} ${protocol} ${sent.path} sends the fields ${got}, Pricepoint ${expected}`;
  if (setup !== 'switch off') throw new Error(message);
  console.error(`warning: ${message}`);
}

/** Starts `setup` under callgrind and counts each of its paths until `COUNTS` counts agree (`COUNTS` above). */
async function countSetup(
  setup: SetupName,
  protocol: Protocol,
  env: NodeJS.ProcessEnv,
  args: string[],
  from: 'stdout' | 'stderr',
  dir: string,
  ca: string,
  keys: readonly string[],
  names: Names,
  daysOf: DaysOf,
): Promise<Map<string, Count>> {
  const under = [
    'valgrind',
    '--tool=callgrind',
    '--instr-atstart=no',
    `--callgrind-out-file=${dir}/cg.%p.out`,
  ];
  const { child, port } = await startChild(args, env, from, under, UNDER_LOAD);
  const started = Date.now();
  const pid = child.pid ?? 0;
  const counts = new Map<string, Count>();
  const clients: Client[] = [];
  const on = (conn: number) => {
    clients[conn] ??= client(protocol, port, ca);
    return clients[conn];
  };
  const send = async (sent: Sent) => {
    const answer = await on(sent.conn).send(sent.path, sent.headers);
    if (answer.status !== 200) throw new Error(`${setup} ${protocol} ${sent.path}: ${answer.status}`);
    return answer;
  };
  try {
    for (const spec of pathsOf(setup)) {
      let n = 0;
      const next = () => requestOf(spec, n++, keys, daysOf);
      // The first answer of every URL the path asks for: a mix asks for each URL on some connection.
      const firsts = spec.kind === 'mixed' ? MIX_CONNECTIONS * MIX_URLS.length : 1;
      const seen = new Set<string>();
      for (let i = 0; i < firsts; i++) {
        const sent = next();
        const answer = await on(sent.conn).send(sent.path, sent.headers);
        if (!seen.has(sent.path)) checkFirst(setup, protocol, spec, sent, answer, names);
        seen.add(sent.path);
      }
      const uncached = spec.kind === 'uncached';
      // An uncached path must not spend its days waiting for the clock: the cached one series does.
      while (uncached && Date.now() - started < WARMUP_MS) {
        await send(requestOf(ONE_SERIES, 0, keys, daysOf));
      }
      const warmup = uncached ? spec.warmup : WARMUP;
      for (let i = 0; i < warmup || (!uncached && Date.now() - started < WARMUP_MS); i++) await send(next());
      const requests = uncached ? spec.requests : REQUESTS;
      const runs: number[] = [];
      let kept: number[] = [];
      // An uncounted request on every connection of the path, on what is already cached.
      const touches: Sent[] =
        spec.kind === 'mixed'
          ? Array.from({ length: MIX_CONNECTIONS }, (_, conn) => ({
              conn,
              path: MIX_URLS[conn % MIX_URLS.length] ?? '',
              headers: { 'x-api-key': keys[conn % keys.length] ?? '' },
            }))
          : [requestOf(spec.kind === 'uncached' ? ONE_SERIES : spec, 0, keys, daysOf)];
      /**
       * `callgrind_control` while counting is off, with every connection used every half second
       * meanwhile: on a loaded machine a call takes seconds (valgrind reads it when the server
       * wakes), and a connection left idle past the server's keep-alive deadline (5 s) would be
       * opened again in the next count, its handshake counted.
       */
      const controlled = async (...args: string[]) => {
        let done = false;
        const work = controlAsync(pid, ...args).finally(() => {
          done = true;
        });
        while (!done) {
          for (const touch of touches) await send(touch);
          await Promise.race([work, new Promise((resolve) => setTimeout(resolve, 500))]).catch(() => {});
        }
        await work;
      };
      for (let made = 0; made < (uncached ? UNCACHED_MAX_COUNTS : MAX_COUNTS); made++) {
        const dumpsBefore = readdirSync(dir).filter((f) => f.startsWith(`cg.${pid}.out.`)).length;
        await controlled('--zero');
        for (const touch of touches) await send(touch);
        const newBefore = resent + opened;
        control(pid, '--instr=on');
        for (let i = 0; i < requests; i++) await send(next());
        control(pid, '--instr=off');
        await controlled('--dump');
        const total = newestTotal(dir, pid, dumpsBefore) / requests;
        // A new connection's handshake is no part of a kept-alive request: such a count is made again.
        if (resent + opened > newBefore) {
          console.error(
            `${setup} ${protocol} ${spec.name}: ${Math.round(total)} left out, a request went on a new connection`,
          );
          continue;
        }
        runs.push(total);
        kept = runs.slice(-COUNTS);
        if (settled(kept)) break;
      }
      counts.set(spec.name, { runs, kept });
      console.error(`${setup} ${protocol} ${spec.name}: ${runs.map((r) => Math.round(r)).join(', ')}`);
    }
  } finally {
    for (const c of clients) c?.close();
    await stop(child);
  }
  return counts;
}

/** Creates a key in the bench tier with the CLI; resolves the key. */
async function createKey(settings: Record<string, string>, name: string): Promise<string> {
  const out = await cli(['keys', 'create', '--tier', TIER, '--name', name, '--json'], settings);
  return (JSON.parse(out) as { key: string }).key;
}

async function main(): Promise<void> {
  requireValgrind();
  const dir = await mkdtemp(join(tmpdir(), 'pricepoint-instructions-'));
  // BENCH_KEEP=1 keeps the callgrind dumps, to read where the instructions go (bench/README.md).
  if (process.env.BENCH_KEEP === '1') console.error(`callgrind dumps kept in ${dir}`);
  else cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const config = join(dir, 'config.json');
  const huge = [{ name: 'minute', limit: 1_000_000_000, windowSeconds: 60 }];
  await writeFile(config, JSON.stringify({ tiers: { [TIER]: { limits: huge } } }));
  const settings = {
    PRICEPOINT_CONFIG: config,
    PRICEPOINT_PORT: '0',
    PRICEPOINT_HOST: '127.0.0.1',
    PRICEPOINT_DATA_DIR: join(dir, 'data'),
  };

  // A first start, not counted: the data, the certificate, the keys, and the bytes raw and Fastify send.
  const first = await startChild([CLI, 'serve', '--dev-data', '--json'], envWith(settings), 'stderr');
  const keys = [await createKey(settings, 'bench')];
  if (PATHS.some((p) => p.kind === 'mixed')) {
    while (keys.length < MIX_KEYS) keys.push(await createKey(settings, `bench ${keys.length + 1}`));
  }
  const key = keys[0] ?? '';
  const certFile = join(dir, 'data', 'tls', 'localhost-cert.pem');
  const ca = readFileSync(certFile, 'utf8');
  const bodies: Record<string, { contentType: string; base64: string; headers: string[] }> = {};
  const { send, close } = client('https', first.port, ca);
  // Every path some setup counts: Pricepoint's one series is counted for the uncached rows too.
  const counted = [...new Set(SETUPS.flatMap(pathsOf))];
  const served = [
    ...counted.flatMap((p) => (p.kind === 'cached' ? [{ path: p.path, coding: p.coding }] : [])),
    ...(counted.some((p) => p.kind === 'mixed') ? MIX_URLS.map((path) => ({ path, coding: undefined })) : []),
  ];
  for (const { path, coding } of served) {
    const answer = await send(path, { 'x-api-key': key, ...(coding && { 'accept-encoding': coding }) });
    if (answer.status !== 200) throw new Error(`Pricepoint answered ${answer.status} to ${path}`);
    const headers: string[] = [];
    for (let i = 0; i < answer.headers.length; i += 2) {
      const name = answer.headers[i] ?? '';
      if (!NODE_OWN_FIELDS.has(name.toLowerCase())) headers.push(name, answer.headers[i + 1] ?? '');
    }
    const contentType = headers[headers.findIndex((h) => h.toLowerCase() === 'content-type') + 1] ?? '';
    bodies[bodyKey(path, coding)] = { contentType, base64: answer.body.toString('base64'), headers };
  }
  close();
  await stop(first.child);

  // Years of one series for the uncached rows, imported while no server runs.
  const days = uncachedDays();
  if (UNCACHED.length > 0) {
    const file = join(dir, 'years.csv');
    const points = await writeYears(file, days.first, days.last);
    await cli(['import', file, '--json'], settings);
    console.error(`imported ${points} points of ${SYMBOL}, ${days.first} to ${days.last}`);
  }

  // Over plain HTTP Pricepoint leaves out Strict-Transport-Security, so raw and Fastify do too.
  const bodiesOver: Record<Protocol, typeof bodies> = {
    https: bodies,
    http: Object.fromEntries(
      Object.entries(bodies).map(([url, answer]) => [
        url,
        { ...answer, headers: withoutHsts(answer.headers) },
      ]),
    ),
  };

  const results = new Map<string, Map<string, Count>>();
  for (const protocol of PROTOCOLS) {
    const plain = protocol === 'http' ? '1' : '0';
    const bodiesFile = join(dir, `bodies-${protocol}.json`);
    await writeFile(bodiesFile, JSON.stringify(bodiesOver[protocol]));
    const names = new Map(
      Object.entries(bodiesOver[protocol]).map(([url, answer]) => [url, fieldNames(answer.headers)]),
    );
    const setupEnv = envWith({
      BENCH_CERT: certFile,
      BENCH_KEY: join(dir, 'data', 'tls', 'localhost-key.pem'),
      BENCH_BODIES: bodiesFile,
      BENCH_API_KEY: key,
      BENCH_PLAIN: plain,
    });
    const pricepointEnv = { ...settings, ...(plain === '1' && { PRICEPOINT_INSECURE_HTTP: 'true' }) };
    const starts: Record<SetupName, [NodeJS.ProcessEnv, string[], 'stdout' | 'stderr']> = {
      raw: [setupEnv, [join(REPO, 'bench', 'setups', 'raw-https.mjs')], 'stdout'],
      fastify: [setupEnv, [join(REPO, 'bench', 'setups', 'fastify-minimal.mjs')], 'stdout'],
      pricepoint: [envWith(pricepointEnv), [CLI, 'serve', '--json'], 'stderr'],
      // The one speed switch off: every speed-only piece is off with it (docs/settings.md).
      'switch off': [
        envWith({ ...pricepointEnv, PRICEPOINT_FAST_PATH: 'false' }),
        [CLI, 'serve', '--json'],
        'stderr',
      ],
    };
    for (const setup of SETUPS) {
      if (pathsOf(setup).length === 0) continue;
      const [env, args, from] = starts[setup];
      results.set(
        `${setup} ${protocol}`,
        await countSetup(setup, protocol, env, args, from, dir, ca, keys, names, days.daysOf(protocol)),
      );
    }
  }

  const table = report(results);
  console.log(table);
  if (!PARTIAL) {
    writeFileSync(
      join(REPO, 'bench', 'results-instructions.md'),
      `# npm run bench:instructions\n\n${table}\n`,
    );
  }
}

/** A count as the table shows it, `-` where it was not made. */
const shown = (n: number) => (Number.isNaN(n) ? '-' : n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : thousands(n));
const ratioOf = (n: number) => (Number.isNaN(n) ? '-' : n.toFixed(2));

/** The tables: cached paths and mixed traffic against raw and Fastify, then the uncached rows. */
function report(results: Map<string, Map<string, Count>>): string {
  const none: Count = { runs: [Number.NaN], kept: [Number.NaN] };
  const of = (setup: SetupName, protocol: Protocol, name: string): Count =>
    results.get(`${setup} ${protocol}`)?.get(name) ?? none;
  const counted = (count: Count) => count !== none;
  const spreadText = (count: Count) =>
    counted(count)
      ? `${(spreadOf(count.kept) * 100).toFixed(1)}% (${count.runs.length})${settled(count.kept) ? '' : ' unsteady'}`
      : '-';
  const steady = (...counts: Count[]) =>
    counts.every((c) => !counted(c) || settled(c.kept)) ? '' : ' (unsteady)';
  const verdict = (ratio: number, met: boolean) =>
    Number.isNaN(ratio) ? 'not counted' : met ? 'met' : 'not met';
  const main = PATHS.some((p) => p.kind !== 'uncached');
  const lines = [
    `Instructions per request (callgrind, every thread): ${REQUESTS} keep-alive requests after ${WARMUP} uncounted, counted again until ${COUNTS} counts in a row agree within ${STEADY * 100}% (at most ${MAX_COUNTS} counts), the median of those ${COUNTS} taken. Spread = (highest - lowest) / median of the ${COUNTS}, with the counts made in brackets; "unsteady" where they never agreed. Switch off = Pricepoint with PRICEPOINT_FAST_PATH=false. Mixed traffic = ${MIX_URLS.length} URLs (${MIX_URLS.join(', ')}) with ${MIX_KEYS} keys over ${MIX_CONNECTIONS} keep-alive connections, one request at a time, interleaved; raw sends Pricepoint's bytes for each URL, Fastify serves only \`/prices/today\`. Node ${process.version}.`,
    '',
    '| protocol | path | raw | Fastify + rate-limit | Pricepoint | Pricepoint / raw | goal | Fastify / raw | switch off | switch off / raw | switch off: below Fastify | spread (raw, Fastify, Pricepoint, switch off) |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |',
  ];
  if (!main) lines.length = 1;
  for (const protocol of PROTOCOLS) {
    for (const spec of PATHS) {
      if (spec.kind === 'uncached') continue;
      const counts = ALL_SETUPS.map((s) => of(s, protocol, spec.name));
      const [raw, fastify, pricepoint, off] = counts.map((c) => median(c.kept)) as [
        number,
        number,
        number,
        number,
      ];
      const ratio = pricepoint / raw;
      const goal = GOALS[protocol][spec.name];
      const below = spec.kind === 'mixed' ? 'no Fastify row' : verdict(off / fastify, off < fastify);
      lines.push(
        `| ${protocol.toUpperCase()} | ${spec.name} | ${shown(raw)} | ${shown(fastify)} | ${shown(pricepoint)} | ${ratioOf(ratio)} | ≤ ${goal.toFixed(2)} ${verdict(ratio, ratio <= goal)}${steady(counts[0] as Count, counts[2] as Count)} | ${ratioOf(fastify / raw)} | ${shown(off)} | ${ratioOf(off / raw)} | ${below}${steady(counts[1] as Count, counts[3] as Count)} | ${counts.map(spreadText).join(', ')} |`,
      );
    }
  }
  if (UNCACHED.length > 0) {
    lines.push(
      '',
      `Uncached reads, Pricepoint only: every request reads days of ${SYMBOL} that no request before it read (imported years, so neither the answer cache nor the read cache holds them), warm-up and count per row as shown, counted until ${COUNTS} counts agree within ${STEADY * 100}% (at most ${UNCACHED_MAX_COUNTS}). Against the cached read of one series (\`/prices/today?symbols=${SYMBOL}\`) counted in the same process.`,
      '',
      '| protocol | path | requests (warm-up + counted) | Pricepoint | cached one series | uncached / cached | goal | spread |',
      '| --- | --- | --- | ---: | ---: | ---: | --- | --- |',
    );
    for (const protocol of PROTOCOLS) {
      const cached = of('pricepoint', protocol, ONE_SERIES.name);
      for (const spec of UNCACHED) {
        const count = of('pricepoint', protocol, spec.name);
        const ratio = median(count.kept) / median(cached.kept);
        lines.push(
          `| ${protocol.toUpperCase()} | ${spec.name} | ${spec.warmup} + ${spec.requests} | ${shown(median(count.kept))} | ${shown(median(cached.kept))} | ${ratioOf(ratio)} | ≤ ${spec.goal} ${verdict(ratio, ratio <= spec.goal)}${steady(count, cached)} | ${spreadText(count)} |`,
        );
      }
    }
  }
  return lines.join('\n');
}

await runBench(main);
