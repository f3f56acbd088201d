/**
 * What the benchmarks share (bench/http.ts, data-scale.ts, memory.ts, import.ts, soak.ts): child
 * processes that are always stopped and cleanups that always run, also on Ctrl-C or a failure; the CLI with
 * an environment of the benchmark's own; a fresh PostgreSQL database or schema; the file of prices that
 * `bench:import` and `bench:data-scale` load; a process's memory and CPU time from /proc; one HTTPS request, and the server's heap from /metrics.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const REPO = fileURLToPath(new URL('../', import.meta.url));
export const CLI = join(REPO, 'bin', 'pricepoint.js');

/** Everything to undo, newest first, also on Ctrl-C or a failure: push to it as things are made. */
export const cleanups: Array<() => Promise<unknown>> = [];
const children = new Set<ChildProcess>();

/** Keeps `child` among the processes stopped at the end, until it exits. */
function track<T extends ChildProcess>(child: T): T {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Sends SIGTERM, then SIGKILL if the child is still there after 5 seconds. */
export function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

let cleaning: Promise<void> | undefined;
/** Stops every child, then undoes the rest; once, however often it is called. */
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    await Promise.all([...children].map(stop));
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error: unknown) => console.error(`cleanup failed: ${(error as Error).message}`));
    }
  })();
  return cleaning;
}

/**
 * Runs a benchmark's `main`, then cleans up, also after a failure or Ctrl-C.
 * @example await runBench(main)
 */
export async function runBench(main: () => Promise<void>): Promise<void> {
  // Ctrl-C reaches this process twice (from the terminal and relayed by tsx): every signal is
  // handled, or the second one would end the process before the cleanup is done.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (cleaning === undefined) console.error(`\n${signal}: stopping and cleaning up`);
      cleanUp().finally(() => process.exit(130));
    });
  }
  try {
    await main();
  } finally {
    await cleanUp();
  }
}

/** The environment without the caller's PRICEPOINT_* settings, plus `settings`. */
export function envWith(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (!name.startsWith('PRICEPOINT_')) env[name] = value;
  return { ...env, ...settings };
}

/** Runs the compiled CLI to completion; resolves its stdout. */
export function cli(args: string[], settings: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: envWith(settings), maxBuffer: 1 << 24 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`pricepoint ${args.join(' ')} failed:\n${stderr}`)) : resolve(stdout),
    );
  });
}

/**
 * Runs `node ...args` to completion; resolves the JSON of the last line it printed, rejects with
 * its stderr when it fails.
 */
export function lastJsonLine<T>(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = track(spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] }));
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0) reject(new Error(`${args.join(' ')} failed (${code}):\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop() ?? '') as T);
    });
  });
}

/**
 * Starts a server child and waits for the line that tells its port: `{"port":N}` on stdout for the
 * setups in bench/setups, `{"url":...}` on stderr for `pricepoint serve --json`. Pricepoint's request
 * logs go to /dev/null: it logs at its default level, as a deployment would, without a reader slowing it.
 */
export function startChild(
  args: string[],
  env: NodeJS.ProcessEnv,
  from: 'stdout' | 'stderr',
  /** A command to start Node under, with its arguments: `['valgrind', '--tool=callgrind']`. */
  under: readonly string[] = [],
  /** Node's own options before `args`, after the young-generation size every server gets. */
  nodeOptions: readonly string[] = [],
): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    // Every server with the young-generation size bin/pricepoint.js starts Pricepoint with.
    const node = [process.execPath, '--max-semi-space-size=64', ...nodeOptions, ...args];
    const [command = process.execPath, ...rest] = [...under, ...node];
    const child = track(
      spawn(command, rest, {
        env,
        stdio: ['ignore', from === 'stdout' ? 'pipe' : 'ignore', 'pipe'],
      }),
    );
    let output = '';
    let stderr = '';
    const stream = from === 'stdout' ? child.stdout! : child.stderr!;
    if (from === 'stdout') child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    stream.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      if (from === 'stderr') stderr += chunk;
      for (const line of output.split('\n').slice(0, -1)) {
        try {
          const info = JSON.parse(line) as { port?: number; url?: string };
          const port = info.port ?? (info.url ? Number(new URL(info.url).port) : undefined);
          if (port) resolve({ child, port });
        } catch {
          // not the line we wait for
        }
      }
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited (${code}):\n${stderr}`)));
  });
}

/**
 * `pricepoint serve --dev-data --json` (the embedded default) in a fresh temporary folder, removed
 * at the cleanup, with `tiers` and the rest of `more` (`fx`, `tariffs`) in its config file: the
 * folder, the CLI's settings for it, the server, and its generated certificate.
 */
export async function startEmbeddedServer(prefix: string, tiers: object, more: object = {}) {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const config = join(dir, 'config.json');
  await writeFile(config, JSON.stringify({ ...more, tiers }));
  const settings = {
    PRICEPOINT_CONFIG: config,
    PRICEPOINT_PORT: '0',
    PRICEPOINT_HOST: '127.0.0.1',
    PRICEPOINT_DATA_DIR: join(dir, 'data'),
  };
  const server = await startChild([CLI, 'serve', '--dev-data', '--json'], envWith(settings), 'stderr');
  const caFile = join(dir, 'data', 'tls', 'localhost-cert.pem');
  return { dir, settings, server, caFile, ca: readFileSync(caFile, 'utf8') };
}

/**
 * A database created on the PostgreSQL server of `serverUrl` and dropped at the cleanup: its URL,
 * or why there is none.
 */
export async function freshDatabase(
  serverUrl: string,
  name: string,
): Promise<{ url: string } | { why: string }> {
  const database = `${name}_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 2_000 });
  admin.on('error', () => {});
  try {
    await admin.connect();
    await admin.query(`create database ${database}`);
  } catch (error) {
    return { why: `PostgreSQL at ${serverUrl} is unreachable (${(error as Error).message})` };
  } finally {
    await admin.end().catch(() => {});
  }
  cleanups.push(async () => {
    const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 2_000 });
    client.on('error', () => {});
    await client.connect();
    await client.query(`drop database if exists ${database} with (force)`);
    await client.end();
  });
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return { url: url.toString() };
}

/**
 * A schema created in the PostgreSQL database of `databaseUrl` and dropped (with all in it) at the
 * cleanup, as the tests have theirs (test/helpers/postgres.ts): a URL whose every connection has
 * it as its `search_path` (the `options` parameter, which pg passes to the server), or why there is none.
 */
export async function freshSchema(
  databaseUrl: string,
  name: string,
): Promise<{ url: string; schema: string } | { why: string }> {
  const schema = `${name}_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 2_000 });
  admin.on('error', () => {});
  try {
    await admin.connect();
    await admin.query(`create schema ${schema}`);
  } catch (error) {
    return { why: `PostgreSQL at ${databaseUrl} is unreachable (${(error as Error).message})` };
  } finally {
    await admin.end().catch(() => {});
  }
  cleanups.push(async () => {
    const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 2_000 });
    client.on('error', () => {});
    await client.connect();
    await client.query(`drop schema if exists ${schema} cascade`);
    await client.end();
  });
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { url: url.toString(), schema };
}

/** A line `name:  N kB` of /proc/<pid>/status, in MiB. */
function statusMiB(pid: number | undefined, name: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) / 1024;
}

/** Resident memory of a running process now, in MiB (VmRSS). */
export const rssMiB = (pid: number | undefined) => statusMiB(pid, 'VmRSS');

/** Peak resident memory of a running process, in MiB (VmHWM: the high-water mark since its start). */
export const peakRssMiB = (pid: number | undefined) => statusMiB(pid, 'VmHWM');

/** Linux's USER_HZ, the unit of the CPU times in /proc/<pid>/stat. */
const CLOCK_TICKS = 100;

/** CPU time a process has used so far (user and system, all its threads), in seconds, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number | undefined): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** One HTTPS request to 127.0.0.1, trusting `ca` for the name localhost. */
export function httpsCall(
  port: number,
  ca: string,
  agent: Agent,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method, ca, servername: 'localhost', headers, agent },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

/** The V8 heap and external memory the server reports on /metrics, in MiB. */
export async function serverHeapMiB(
  port: number,
  ca: string,
): Promise<{ heapUsed: number; heapTotal: number; external: number }> {
  const agent = new Agent();
  try {
    const { body } = await httpsCall(port, ca, agent, 'GET', '/metrics', {});
    const metric = (name: string) => {
      // Summed over labels (heap spaces), for the few metrics that have them.
      let total = 0;
      for (const m of body.matchAll(new RegExp(`^pricepoint_${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm')))
        total += Number(m[1]);
      return total / 2 ** 20;
    };
    return {
      heapUsed: metric('nodejs_heap_size_used_bytes'),
      heapTotal: metric('nodejs_heap_size_total_bytes'),
      external: metric('nodejs_external_memory_bytes'),
    };
  } finally {
    agent.destroy();
  }
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

const QUARTER_HOUR_MS = 900_000;

/** The symbol of the benchmark series number `i`. */
export const symbolOf = (i: number) => `BENCH${String(i).padStart(3, '0')}`;

/**
 * Writes `series` series of 15-minute prices from `from` to `to` (epoch ms) as the CSV `pricepoint
 * import` reads (`symbol,start,price`), series after series; returns the point count.
 */
export async function writePricesCsv(
  file: string,
  series: number,
  from: number,
  to: number,
): Promise<number> {
  const out = createWriteStream(file);
  const write = (text: string) =>
    out.write(text) ? Promise.resolve() : new Promise<void>((done) => out.once('drain', () => done()));
  await write('symbol,start,price\n');
  let points = 0;
  for (let s = 0; s < series; s++) {
    const symbol = symbolOf(s);
    let chunk = '';
    for (let t = from; t < to; t += QUARTER_HOUR_MS) {
      // A price with two decimals that varies over the day, negative now and then.
      const cents = (((t / QUARTER_HOUR_MS) * 7919 + s * 104729) % 20000) - 2000;
      chunk += `${symbol},${new Date(t).toISOString().slice(0, 19)}Z,${(cents / 100).toFixed(2)}\n`;
      points++;
      if (chunk.length > 1 << 20) {
        await write(chunk);
        chunk = '';
      }
    }
    await write(chunk);
  }
  await new Promise<void>((done, fail) => out.end((error?: Error | null) => (error ? fail(error) : done())));
  return points;
}
