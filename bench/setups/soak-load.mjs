/**
 * The load generator of bench/soak.ts, in a process of its own: HTTPS requests through undici to
 * 127.0.0.1, every answer recorded here and only the aggregates sent back. Takes the path of a JSON
 * file (the `LoadSpec` of bench/soak.ts) and prints one JSON line with the figures.
 *
 * - `capacity`: `connections` requests at a time, each sent as soon as the one before is answered
 *   (a closed loop), drawn at random from the weighted mix, for `seconds`: what the server answers
 *   per second.
 * - `soak`: an open loop at fixed rates: the mix at `mixRate` per second, and each limited key at
 *   its own rate, whatever the answers take. Requests wait in undici's queue when all connections
 *   are busy; past `MAX_IN_FLIGHT` a due request is not sent and counted as `behind`.
 *
 * Answers of the limited keys are placed in the server's windows from the server's own headers (see
 * `windowsOf`), never from this process' clock. Invalid keys are sent from other loopback addresses
 * (127.0.0.2, ...), because the server closes an address to every key once it has had 20 failed
 * logins in a minute; the target is always 127.0.0.1.
 */
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const ca = readFileSync(spec.caFile, 'utf8');
/** Share of keyed requests sent with `If-None-Match` (when an ETag of the URL is known). */
const CONDITIONAL_SHARE = 0.15;
/** Shares of requests asking for Brotli and for gzip. */
const BROTLI_SHARE = 0.25;
const GZIP_SHARE = 0.1;
/** Share of keyed requests that carry the key as `Authorization: Bearer` instead of `x-api-key`. */
const BEARER_SHARE = 0.2;
/** Eight per connection: more would only queue in undici and add seconds of latency. */
const MAX_IN_FLIGHT = 512;
const SAMPLES = 10;

const poolOptions = {
  connect: { ca, servername: 'localhost' },
  headersTimeout: 10_000,
  bodyTimeout: 10_000,
  pipelining: 1,
};
const main = new Pool(spec.origin, { ...poolOptions, connections: spec.connections });
const invalidPools = spec.invalidAddresses.map(
  (localAddress) => new Pool(spec.origin, { ...poolOptions, connections: 4, localAddress }),
);
let nextInvalidPool = 0;

const INVALID = new Set([
  'malformed',
  'bad-checksum',
  'unknown',
  'revoked',
  'missing',
  'query',
  'conflicting',
]);
const groupOf = (auth) => (auth === 'none' ? 'unkeyed' : INVALID.has(auth) ? 'invalid' : auth);

// --- What is recorded --------------------------------------------------------------------------

const statuses = {};
const byGroup = {};
/** `template status` -> count, for answers outside a template's expected statuses. */
const unexpected = {};
const serverErrors = [];
const errorSamples = [];
let errors = 0;
let sent = 0;
let answered = 0;
let behind = 0;
let bytes = 0;
let latencies = new Float64Array(1 << 16);
/** Per invalid source address: 401s and 429s (`too_many_auth_failures`). */
const authFailures = {};
/** Last ETag seen per (tier, path, encoding), for conditional requests. */
const etags = new Map();

function count(table, key) {
  table[key] = (table[key] ?? 0) + 1;
}

function noteLatency(ms) {
  if (answered >= latencies.length) {
    const grown = new Float64Array(latencies.length * 2);
    grown.set(latencies);
    latencies = grown;
  }
  latencies[answered] = ms;
}

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

// --- Requests -----------------------------------------------------------------------------------

function keyHeaders(key) {
  return Math.random() < BEARER_SHARE ? { authorization: `Bearer ${key}` } : { 'x-api-key': key };
}

/** The key headers of an auth kind of the mix (see `Auth` in bench/soak.ts). */
function authHeaders(auth) {
  const k = spec.keys;
  switch (auth) {
    case 'open':
      return keyHeaders(k.open);
    case 'none':
    case 'missing':
    case 'query':
      return {};
    case 'conflicting':
      return { 'x-api-key': k.open, authorization: `Bearer ${k.unknown}` };
    default:
      return { 'x-api-key': k[auth] };
  }
}

/** Adds `Accept-Encoding` and, for a keyed request whose ETag is known, `If-None-Match`. */
function variant(headers, tier, path, keyed) {
  const roll = Math.random();
  const encoding = roll < BROTLI_SHARE ? 'br' : roll < BROTLI_SHARE + GZIP_SHARE ? 'gzip' : 'identity';
  if (encoding !== 'identity') headers['accept-encoding'] = encoding;
  const cacheKey = `${tier} ${path} ${encoding}`;
  if (keyed && Math.random() < CONDITIONAL_SHARE) {
    const etag = etags.get(cacheKey);
    if (etag !== undefined) headers['if-none-match'] = etag;
  }
  return cacheKey;
}

/**
 * Sends one request and reads its whole answer; resolves when it is answered or failed. `onAnswer`
 * gets the status, headers and (only when `wantBody`) the body text.
 */
async function send(pool, path, headers, label, onAnswer, wantBody) {
  sent++;
  const started = performance.now();
  try {
    const res = await pool.request({ method: 'GET', path, headers });
    let text = '';
    if (wantBody(res.statusCode)) {
      text = await res.body.text();
      bytes += Buffer.byteLength(text);
    } else {
      for await (const chunk of res.body) bytes += chunk.length;
    }
    noteLatency(performance.now() - started);
    answered++;
    count(statuses, res.statusCode);
    if (res.statusCode >= 500 && serverErrors.length < SAMPLES)
      serverErrors.push({ label, path, status: res.statusCode, body: text.slice(0, 300) });
    onAnswer(res.statusCode, res.headers, text);
  } catch (error) {
    errors++;
    if (errorSamples.length < SAMPLES)
      errorSamples.push(`${label} ${path}: ${error.code ?? ''} ${error.message}`);
  }
}

// --- The mix --------------------------------------------------------------------------------------

const cumulative = [];
let totalWeight = 0;
for (const template of spec.mix) {
  totalWeight += template.weight;
  cumulative.push(totalWeight);
}

function pick() {
  const roll = Math.random() * totalWeight;
  let i = 0;
  while (cumulative[i] <= roll) i++;
  return spec.mix[i];
}

function sendFromMix() {
  const template = pick();
  const group = groupOf(template.auth);
  const headers = authHeaders(template.auth);
  const keyed = template.auth === 'open';
  const cacheKey = variant(headers, 'open', template.path, keyed);
  let pool = main;
  let address = '127.0.0.1';
  if (group === 'invalid') {
    nextInvalidPool = (nextInvalidPool + 1) % invalidPools.length;
    pool = invalidPools[nextInvalidPool];
    address = spec.invalidAddresses[nextInvalidPool];
  }
  return send(
    pool,
    template.path,
    headers,
    template.name,
    (status, answerHeaders) => {
      byGroup[group] ??= {};
      count(byGroup[group], status);
      const expected = template.expect.includes(status) || (status === 304 && headers['if-none-match']);
      if (!expected) count(unexpected, `${template.name} ${status}`);
      if (status === 200 && typeof answerHeaders.etag === 'string') etags.set(cacheKey, answerHeaders.etag);
      if (group === 'invalid') {
        authFailures[address] ??= {};
        count(authFailures[address], status);
      }
    },
    (status) => status >= 500,
  );
}

// --- Limited keys -------------------------------------------------------------------------------

const streams = spec.limited.map((s) => ({
  ...s,
  statuses: {},
  headerProblems: 0,
  headerSamples: [],
  duplicates: 0,
  /** `limit window` -> { limit, window, accepted, refused, exhausted } */
  windows: new Map(),
  /** `limit window remaining` of every accepted answer, for the duplicate check. */
  seen: new Set(),
}));

function problem(stream, text) {
  stream.headerProblems++;
  if (stream.headerSamples.length < SAMPLES) stream.headerSamples.push(text);
}

/**
 * The server's windows an answer belongs to, from its headers. `RateLimit: "name";r=R;t=T` gives
 * T = ceil((reset - now) / 1000) for the limit `name`, whose end is `X-RateLimit-Reset` (whole
 * epoch seconds, since windows are whole seconds aligned to the epoch). So the server's clock at
 * the decision lay in [reset - T, reset - T + 1) seconds; that span starts on a whole second and
 * holds no other window boundary, so the window of every limit of the tier is
 * floor((reset - T) / windowSeconds). Returns undefined (and records why) when headers disagree.
 */
function windowsOf(stream, headers, status) {
  const match = /^"([^"]+)";r=(\d+);t=(\d+)$/.exec(String(headers.ratelimit ?? ''));
  const reset = Number(headers['x-ratelimit-reset']);
  const binding = match && stream.limits.find((l) => l.name === match[1]);
  if (!match || !binding || !Number.isInteger(reset)) {
    problem(stream, `${status}: ratelimit ${headers.ratelimit}, reset ${headers['x-ratelimit-reset']}`);
    return undefined;
  }
  const remaining = Number(match[2]);
  const second = reset - Number(match[3]);
  const ends = (Math.floor(second / binding.windowSeconds) + 1) * binding.windowSeconds;
  const policy = stream.limits.map((l) => `"${l.name}";q=${l.limit};w=${l.windowSeconds}`).join(', ');
  if (ends !== reset) problem(stream, `reset ${reset} is not the end of the ${binding.name} window`);
  if (headers['x-ratelimit-remaining'] !== match[2]) problem(stream, 'X-RateLimit-Remaining disagrees');
  if (headers['x-ratelimit-limit'] !== String(binding.limit)) problem(stream, 'X-RateLimit-Limit disagrees');
  if (headers['ratelimit-policy'] !== policy) problem(stream, `policy ${headers['ratelimit-policy']}`);
  if (status === 429 && headers['retry-after'] !== match[3])
    problem(stream, `Retry-After ${headers['retry-after']} with t=${match[3]}`);
  return {
    binding: binding.name,
    remaining,
    windows: stream.limits.map((l) => ({ limit: l.name, window: Math.floor(second / l.windowSeconds) })),
  };
}

function windowEntry(stream, limit, window) {
  const id = `${limit} ${window}`;
  let entry = stream.windows.get(id);
  if (entry === undefined) {
    entry = { limit, window, accepted: 0, refused: 0, exhausted: false };
    stream.windows.set(id, entry);
  }
  return entry;
}

function onLimitedAnswer(stream, template, cacheKey, status, headers, text) {
  count(stream.statuses, status);
  byGroup.limited ??= {};
  count(byGroup.limited, status);
  if (template.counted === false) {
    if (status !== 200) count(unexpected, `${stream.name} ${template.name} ${status}`);
    return;
  }
  const at = windowsOf(stream, headers, status);
  if (at === undefined) return;
  if (status === 200 || status === 304) {
    for (const { limit, window } of at.windows) windowEntry(stream, limit, window).accepted++;
    const window = at.windows.find((w) => w.limit === at.binding).window;
    const seen = `${at.binding} ${window} ${at.remaining}`;
    if (stream.seen.has(seen)) stream.duplicates++;
    stream.seen.add(seen);
    if (status === 200 && typeof headers.etag === 'string') etags.set(cacheKey, headers.etag);
    return;
  }
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = {};
  }
  if (status !== 429 || body.code !== 'rate_limited') {
    count(unexpected, `${stream.name} ${template.name} ${status} ${body.code ?? ''}`.trim());
    return;
  }
  for (const { limit, window } of at.windows) {
    const entry = windowEntry(stream, limit, window);
    entry.refused++;
    if (body['violated-policies']?.includes(limit)) entry.exhausted = true;
  }
}

function sendLimited(stream) {
  const template = spec.limitedPaths[Math.floor(Math.random() * spec.limitedPaths.length)];
  const headers = keyHeaders(stream.key);
  const cacheKey = variant(headers, stream.tier, template.path, true);
  return send(
    main,
    template.path,
    headers,
    stream.name,
    (status, answerHeaders, text) => onLimitedAnswer(stream, template, cacheKey, status, answerHeaders, text),
    (status) => status === 429 || status >= 500,
  );
}

// --- The loops ------------------------------------------------------------------------------------

let inFlight = 0;
function track(promise) {
  inFlight++;
  promise.finally(() => inFlight--);
}

const started = performance.now();
const startedAt = Date.now();

if (spec.mode === 'capacity') {
  const end = started + spec.seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) await sendFromMix();
  };
  await Promise.all(Array.from({ length: spec.connections }, worker));
} else {
  // Each stream sends its k-th request at (k + phase) / rate seconds; phases spread the streams.
  const schedules = [
    { rate: spec.mixRate, phase: 0, issued: 0, send: sendFromMix },
    ...streams.map((stream) => ({
      rate: stream.rate,
      phase: Math.random(),
      issued: 0,
      send: () => sendLimited(stream),
    })),
  ];
  await new Promise((done) => {
    const timer = setInterval(() => {
      const elapsed = (performance.now() - started) / 1000;
      if (elapsed >= spec.seconds) {
        clearInterval(timer);
        done();
        return;
      }
      for (const schedule of schedules) {
        const due = Math.floor(elapsed * schedule.rate + schedule.phase);
        while (schedule.issued < due) {
          schedule.issued++;
          if (inFlight >= MAX_IN_FLIGHT) behind++;
          else track(schedule.send());
        }
      }
    }, 2);
  });
  // Whatever is still in flight is answered or times out (undici's 10 s deadlines).
  while (inFlight > 0) await new Promise((done) => setTimeout(done, 20));
}
const seconds = (performance.now() - started) / 1000;
await Promise.all([main.close(), ...invalidPools.map((p) => p.close())]);

const sorted = latencies.subarray(0, answered).sort();
console.log(
  JSON.stringify({
    startedAt,
    seconds,
    // This process' own CPU time (user and system), to tell whether it held the load back.
    cpuSeconds: ((usage) => (usage.user + usage.system) / 1e6)(process.cpuUsage()),
    maxInFlight: MAX_IN_FLIGHT,
    sent,
    answered,
    behind,
    errors,
    errorSamples,
    requestsPerSecond: answered / seconds,
    bytes,
    latency: {
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      max: sorted[sorted.length - 1] ?? 0,
    },
    statuses,
    byGroup,
    unexpected,
    serverErrors,
    authFailures,
    limited: streams.map((s) => ({
      name: s.name,
      tier: s.tier,
      role: s.role,
      rate: s.rate,
      limits: s.limits,
      statuses: s.statuses,
      headerProblems: s.headerProblems,
      headerSamples: s.headerSamples,
      duplicates: s.duplicates,
      windows: [...s.windows.values()],
    })),
  }),
);
