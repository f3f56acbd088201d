/**
 * Crash safety (issue 7, point 4): a process killed with SIGKILL in the middle of an import, on SQLite
 * and on PostgreSQL. After a restart the import is there whole or not at all, and every key and price
 * written before it is intact.
 *
 * One deployment per engine (a data folder, or a schema) goes through ten imports of the same
 * points (300,000 quarter hours on SQLite, 96,000 on PostgreSQL), each into a series of its own, and
 * a SIGKILL in each:
 * - the server's import, `PUT /api/v1/series/{symbol}/prices` with a streamed CSV body (9 MB on
 *   SQLite; the limit is 16 MiB). The server holds the points until the body has ended and then
 *   writes them in one transaction. Killed: right after it answered (the control), right after it
 *   refused an import for its last row, while it reads the body, as the transaction begins, half-way
 *   through it, and near its end, where it commits.
 * - the operator's import, `pricepoint import FILE`, which streams a file into one open transaction.
 *   The file is a FIFO this test feeds, so the kill comes after an exact number of rows (10 %, 50 %,
 *   95 %), and once more after the file ended, in the COMMIT (SQLite: half-way through what it writes
 *   into the WAL; PostgreSQL: as its backend runs it). The server on the same data is killed with it.
 * After each kill the server starts again, and then: the import is whole or absent (as the kill point
 * decides, where it does), every earlier import is as it was, every key authenticates as before, the
 * prices written at the start are served byte for byte as before, and a new write works.
 *
 * Kill points are progress, never time: bytes the server process has read (`/proc/PID/io`), rows fed
 * into the FIFO, and how far the database has grown (SQLite: the WAL, truncated before each import;
 * a transaction larger than the page cache spills into it before it commits. PostgreSQL: the heap of
 * the prices table, which uncommitted rows extend too). The control import measures how far a whole
 * import grows the database.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync } from 'node:child_process';
import {
  closeSync,
  constants,
  createWriteStream,
  openSync,
  readFileSync,
  statSync,
  type WriteStream,
} from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Agent, request } from 'undici';
import { dayIntervals, formatInstant } from '../../src/domain/time/days.js';
import { postgresSchemaUrl } from '../helpers/postgres.js';
import {
  type Answer,
  cleanUp,
  httpsClient,
  onlyJson,
  runCli,
  type ServerProcess,
  type Settings,
  spawnCli,
  startServer,
  tempDir,
} from '../helpers/process.js';

const QUARTER_HOUR_MS = 900_000;
/** Imported points: every quarter hour (UTC) from here on, decades before the points written first. */
const IMPORT_FROM = Date.parse('2000-01-01T00:00:00Z');
const ROWS_PER_CHUNK = 2_000;
/** What every import series is created as. */
const IMPORT_SERIES = {
  name: 'Crash test day-ahead',
  kind: 'electricity',
  currency: 'EUR',
  unit: 'MWh',
  timezone: 'UTC',
  resolution: 'PT15M',
} as const;
/** A series no import touches. */
const KEEP_SERIES = {
  name: 'Kept FX',
  kind: 'fx',
  currency: 'USD',
  unit: 'EUR',
  timezone: 'Europe/Berlin',
  resolution: 'PT1H',
} as const;
/** The first day written through the API, on every series: it must come back byte for byte. */
const FIRST_DAY = '2024-03-01';

// ---------------------------------------------------------------------------------------------------
// The kill points, each with the series its import goes into.

type Outcome = 'whole' | 'none';

interface HttpKill {
  readonly symbol: string;
  readonly name: string;
  /** Whether `reached` reads the bytes the server has read (Linux only). */
  readonly readsBody?: true;
  /** Whether it has come: bytes the server read since the body began; database growth; both of a whole import. */
  reached(progress: { read: number; grown: number; body: number; whole: number }): boolean;
}

const HTTP_KILLS: readonly HttpKill[] = [
  {
    symbol: 'HTTP-BODY',
    name: 'while it reads the body (a quarter of it read)',
    readsBody: true,
    reached: ({ read, body }) => read >= body / 4,
  },
  {
    symbol: 'HTTP-BEGIN',
    name: 'as its transaction starts to reach the database (2 % there)',
    reached: ({ grown, whole }) => grown >= whole * 0.02,
  },
  {
    symbol: 'HTTP-HALF',
    name: 'half-way through its transaction',
    reached: ({ grown, whole }) => grown >= whole * 0.5,
  },
  {
    // Either outcome may follow. On SQLite the last 2 MB (the server's page cache) reach the WAL only
    // in the COMMIT, and the checkpoint after it keeps the server from answering: the kill lands in
    // the commit or just after it. On PostgreSQL it lands in the last inserts.
    symbol: 'HTTP-COMMIT',
    name: 'near the end of its transaction, where it commits (90 % there)',
    reached: ({ grown, whole }) => grown >= whole * 0.9,
  },
];

interface CliKill {
  readonly symbol: string;
  readonly name: string;
  /** The share of the rows fed before the kill; 1: all of them, and the end of the file. */
  readonly fed: number;
}

const CLI_KILLS: readonly CliKill[] = [
  { symbol: 'CLI-EARLY', name: 'early (10 % of the rows fed)', fed: 0.1 },
  { symbol: 'CLI-HALF', name: 'half-way (50 % of the rows fed)', fed: 0.5 },
  { symbol: 'CLI-LATE', name: 'near the end (95 % of the rows fed)', fed: 0.95 },
  { symbol: 'CLI-COMMIT', name: 'while it commits (every row fed, the file ended)', fed: 1 },
];

const CONTROL = 'HTTP-WHOLE';
const REFUSED = 'HTTP-REFUSED';
const IMPORT_SYMBOLS = [
  CONTROL,
  REFUSED,
  ...HTTP_KILLS.map((k) => k.symbol),
  ...CLI_KILLS.map((k) => k.symbol),
];

// ---------------------------------------------------------------------------------------------------
// The import: the same points every time, as chunks of CSV built once per symbol column.

/** The price of imported point `i`, as text: distinct, some negative, trailing zeros that must stay. */
function importedPrice(i: number): string {
  return `${(i % 9973) - 4000}.${String(i % 1000).padStart(3, '0')}`;
}

function importedStart(i: number): number {
  return IMPORT_FROM + i * QUARTER_HOUR_MS;
}

interface ImportText {
  readonly header: Buffer;
  /** `ROWS_PER_CHUNK` rows each. */
  readonly chunks: readonly Buffer[];
  readonly bytes: number;
}

const importTexts = new Map<string, ImportText>();

/**
 * The first `rows` points as CSV: with a symbol column for the CLI, without one (`''`) for the
 * series' own endpoint.
 */
function importText(symbol: string, rows: number): ImportText {
  let text = importTexts.get(`${symbol}:${rows}`);
  if (text === undefined) {
    const chunks: Buffer[] = [];
    const prefix = symbol === '' ? '' : `${symbol},`;
    for (let from = 0; from < rows; from += ROWS_PER_CHUNK) {
      let chunk = '';
      for (let i = from; i < from + ROWS_PER_CHUNK; i++) {
        chunk += `${prefix}${new Date(importedStart(i)).toISOString().slice(0, 19)}Z,${importedPrice(i)}\n`;
      }
      chunks.push(Buffer.from(chunk));
    }
    const header = Buffer.from(symbol === '' ? 'start,price\n' : 'symbol,start,price\n');
    text = { header, chunks, bytes: chunks.reduce((sum, c) => sum + c.length, header.length) };
    importTexts.set(`${symbol}:${rows}`, text);
  }
  return text;
}

// ---------------------------------------------------------------------------------------------------
// Where the data lives, a data folder (SQLite) or a schema (PostgreSQL), and what can be seen of it.

interface Site {
  readonly settings: Settings;
  readonly dir: string;
  readonly certFile: string;
  /** Called once the server has created the tables. */
  prepare(): Promise<void>;
  /** Takes the database's size now as the base of `grown()`. */
  mark(): Promise<void>;
  /** Bytes the database has grown by since `mark()`. */
  grown(): Promise<number>;
  /** Whether an import holds the write lock now, and whether it has written rows (PostgreSQL tells). */
  importer(): Promise<{ locked: boolean; wrote: boolean | undefined }>;
  /**
   * Called while an import waits for more input, just before its input ends: how to tell that its
   * COMMIT is under way, and, once it was killed then, what that decided (undefined: not known).
   */
  aimAtCommit(
    whole: number,
  ): Promise<{ committing: () => Promise<boolean>; decided: () => Outcome | undefined }>;
  /** Waits until no import holds the write lock (a killed client's transaction is rolled back). */
  settle(): Promise<void>;
  /** Committed points of `symbol` in the imports' span, and anything wrong with the database itself. */
  inspect(symbol: string): Promise<{ points: number; problems: string[] }>;
}

interface Engine {
  readonly name: string;
  /** Points of each import. */
  readonly rows: number;
  site(): Promise<Site>;
}

/**
 * A kill seen to come while the database had grown by less than this share of a whole import cannot
 * have let the import commit: SQLite writes the commit record last, PostgreSQL gets the COMMIT after
 * the last row. The margin is for the moment between seeing the growth and the kill.
 */
const FAR_FROM_WHOLE = 0.75;

/** Where imported points lie: before the days written at the start. */
const IMPORT_SPAN = [IMPORT_FROM, Date.parse(`${FIRST_DAY}T00:00:00Z`)] as const;
const COUNT_SQL =
  'select count(*) as n from prices p join series s on s.id = p.series_id where s.symbol = ? and p.start_ms >= ? and p.start_ms < ?';

const sqliteEngine: Engine = {
  name: 'SQLite',
  // 3,125 days, a WAL of 7 MB: several times the server's page cache (2 MB), so that its transaction
  // spills into the WAL long before its COMMIT writes the rest.
  rows: 300_000,
  async site() {
    const dir = await tempDir('pricepoint-crash-');
    const file = join(dir, 'pricepoint.db');
    const walSize = () => {
      try {
        return statSync(`${file}-wal`).size;
      } catch {
        return 0;
      }
    };
    let base = 0;
    // The connections here are opened only while a server runs, so none is ever the last one:
    // closing it cannot checkpoint the WAL and so tidy up before the restarted server has to.
    return {
      settings: { PRICEPOINT_DATA_DIR: dir },
      dir,
      certFile: join(dir, 'tls', 'localhost-cert.pem'),
      async prepare() {},
      async mark() {
        // An emptied WAL grows with the next transaction's pages from zero; one that was only
        // checkpointed would be written over from its start without growing.
        const db = new SQLite(file);
        try {
          const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
          assert.equal(result?.busy, 0, 'the WAL is emptied before the import');
        } finally {
          db.close();
        }
        base = walSize();
      },
      async grown() {
        return walSize() - base;
      },
      async importer() {
        const probe = new SQLite(file, { timeout: 0 });
        try {
          probe.exec('BEGIN IMMEDIATE');
          probe.exec('ROLLBACK');
          return { locked: false, wrote: undefined };
        } catch (error) {
          if ((error as { code?: string }).code === 'SQLITE_BUSY') return { locked: true, wrote: undefined };
          throw error;
        } finally {
          probe.close();
        }
      },
      async aimAtCommit(whole) {
        // The importer's transaction fits its page cache, so its COMMIT writes all of it into the
        // WAL, the commit record last: killed half-way through that, it is not committed.
        const atEnd = walSize() - base;
        let seen = atEnd;
        return {
          committing: async () => {
            seen = walSize() - base;
            return seen - atEnd >= (whole - atEnd) / 2;
          },
          decided: () => (seen - atEnd < (whole - atEnd) * FAR_FROM_WHOLE ? 'none' : undefined),
        };
      },
      async settle() {
        // A dead process holds no SQLite lock; the next connection recovers the WAL.
      },
      async inspect(symbol) {
        const db = new SQLite(file, { readonly: true, fileMustExist: true });
        try {
          const check = db.pragma('quick_check', { simple: true });
          const row = db
            .prepare<[string, number, number], { n: number }>(COUNT_SQL)
            .get(symbol, ...IMPORT_SPAN);
          return { points: row?.n ?? -1, problems: check === 'ok' ? [] : [`quick_check: ${String(check)}`] };
        } finally {
          db.close();
        }
      },
    };
  },
};

const postgresTarget = await postgresSchemaUrl();
const skipPostgres = 'skip' in postgresTarget ? postgresTarget.skip : false;
/** Schemas and connections of the PostgreSQL deployment, dropped and closed after the file. */
const postgresCleanUps: (() => Promise<void>)[] = [];

const postgresEngine: Engine = {
  name: 'PostgreSQL',
  // 1,000 days: every insert statement reaches the heap at once, and PostgreSQL's are the slower.
  rows: 96_000,
  async site() {
    const target = await postgresSchemaUrl();
    if ('skip' in target) throw new Error(target.skip);
    const dir = await tempDir('pricepoint-crash-pg-');
    // The server takes one URL; the schema travels in it as the connections' search_path. The
    // server migrates into the current schema, which has to exist for that.
    const url = new URL(target.url);
    url.searchParams.set('options', `-c search_path=${target.schema}`);
    const probe = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 2_000 });
    probe.on('error', () => {});
    await probe.connect();
    postgresCleanUps.push(async () => {
      await probe.end().catch(() => {});
      await target.drop();
    });
    await probe.query(`create schema ${target.schema}`);
    const heap = async () =>
      Number(
        (await probe.query<{ size: string }>("select pg_relation_size('prices') as size")).rows[0]?.size,
      );
    // The holder of the imports' own lock (src/stores/postgres/price-write-session.ts): an advisory
    // lock on a bigint key shows in pg_locks as its high and low 32 bits. A backend gets a
    // transaction id with its first write.
    const holder = `
      with k as (select hashtext(current_schema() || '.price_writes')::bigint as key)
      select a.pid, a.backend_xid is not null as wrote
      from pg_locks l join pg_stat_activity a on a.pid = l.pid, k
      where l.locktype = 'advisory' and l.granted and l.objsubid = 1
        and l.database = (select oid from pg_database where datname = current_database())
        and l.classid::bigint = (k.key >> 32) & 4294967295 and l.objid::bigint = k.key & 4294967295`;
    const importer = async () => {
      const { rows } = await probe.query<{ pid: number; wrote: boolean }>(holder);
      return { locked: rows.length > 0, wrote: rows.some((r) => r.wrote), pid: rows[0]?.pid };
    };
    let base = 0;
    return {
      settings: { PRICEPOINT_DATA_DIR: dir, PRICEPOINT_DATABASE_URL: url.toString() },
      dir,
      certFile: join(dir, 'tls', 'localhost-cert.pem'),
      async prepare() {
        // Rows of a killed import stay dead where they are, so the heap grows with the next one
        // instead of filling the space a vacuum would free.
        await probe.query('alter table prices set (autovacuum_enabled = false)');
      },
      async mark() {
        base = await heap();
      },
      async grown() {
        return (await heap()) - base;
      },
      importer,
      async aimAtCommit() {
        // The COMMIT is one message: once the importer's backend runs it, PostgreSQL finishes it
        // whatever becomes of the client, which is killed right then.
        const { pid } = await importer();
        assert.ok(pid !== undefined, 'the import holds its lock until it commits');
        return {
          committing: async () => {
            const { rows } = await probe.query<{ query: string }>(
              'select query from pg_stat_activity where pid = $1',
              [pid],
            );
            return rows[0]?.query.trim().toLowerCase() === 'commit';
          },
          decided: () => 'whole',
        };
      },
      async settle() {
        // A killed client's backend rolls back when it next reads from the closed connection, after
        // the statement it was running, if any.
        const deadline = Date.now() + 30_000;
        while ((await importer()).locked) {
          assert.ok(Date.now() < deadline, 'the killed import released its lock within 30 s');
          await sleep(20);
        }
      },
      async inspect(symbol) {
        let n = 0;
        const { rows } = await probe.query<{ n: string }>(
          COUNT_SQL.replace(/\?/g, () => `$${++n}`),
          [symbol, ...IMPORT_SPAN],
        );
        return { points: Number(rows[0]?.n ?? -1), problems: [] };
      },
    };
  },
};

// ---------------------------------------------------------------------------------------------------
// Processes: servers and the CLI import through the helpers (cleanUp kills what is left).

type ImportProcess = ReturnType<typeof spawnCli>;

const fifos = new Set<string>();

const spawnImport = (file: string, settings: Settings): ImportProcess =>
  spawnCli(['import', file, '--json'], settings);

after(async () => {
  // A writer still waiting to open a FIFO that nobody reads (a failed test) is let go by a reader.
  for (const fifo of fifos) {
    try {
      closeSync(openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK));
    } catch {}
  }
  await cleanUp();
  for (const drop of postgresCleanUps) await drop();
});

function write(stream: WriteStream, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) =>
    stream.write(chunk, (error) => (error ? reject(error) : resolve())),
  );
}

/**
 * Writes `chunks` into the FIFO. A write returns once the pipe holds its bytes, so when this resolves
 * the importer has read all but at most a pipe's worth (64 KiB, some 1,700 rows) of them, and written
 * all it read into its transaction but its current batch (4,096 rows).
 */
async function feed(stream: WriteStream, chunks: readonly Buffer[], importer: ImportProcess): Promise<void> {
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
function bytesRead(pid: number | undefined): number | undefined {
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
async function killWhen(
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

function apiOf(server: ServerProcess, client: ReturnType<typeof httpsClient>): Api {
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

interface Deployment {
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
async function deploy(engine: Engine): Promise<Deployment> {
  const site = await engine.site();
  const operator = await runCli(
    [
      'keys',
      'create',
      '--tier',
      'enterprise',
      '--name',
      'operator',
      '--scopes',
      'read,write,admin',
      '--json',
    ],
    site.settings,
  );
  assert.equal(operator.code, 0, `keys create: ${operator.stderr}`);
  const admin = (onlyJson(operator) as { key: string }).key;
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
async function restartAndCheck(t: TestContext, d: Deployment, symbol: string, expected: Outcome | undefined) {
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

// ---------------------------------------------------------------------------------------------------
// The steps.

/**
 * The server's HTTP import, streamed, with `tail` after the points; the answer has status 0 when the
 * connection died instead.
 */
function streamImport(d: Deployment, symbol: string, tail: readonly Buffer[] = []): Promise<Answer> {
  const { header, chunks } = importText('', d.rows);
  const agent = new Agent({ connect: { ca: readFileSync(d.site.certFile), servername: 'localhost' } });
  return (async () => {
    try {
      const response = await request(`${d.server.url}/api/v1/series/${symbol}/prices`, {
        method: 'PUT',
        headers: { 'x-api-key': d.admin, 'content-type': 'text/csv' },
        body: Readable.from([header, ...chunks, ...tail]),
        dispatcher: agent,
      });
      return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
    } catch (error) {
      return { status: 0, headers: {}, text: String(error) };
    } finally {
      await agent.destroy().catch(() => {});
    }
  })();
}

/**
 * Starts the server again if an earlier step failed before it did, so that one failure does not
 * fail every step after it.
 */
async function serving(d: Deployment): Promise<void> {
  if (d.server.child.exitCode === null && d.server.child.signalCode === null) return;
  await d.site.settle();
  d.server = await startServer(['serve'], d.site.settings);
  d.api = apiOf(d.server, d.client);
}

/** The control: a whole HTTP import, answered, then a kill: it must stay whole. It measures `whole`. */
async function httpControl(t: TestContext, d: Deployment): Promise<void> {
  await serving(d);
  await d.site.mark();
  const started = performance.now();
  const answer = await streamImport(d, CONTROL);
  assert.equal(answer.status, 200, `the whole import is answered: ${answer.text}`);
  assert.deepEqual(JSON.parse(answer.text), { symbol: CONTROL, written: d.rows }, 'every point is written');
  d.whole = await d.site.grown();
  t.diagnostic(
    `the import took ${Math.round(performance.now() - started)} ms and grew the database by ${d.whole} bytes`,
  );
  await d.server.stop('SIGKILL');
  await restartAndCheck(t, d, CONTROL, 'whole');
}

/** An import refused for its last row, then a kill: nothing of it may be stored. */
async function httpRefused(t: TestContext, d: Deployment): Promise<void> {
  await serving(d);
  const bad = Buffer.from(`${new Date(importedStart(d.rows)).toISOString().slice(0, 19)}Z,not-a-price\n`);
  const answer = await streamImport(d, REFUSED, [bad]);
  assert.equal(answer.status, 422, `the import is refused: ${answer.text.slice(0, 500)}`);
  const { errorCount, errors } = JSON.parse(answer.text) as {
    errorCount: number;
    errors: { line: number }[];
  };
  assert.deepEqual(
    { errorCount, lines: errors.map((e) => e.line) },
    { errorCount: 1, lines: [d.rows + 2] },
    'the one bad row, the last, is named',
  );
  await d.server.stop('SIGKILL');
  await restartAndCheck(t, d, REFUSED, 'none');
}

async function httpKill(t: TestContext, d: Deployment, kill: HttpKill): Promise<void> {
  await serving(d);
  const whole = d.whole;
  assert.ok(whole !== undefined && whole > 0, 'the control import (the first step) measured a whole import');
  const pid = d.server.child.pid;
  const readAtStart = bytesRead(pid);
  if (kill.readsBody && readAtStart === undefined) {
    t.skip('what a process has read is known from /proc/PID/io, on Linux only');
    return;
  }
  await d.site.mark();
  const body = importText('', d.rows).bytes;
  const started = performance.now();
  const answer = streamImport(d, kill.symbol);
  let grown = 0;
  const ended = await killWhen(d.server.child, kill.name, async () => {
    grown = await d.site.grown();
    return kill.reached({
      read: (bytesRead(pid) ?? Number.NaN) - (readAtStart ?? Number.NaN),
      grown,
      body,
      whole,
    });
  });
  assert.equal(ended, 'killed', 'the server was killed; it did not end by itself');
  const cut = await answer;
  const exit = await d.server.closed;
  assert.equal(exit.signal, 'SIGKILL', 'the server died of the SIGKILL');
  t.diagnostic(
    `killed ${Math.round(performance.now() - started)} ms after the body began, ${grown} of ${whole} bytes written`,
  );
  let expected: Outcome | undefined = grown < whole * FAR_FROM_WHOLE ? 'none' : undefined;
  if (cut.status === 200) {
    // Answered before the kill, which came after the commit then.
    assert.equal(expected, undefined, `the server never answered the import it was killed in: ${cut.text}`);
    expected = 'whole';
  } else {
    assert.equal(cut.status, 0, `no answer but a broken connection: ${cut.text}`);
  }
  await restartAndCheck(t, d, kill.symbol, expected);
}

async function cliKill(t: TestContext, d: Deployment, kill: CliKill): Promise<void> {
  await serving(d);
  const whole = d.whole;
  assert.ok(whole !== undefined && whole > 0, 'the control import (the first step) measured a whole import');
  const fifo = join(d.site.dir, `${kill.symbol}.csv`);
  execFileSync('mkfifo', [fifo]);
  fifos.add(fifo);
  await d.site.mark();
  const started = performance.now();
  const importer = spawnImport(fifo, d.site.settings);
  // Opening blocks (in the thread pool) until the importer opens the FIFO to read it.
  const stream = createWriteStream(fifo);
  stream.on('error', () => {}); // reported through the write callbacks
  let expected: Outcome | undefined = 'none';
  try {
    const { header, chunks } = importText(kill.symbol, d.rows);
    await feed(stream, [header, ...chunks.slice(0, Math.round(chunks.length * kill.fed))], importer);
    if (kill.fed < 1) {
      const { locked, wrote } = await d.site.importer();
      assert.ok(locked, 'the import holds the write lock: it is under way, not committed');
      assert.notEqual(wrote, false, 'the import has written rows into its transaction');
      importer.child.kill('SIGKILL');
    } else {
      const { committing, decided } = await d.site.aimAtCommit(whole);
      await new Promise<void>((resolve) => stream.end(resolve));
      const ended = await killWhen(importer.child, kill.name, committing);
      t.diagnostic(`${ended} while it committed`);
      expected = decided();
    }
    const output = await importer.closed;
    if (output.signal !== 'SIGKILL') {
      // Only the kill aimed at the commit can come too late, and then the import has succeeded.
      assert.equal(kill.fed, 1, `the import died of the SIGKILL, not ${output.code}: ${output.stderr}`);
      assert.equal(output.code, 0, `an import that ended by itself succeeded: ${output.stderr}`);
      expected = 'whole';
    }
  } finally {
    // A step that failed leaves no importer behind to hold the write lock for the next one.
    importer.child.kill('SIGKILL');
    await importer.closed;
    stream.destroy();
  }
  await d.server.stop('SIGKILL');
  t.diagnostic(`the importer was gone ${Math.round(performance.now() - started)} ms after it started`);
  await restartAndCheck(t, d, kill.symbol, expected);
}

for (const engine of [sqliteEngine, postgresEngine]) {
  const skip = engine === postgresEngine && skipPostgres;
  describe(`crash safety on ${engine.name}: one deployment killed in ten imports`, { skip }, () => {
    let d: Deployment;
    before(async () => {
      d = await deploy(engine);
    });

    test('the server, right after it answered a whole HTTP import: the import stays whole', (t) =>
      httpControl(t, d));
    test('the server, right after it refused an HTTP import for its last row: nothing of it is stored', (t) =>
      httpRefused(t, d));
    for (const kill of HTTP_KILLS) {
      test(`the server, in an HTTP import ${kill.name}: whole or nothing, the rest intact`, (t) =>
        httpKill(t, d, kill));
    }
    for (const kill of CLI_KILLS) {
      test(`pricepoint import and the server, ${kill.name}: whole or nothing, the rest intact`, (t) =>
        cliKill(t, d, kill));
    }
  });
}
