/**
 * Real processes for the CLI and operations tests: `node bin/pricepoint.js ...`, which imports the
 * compiled dist/ (so `npm test` builds first), each test with its own data folder and port 0.
 * Every child, folder and HTTP agent is tracked; `cleanUp()` in each file's `after` kills and removes
 * what is left, so a failing test leaves no server behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = join(REPO, 'bin', 'pricepoint.js');

/** `PRICEPOINT_*` settings of one spawned command. */
export type Settings = Readonly<Record<string, string>>;

export interface Output {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

const children = new Set<ChildProcess>();
const folders = new Set<string>();
const agents = new Set<Agent>();

// Last resort when the test process itself is torn down (runner timeout): no server may outlive it.
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/**
 * Our environment without any `PRICEPOINT_*` of the developer's shell, plus `settings`; port 0 so the
 * kernel picks a free port and the banner tells which.
 */
export function cliEnv(settings: Settings = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('PRICEPOINT_') && name !== 'NODE_TEST_CONTEXT') env[name] = value;
  }
  return { ...env, PRICEPOINT_PORT: '0', ...settings };
}

/** A fresh, empty folder, removed by `cleanUp()`. */
export async function tempDir(prefix = 'pricepoint-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  folders.add(dir);
  return dir;
}

/** Kills every child still running, closes every agent and removes every temporary folder. */
export async function cleanUp(): Promise<void> {
  await Promise.all(
    [...children].map(async (child) => {
      child.kill('SIGKILL');
      await exited(child);
    }),
  );
  await Promise.all([...agents].map((agent) => agent.destroy()));
  agents.clear();
  await Promise.all([...folders].map((dir) => rm(dir, { recursive: true, force: true })));
  folders.clear();
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** A spawned command whose output is collected as it arrives. */
interface Spawned {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited and its output is complete. */
  readonly closed: Promise<Output>;
}

function spawnTracked(command: string, args: readonly string[], env: NodeJS.ProcessEnv, cwd = REPO): Spawned {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const closed = new Promise<Output>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      children.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, stdout: () => stdout, stderr: () => stderr, closed };
}

/** Polls `check` every 25 ms until it returns something other than `undefined`. */
export async function waitUntil<T>(check: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Runs any command to its end (killed after `timeoutMs`). */
export async function runCommand(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  options: { cwd?: string; timeoutMs?: number } = {},
): Promise<Output> {
  const spawned = spawnTracked(command, args, env, options.cwd);
  const timeoutMs = options.timeoutMs ?? 30_000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      spawned.child.kill('SIGKILL');
      reject(
        new Error(
          `${command} ${args.join(' ')} did not finish in ${timeoutMs} ms\nstdout: ${spawned.stdout()}\nstderr: ${spawned.stderr()}`,
        ),
      );
    }, timeoutMs);
  });
  try {
    return await Promise.race([spawned.closed, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** `pricepoint ARGS` with the given settings, run to its end. */
export function runCli(args: readonly string[], settings: Settings, options: { cwd?: string } = {}) {
  return runCommand(process.execPath, [BIN, ...args], cliEnv(settings), options);
}

/**
 * `pricepoint ARGS` started and left running, for a test that kills it mid-run or waits for
 * `closed`; `cleanUp()` kills it if it is still running.
 */
export function spawnCli(args: readonly string[], settings: Settings): Pick<Spawned, 'child' | 'closed'> {
  const { child, closed } = spawnTracked(process.execPath, [BIN, ...args], cliEnv(settings));
  return { child, closed };
}

/** Every line of `text` parsed as JSON; throws on a line that is not. */
export function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON line: ${line}`);
      }
    });
}

/**
 * An enterprise key with every scope, made with `pricepoint keys create` as an operator would:
 * the clear key, printed once.
 */
export async function operatorKey(settings: Settings): Promise<string> {
  const args = [
    'keys',
    'create',
    '--tier',
    'enterprise',
    '--name',
    'operator',
    '--scopes',
    'read,write,admin',
  ];
  const created = await runCli([...args, '--json'], settings);
  if (created.code !== 0) throw new Error(`keys create: ${created.stderr}`);
  return (onlyJson(created) as { key: string }).key;
}

/** A CLI command that printed exactly one JSON value on stdout: that value. */
export function onlyJson(output: Output): unknown {
  const lines = output.stdout.split('\n').filter((line) => line.trim() !== '');
  if (lines.length !== 1) throw new Error(`expected one line of JSON on stdout, got:\n${output.stdout}`);
  return JSON.parse(lines[0] ?? '');
}

export interface ServerProcess {
  readonly child: ChildProcess;
  /** The base URL the banner names, e.g. `https://localhost:40123`. */
  readonly url: string;
  readonly port: number;
  /** Everything on stderr up to and including the banner (or the `--json` line). */
  readonly banner: string;
  /** With `serve --json`: the object printed on stderr. */
  readonly info: { url: string; demoKey: string | null; certFile: string | null } | undefined;
  stdout(): string;
  stderr(): string;
  /** Every line on stdout, parsed: the server's structured log. */
  logs(): Record<string, unknown>[];
  /** Sends `signal` (SIGTERM by default) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<Output>;
  readonly closed: Promise<Output>;
}

const SERVING = /^Pricepoint is serving (https?:\/\/\S+)\/api\/v1\/$/m;

/**
 * Starts `pricepoint ARGS` (a `serve` command) and waits for its banner on stderr: the text one, or
 * the JSON object with `--json`. Rejects with the output so far when the process ends first.
 */
export async function startServer(
  args: readonly string[],
  settings: Settings,
  options: { cwd?: string; timeoutMs?: number } = {},
): Promise<ServerProcess> {
  const spawned = spawnTracked(process.execPath, [BIN, ...args], cliEnv(settings), options.cwd);
  const json = args.includes('--json');
  let ended: Output | undefined;
  spawned.closed.then(
    (output) => {
      ended = output;
    },
    () => {},
  );
  // The banner is written with one write of a few hundred bytes, which a pipe delivers whole.
  const found = await waitUntil(
    () => {
      const err = spawned.stderr();
      if (json) {
        const end = err.indexOf('\n');
        if (end >= 0)
          return { banner: err.slice(0, end + 1), url: String(JSON.parse(err.slice(0, end)).url) };
      } else {
        const match = SERVING.exec(err);
        if (match?.[1] !== undefined) return { banner: err, url: match[1] };
      }
      if (ended !== undefined) {
        throw new Error(
          `pricepoint ${args.join(' ')} ended (${ended.code ?? ended.signal}) before its banner\nstdout: ${ended.stdout}\nstderr: ${ended.stderr}`,
        );
      }
      return undefined;
    },
    options.timeoutMs ?? 30_000,
    `the banner of pricepoint ${args.join(' ')}`,
  ).catch((error: unknown) => {
    spawned.child.kill('SIGKILL');
    throw error;
  });
  const port = Number(new URL(found.url).port);
  return {
    child: spawned.child,
    url: found.url,
    port,
    banner: found.banner,
    info: json ? JSON.parse(found.banner) : undefined,
    stdout: spawned.stdout,
    stderr: spawned.stderr,
    logs: () => jsonLines(spawned.stdout()),
    async stop(signal = 'SIGTERM') {
      if (spawned.child.exitCode === null && spawned.child.signalCode === null) spawned.child.kill(signal);
      return spawned.closed;
    },
    closed: spawned.closed,
  };
}

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

/** An HTTPS client that trusts exactly the server's certificate file, for the name `localhost`. */
export function httpsClient(certFile: string) {
  const agent = new Agent({ connect: { ca: readFileSync(certFile), servername: 'localhost' } });
  agents.add(agent);
  return {
    async get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
      const response = await request(url, { method: 'GET', headers, dispatcher: agent });
      return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
    },
    async send(
      method: 'PUT' | 'POST' | 'PATCH' | 'DELETE',
      url: string,
      headers: Record<string, string> = {},
      body?: string,
    ): Promise<Answer> {
      const response = await request(url, { method, headers, body, dispatcher: agent });
      return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
    },
    async close(): Promise<void> {
      agents.delete(agent);
      await agent.close();
    },
  };
}

/** A raw TLS connection, for requests an HTTP client cannot hold half-sent. */
export interface RawConnection {
  readonly socket: TLSSocket;
  /** Everything received so far. */
  received(): string;
  /** Resolves when the server has closed the connection. */
  readonly ended: Promise<void>;
}

export function rawTls(port: number, certFile: string): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    // 127.0.0.1, where the server listens by default; the certificate names it as well as localhost.
    const socket = tlsConnect({
      host: '127.0.0.1',
      port,
      servername: 'localhost',
      ca: readFileSync(certFile),
    });
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      received += chunk;
    });
    const ended = new Promise<void>((done) => socket.once('close', () => done()));
    socket.once('error', reject);
    socket.once('secureConnect', () => {
      socket.removeListener('error', reject);
      socket.on('error', () => {}); // a reset shows as an early `ended` with a partial answer
      resolve({ socket, received: () => received, ended });
    });
  });
}

/**
 * What a new connection to `port` gets: `refused` (refused, or reset before TLS was set up: a
 * connection the kernel queued but the server never took), or the status of `GET /healthz` on it.
 */
export async function probe(port: number, certFile: string): Promise<'refused' | number> {
  let connection: RawConnection;
  try {
    connection = await rawTls(port, certFile);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EPIPE') return 'refused';
    throw error;
  }
  connection.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
  const timer = setTimeout(() => connection.socket.destroy(), 10_000);
  await connection.ended;
  clearTimeout(timer);
  const status = /^HTTP\/1\.1 (\d{3}) /.exec(connection.received())?.[1];
  if (status === undefined) throw new Error(`no HTTP answer on a new connection: ${connection.received()}`);
  return Number(status);
}
