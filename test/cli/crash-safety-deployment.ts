/**
 * The deployment of a crash-safety test: its processes, what is written at the start, and the checks
 * after each restart.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { closeSync, constants, openSync, readFileSync, type WriteStream } from 'node:fs';
import { after, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { dayIntervals, formatInstant } from '../../src/domain/time/days.js';
import {
  type Answer,
  cleanUp,
  httpsClient,
  operatorKey,
  type ServerProcess,
  type Settings,
  spawnCli,
  startServer,
} from '../helpers/process.js';
import {
  type Engine,
  FIRST_DAY,
  IMPORT_SERIES,
  IMPORT_SYMBOLS,
  importedPrice,
  importedStart,
  KEEP_SERIES,
  type Outcome,
  type Site,
} from './crash-safety-plan.js';

// ---------------------------------------------------------------------------------------------------
// Processes: servers and the CLI import through the helpers (cleanUp kills what is left).

type ImportProcess = ReturnType<typeof spawnCli>;

export const fifos = new Set<string>();

export const spawnImport = (file: string, settings: Settings): ImportProcess =>
  spawnCli(['import', file, '--json'], settings);

/**
 * After the tests of the calling file: lets go of FIFO writers, kills the processes left (`cleanUp`)
 * and runs `more` (the PostgreSQL site's schemas and connections).
 */
export function cleanUpAfterwards(more: readonly (() => Promise<void>)[] = []): void {
  after(async () => {
    // A writer still waiting to open a FIFO that nobody reads (a failed test) is let go by a reader.
    for (const fifo of fifos) {
      try {
        closeSync(openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK));
      } catch {}
    }
    await cleanUp();
    for (const drop of more) await drop();
  });
}

export function write(stream: WriteStream, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) =>
    stream.write(chunk, (error) => (error ? reject(error) : resolve())),
  );
}

/**
 * Writes `chunks` into the FIFO. A write returns once the pipe holds its bytes, so when this resolves
 * the importer has read all but at most a pipe's worth (64 KiB, some 1,700 rows) of them, and written
 * all it read into its transaction but its current batch (4,096 rows).
 */
export async function feed(
  stream: WriteStream,
  chunks: readonly Buffer[],
  importer: ImportProcess,
): Promise<void> {
  const ended = importer.closed.then((output) => {
    throw new Error(`the import ended while being fed (${output.code ?? output.signal}): ${output.stderr}`);
  });
  ended.catch(() => {});
  await Promise.race([
    (async () => {
      for (const chunk of chunks) await write(stream, chunk);
    })(),
    ended,
  ]);
}

/** Bytes the process has read so far (sockets included), where Linux tells. */
export function bytesRead(pid: number | undefined): number | undefined {
  try {
    const match = /^rchar:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return match?.[1] === undefined ? undefined : Number(match[1]);
  } catch {
    return undefined;
  }
}

/**
 * Polls `reached` about every millisecond and kills `child` with SIGKILL the moment it holds; `ended`
 * when the process ended by itself first.
 */
export async function killWhen(
  child: ChildProcess,
  what: string,
  reached: () => Promise<boolean>,
): Promise<'killed' | 'ended'> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) return 'ended';
    if (await reached()) {
      child.kill('SIGKILL');
      return 'killed';
    }
    assert.ok(Date.now() < deadline, `${what} is reached within 60 s`);
    await sleep(1);
  }
}

// ---------------------------------------------------------------------------------------------------
// The deployment: what is written at the start, and how everything is checked after each restart.

interface Api {
  get(path: string, key: string): Promise<Answer>;
  send(method: 'PUT' | 'POST' | 'DELETE', path: string, key: string, body?: string | object): Promise<Answer>;
}

export function apiOf(server: ServerProcess, client: ReturnType<typeof httpsClient>): Api {
  return {
    get: (path, key) => client.get(`${server.url}${path}`, { 'x-api-key': key }),
    send: (method, path, key, body) =>
      body === undefined
        ? client.send(method, `${server.url}${path}`, { 'x-api-key': key })
        : client.send(
            method,
            `${server.url}${path}`,
            { 'x-api-key': key, 'content-type': typeof body === 'string' ? 'text/csv' : 'application/json' },
            typeof body === 'string' ? body : JSON.stringify(body),
          ),
  };
}

export interface Deployment {
  readonly site: Site;
  readonly client: ReturnType<typeof httpsClient>;
  server: ServerProcess;
  api: Api;
  readonly admin: string;
  /** Every key made at the start, with the status `GET /api/v1/usage` gives it (401: revoked). */
  readonly keys: readonly { readonly name: string; readonly key: string; readonly status: number }[];
  /** `GET /api/v1/keys` without the last-used times, which are written in batches, also later. */
  readonly listed: unknown;
  /** The days written at the start, as CSV, exactly as served. */
  readonly prices: string;
  /** How each import so far came out. */
  readonly outcomes: Map<string, Outcome>;
  /** Points of each import. */
  readonly rows: number;
  /** How far the control import grew the database. */
  whole: number | undefined;
}

const PRICES_AT_START = `/api/v1/prices?from=${FIRST_DAY}&to=2024-03-03&symbols=${[...IMPORT_SYMBOLS, 'KEEP'].join(',')}&format=csv`;

function withoutLastUse(text: string): unknown {
  return (JSON.parse(text) as Record<string, unknown>[]).map(({ lastUsedAt: _, ...rest }) => rest);
}

/** `start,price` CSV of a series' local days, with distinct price texts. */
function daysCsv(
  series: { timezone: string; resolution: 'PT15M' | 'PT1H' },
  days: string[],
  salt: number,
): string {
  const { timezone, resolution } = series;
  const starts = days.flatMap((day) =>
    dayIntervals(day, timezone, resolution).map((i) => formatInstant(i.start, timezone)),
  );
  const endings = ['0', '25', '270', '5', '125'];
  return `start,price\n${starts.map((s, n) => `${s},${((n * 37 + salt) % 500) - 100}.${endings[n % endings.length]}`).join('\n')}\n`;
}

async function created(answer: Answer, what: string): Promise<{ id: string; key: string }> {
  assert.equal(answer.status, 201, `${what} is created: ${answer.text}`);
  return JSON.parse(answer.text) as { id: string; key: string };
}

/**
 * A running server with data in place: an operator key from the CLI; through the admin API the
 * series, keys of several tiers and scopes (one with an expiry, one revoked, one rotated with its old
 * key in its grace period) and the first day of every series (three of the one no import touches);
 * and the record of all of it.
 */
export async function deploy(engine: Engine): Promise<Deployment> {
  const site = await engine.site();
  const admin = await operatorKey(site.settings);
  const server = await startServer(['serve'], site.settings);
  const client = httpsClient(site.certFile);
  const api = apiOf(server, client);
  await site.prepare();

  for (const [symbol, body] of [
    ...IMPORT_SYMBOLS.map((s) => [s, IMPORT_SERIES] as const),
    ['KEEP', KEEP_SERIES] as const,
  ]) {
    const answer = await api.send('PUT', `/api/v1/series/${symbol}`, admin, body);
    assert.equal(answer.status, 201, `series ${symbol} is created: ${answer.text}`);
  }
  const key = async (name: string, tier: string, scopes: string[], extra: object = {}) =>
    created(await api.send('POST', '/api/v1/keys', admin, { name, tier, scopes, ...extra }), `key ${name}`);
  const reader = await key('reader', 'free', ['read']);
  const writer = await key('writer', 'pro', ['read', 'write']);
  const expiresAt = new Date(Date.now() + 365 * 86_400_000).toISOString();
  const partner = await key('partner', 'demo', ['read'], { expiresAt });
  const revoked = await key('revoked', 'free', ['read']);
  const revoke = await api.send('DELETE', `/api/v1/keys/${revoked.id}`, admin);
  assert.equal(revoke.status, 200, `the key is revoked: ${revoke.text}`);
  const rotated = await key('rotated', 'pro', ['read']);
  const rotate = await api.send('POST', `/api/v1/keys/${rotated.id}/rotate`, admin, { graceSeconds: 86_400 });
  const successor = await created(rotate, 'the successor of the rotated key');

  const writes = [
    ...IMPORT_SYMBOLS.map((symbol, n) => [symbol, daysCsv(IMPORT_SERIES, [FIRST_DAY], n), 96] as const),
    ['KEEP', daysCsv(KEEP_SERIES, [FIRST_DAY, '2024-03-02', '2024-03-03'], 7), 72] as const,
  ];
  for (const [symbol, csv, count] of writes) {
    const answer = await api.send('PUT', `/api/v1/series/${symbol}/prices`, writer.key, csv);
    assert.equal(answer.status, 200, `prices of ${symbol} are written: ${answer.text}`);
    assert.deepEqual(
      JSON.parse(answer.text),
      { symbol, written: count },
      `every point of ${symbol} is written`,
    );
  }

  const keys = [
    { name: 'operator', key: admin, status: 200 },
    { name: 'reader', key: reader.key, status: 200 },
    { name: 'writer', key: writer.key, status: 200 },
    { name: 'partner (expires in a year)', key: partner.key, status: 200 },
    { name: 'revoked', key: revoked.key, status: 401 },
    { name: 'rotated (the old key, in its grace period)', key: rotated.key, status: 200 },
    { name: 'rotated (the new key)', key: successor.key, status: 200 },
  ];
  for (const { name, key: k, status } of keys) {
    const usage = await api.get('/api/v1/usage', k);
    assert.equal(usage.status, status, `at the start the key "${name}" gets ${status}: ${usage.text}`);
  }
  const listed = await api.get('/api/v1/keys', admin);
  assert.equal(listed.status, 200, `the keys are listed: ${listed.text}`);
  assert.equal((JSON.parse(listed.text) as unknown[]).length, 7, 'seven keys are listed at the start');
  const prices = await api.get(PRICES_AT_START, admin);
  assert.equal(prices.status, 200, `the days written at the start are served: ${prices.text}`);
  assert.equal(
    prices.text.trim().split('\n').length,
    1 + IMPORT_SYMBOLS.length * 96 + 72,
    'every point written at the start is served',
  );
  return {
    site,
    client,
    server,
    api,
    admin,
    keys,
    listed: withoutLastUse(listed.text),
    prices: prices.text,
    outcomes: new Map(),
    rows: engine.rows,
    whole: undefined,
  };
}

/** The imported points of `symbol` on the UTC day of point `index`, as served: `[start ms, price text]`. */
async function servedDay(d: Deployment, symbol: string, index: number): Promise<[number, string][]> {
  const date = new Date(importedStart(index)).toISOString().slice(0, 10);
  const answer = await d.api.get(`/api/v1/prices/${date}?symbols=${symbol}&format=csv`, d.admin);
  assert.equal(answer.status, 200, `${date} of ${symbol} is served: ${answer.text}`);
  return answer.text
    .split('\n')
    .slice(1)
    .filter((line) => line !== '')
    .map((line) => {
      const fields = line.split(',');
      return [Date.parse(fields[2] ?? ''), fields[4] ?? ''];
    });
}

/**
 * Whether the import into `symbol` is stored whole or not at all, failing on anything between: the
 * committed count, its first, a middle and its last day as served, and the series' coverage.
 */
async function importOutcome(d: Deployment, symbol: string): Promise<Outcome> {
  const { points, problems } = await d.site.inspect(symbol);
  assert.deepEqual(problems, [], 'the database is sound after the crash');
  assert.ok(
    points === 0 || points === d.rows,
    `all ${d.rows} imported points of ${symbol} or none are stored, not ${points}`,
  );
  const whole = points === d.rows;
  for (const index of [0, d.rows / 2, d.rows - 1]) {
    const first = Math.floor(index / 96) * 96;
    const expected = whole
      ? Array.from({ length: Math.min(96, d.rows - first) }, (_, n): [number, string] => [
          importedStart(first + n),
          importedPrice(first + n),
        ])
      : [];
    assert.deepEqual(
      await servedDay(d, symbol, index),
      expected,
      `the day of imported point ${index} of ${symbol} is served ${whole ? 'with every imported price, exactly' : 'empty'}`,
    );
  }
  const series = await d.api.get(`/api/v1/series/${symbol}`, d.admin);
  assert.equal(series.status, 200, `the series ${symbol} is served: ${series.text}`);
  assert.deepEqual(
    (JSON.parse(series.text) as { coverage: unknown }).coverage,
    { first: whole ? '2000-01-01' : FIRST_DAY, last: FIRST_DAY },
    `the coverage of ${symbol} agrees`,
  );
  return whole ? 'whole' : 'none';
}

/**
 * The second half of every step: the server starts again on the same data; the import into `symbol`
 * is whole or absent (as `expected`, where the kill point decides it); every earlier import is as it
 * was; every key authenticates as before; the prices written at the start are served byte for byte
 * as before; and a new write works, so no lock or half-written state is left behind.
 */
export async function restartAndCheck(
  t: TestContext,
  d: Deployment,
  symbol: string,
  expected: Outcome | undefined,
) {
  await serving(d);
  const outcome = await importOutcome(d, symbol);
  if (expected !== undefined) assert.equal(outcome, expected, `the import into ${symbol} is ${expected}`);
  t.diagnostic(`after the restart the import into ${symbol} is ${outcome}`);
  for (const [earlier, was] of d.outcomes) {
    const { points } = await d.site.inspect(earlier);
    assert.equal(points, was === 'whole' ? d.rows : 0, `the earlier import into ${earlier} is still ${was}`);
  }
  d.outcomes.set(symbol, outcome);

  for (const { name, key, status } of d.keys) {
    const usage = await d.api.get('/api/v1/usage', key);
    assert.equal(
      usage.status,
      status,
      `after the restart the key "${name}" still gets ${status}: ${usage.text}`,
    );
  }
  const listed = await d.api.get('/api/v1/keys', d.admin);
  assert.equal(listed.status, 200, `the keys are listed after the restart: ${listed.text}`);
  assert.deepEqual(withoutLastUse(listed.text), d.listed, 'every key is listed as it was at the start');
  const prices = await d.api.get(PRICES_AT_START, d.admin);
  assert.equal(
    prices.status,
    200,
    `the days written at the start are served after the restart: ${prices.text}`,
  );
  assert.equal(prices.text, d.prices, 'every price written at the start is served byte for byte as it was');

  const again = await d.api.send(
    'PUT',
    '/api/v1/series/KEEP/prices',
    d.admin,
    daysCsv(KEEP_SERIES, ['2024-03-04'], 1),
  );
  assert.equal(again.status, 200, `a write after the restart succeeds: ${again.text}`);
}

/**
 * Starts the server again if an earlier step failed before it did, so that one failure does not
 * fail every step after it.
 */
export async function serving(d: Deployment): Promise<void> {
  if (d.server.child.exitCode === null && d.server.child.signalCode === null) return;
  await d.site.settle();
  d.server = await startServer(['serve'], d.site.settings);
  d.api = apiOf(d.server, d.client);
}
