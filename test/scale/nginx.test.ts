/**
 * The README's nginx example ("Running several instances") in front of three instances on one PostgreSQL and
 * one Redis, run as written but for its ports and certificate: requests are spread over the three,
 * limits stay exact through the proxy, and /metrics is closed to the outside.
 *
 * The instances listen on port 0 and report the port the kernel gave them. nginx cannot: its port
 * is picked free, and if another test takes it before nginx binds it, nginx is started again on
 * another one.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { generate } from 'selfsigned';
import { Agent, request } from 'undici';
import {
  cleanUp,
  onlyJson,
  REPO,
  runCli,
  type ServerProcess,
  startServer,
  waitUntil,
} from '../helpers/process.js';
import { type ScaleEnvironment, scaleEnvironment, scaleSkipReason } from '../helpers/scale.js';
import { describeOrSkip } from '../helpers/skip.js';

const NGINX = '/usr/sbin/nginx';
const LIMIT = 30;

/** A port that was free a moment ago (nginx must be told one; see `startNginx` for the race). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address !== null ? address.port : 0;
}

function readmeNginx(): string {
  const page = readFileSync(join(REPO, 'docs', 'operating.md'), 'utf8');
  const section = page.split('## Running several instances')[1]?.split('\n## ')[0] ?? '';
  const block = /```nginx\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block, 'docs/operating.md has an nginx block under "Running several instances"');
  return block;
}

/**
 * Starts nginx on `conf` and waits until `base` answers /healthz through it, or until it exits (a
 * port taken meanwhile): then `ok` is false with what nginx said.
 */
async function startNginx(
  conf: string,
  dir: string,
  base: string,
  agent: Agent,
): Promise<{ ok: true; child: ChildProcess } | { ok: false; errors: string }> {
  const child = spawn(NGINX, ['-p', dir, '-c', conf, '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr?.on('data', (chunk) => {
    errors += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let i = 0; ; i++) {
    try {
      await request(`${base}/healthz`, { dispatcher: agent }).then((r) => r.body.dump());
      return { ok: true, child };
    } catch (error) {
      if (child.exitCode !== null || child.signalCode !== null) {
        await exited;
        const log = existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '';
        return { ok: false, errors: `${errors} ${log}` };
      }
      if (i > 100) {
        child.kill('SIGKILL');
        await exited;
        throw new Error(`nginx did not answer: ${errors} ${error}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

const skip = await scaleSkipReason(
  'the nginx test',
  existsSync(NGINX) ? [] : [`${NGINX} is not installed (apt-get install nginx-light)`],
);

describeOrSkip('the nginx example of docs/operating.md in front of three instances', { skip }, () => {
  const servers: ServerProcess[] = [];
  let nginx: ChildProcess | undefined;
  let base: string;
  let agent: Agent;
  let env: ScaleEnvironment;
  let settings: Record<string, string>;

  before(async () => {
    env = await scaleEnvironment('nginx', { limit: LIMIT });
    const dir = env.dir;
    settings = { ...env.settings, PRICEPOINT_INSECURE_HTTP: 'true', PRICEPOINT_TRUST_PROXY: '127.0.0.1' };
    assert.equal((await runCli(['migrate'], settings)).code, 0, '`pricepoint migrate` succeeds');
    for (let i = 0; i < 3; i++) {
      // PRICEPOINT_PORT=0 (the helper's default): the kernel picks a free port, the banner names it.
      servers.push(await startServer(['serve'], { ...settings, PRICEPOINT_PORT: '0' }));
    }
    const ports = servers.map((s) => s.port);

    const pair = await generate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }] }],
    });
    writeFileSync(join(dir, 'cert.pem'), pair.cert);
    writeFileSync(join(dir, 'key.pem'), pair.private);
    agent = new Agent({ connect: { ca: pair.cert, servername: 'localhost' } });
    for (let attempt = 1; ; attempt++) {
      const listen = await freePort();
      const site = readmeNginx()
        .replace('listen 443 ssl http2;', `listen 127.0.0.1:${listen} ssl http2;`)
        .replace('/etc/ssl/prices.example.com.pem', join(dir, 'cert.pem'))
        .replace('/etc/ssl/prices.example.com.key', join(dir, 'key.pem'))
        .replace('127.0.0.1:8081', `127.0.0.1:${ports[0]}`)
        .replace('127.0.0.1:8082', `127.0.0.1:${ports[1]}`)
        .replace('127.0.0.1:8083', `127.0.0.1:${ports[2]}`);
      const conf = join(dir, 'nginx.conf');
      writeFileSync(
        conf,
        `pid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;\nevents {}\nhttp {\n` +
          `access_log off;\nclient_body_temp_path ${dir}/body;\nproxy_temp_path ${dir}/proxy;\n` +
          `fastcgi_temp_path ${dir}/fastcgi;\nuwsgi_temp_path ${dir}/uwsgi;\nscgi_temp_path ${dir}/scgi;\n` +
          `${site}}\n`,
      );
      const started = await startNginx(conf, dir, `https://localhost:${listen}`, agent);
      if (started.ok) {
        nginx = started.child;
        base = `https://localhost:${listen}`;
        break;
      }
      // Someone took the port between freePort() and nginx's bind: try another, a few times.
      if (!/Address already in use/.test(started.errors) || attempt >= 5) {
        throw new Error(`nginx did not start: ${started.errors}`);
      }
    }
  });

  after(async () => {
    if (nginx !== undefined && nginx.exitCode === null && nginx.signalCode === null) {
      const exited = new Promise((resolve) => nginx?.once('exit', resolve));
      nginx.kill('SIGTERM');
      // nginx stops its workers first; SIGKILL if it has not gone in 5 s.
      const timer = setTimeout(() => nginx?.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    await agent?.close();
    await cleanUp();
    await env?.drop();
  });

  const get = async (path: string, headers: Record<string, string> = {}) => {
    const response = await request(`${base}${path}`, { headers, dispatcher: agent });
    return { status: response.statusCode, text: await response.body.text() };
  };

  test('requests reach all three instances, and limits stay exact through the proxy', async () => {
    const key = (
      onlyJson(
        await runCli(['keys', 'create', '--tier', 'exact', '--name', 'nginx', '--json'], settings),
      ) as {
        key: string;
      }
    ).key;
    const statuses = await Promise.all(
      Array.from({ length: LIMIT * 3 }, () =>
        get('/api/v1/series', { 'x-api-key': key }).then((a) => a.status),
      ),
    );
    assert.deepEqual(
      { ok: statuses.filter((s) => s === 200).length, limited: statuses.filter((s) => s === 429).length },
      { ok: LIMIT, limited: LIMIT * 2 },
      'exactly the limit succeeds through nginx',
    );
    // Each instance logs a request after answering it, so its line can reach the test after the
    // answer does: wait for all of them before counting per instance.
    const served = await waitUntil(
      () => {
        const counts = servers.map(
          (s) => s.logs().filter((line) => line.msg === 'request' && line.url === '/api/v1/series').length,
        );
        return counts.reduce((a, b) => a + b, 0) >= LIMIT * 3 ? counts : undefined;
      },
      5_000,
      `the log lines of all ${LIMIT * 3} requests`,
    );
    assert.ok(
      served.every((n) => n > 0),
      `every instance served some: ${served.join(', ')}`,
    );
    // nginx passes the client's address on in X-Forwarded-For, and the instances believe it.
    const forwarded = await get('/api/v1/usage', { 'x-api-key': key, 'x-forwarded-for': '203.0.113.7' });
    assert.equal(forwarded.status, 200, forwarded.text);
    // The log line is written after the answer; wait for it to arrive on the instance's stdout.
    const ips = await waitUntil(
      () => {
        const found = servers.flatMap((s) =>
          s
            .logs()
            .filter((l) => l.url === '/api/v1/usage')
            .map((l) => l.ip),
        );
        return found.length > 0 ? found : undefined;
      },
      5_000,
      'the log line of the forwarded request',
    );
    assert.deepEqual(ips, ['203.0.113.7'], 'the instance logs the forwarded client address');
  });

  test('an event stream through nginx receives a day published on another instance at once', async () => {
    const key = (
      onlyJson(
        await runCli(['keys', 'create', '--tier', 'load', '--name', 'stream', '--json'], settings),
      ) as {
        key: string;
      }
    ).key;
    const series = await runCli(
      [
        ...['series', 'upsert', 'NGX', '--name', 'Through nginx', '--kind', 'electricity'],
        ...['--currency', 'EUR', '--unit', 'MWh', '--timezone', 'Europe/Oslo', '--resolution', 'PT1H'],
      ],
      settings,
    );
    assert.equal(series.code, 0, series.stderr);
    const controller = new AbortController();
    const stream = await request(`${base}/api/v1/events?symbols=NGX`, {
      headers: { 'x-api-key': key },
      dispatcher: agent,
      signal: controller.signal,
    });
    try {
      assert.equal(stream.statusCode, 200);
      assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
      let received = '';
      const published = new Promise<string>((resolve, reject) => {
        stream.body.setEncoding('utf8');
        stream.body.on('data', (chunk: string) => {
          received += chunk;
          if (/event: day\.published\n/.test(received)) resolve(received);
        });
        stream.body.on('error', reject);
        stream.body.on('end', () => reject(new Error(`the stream ended without the event: ${received}`)));
      });
      // The opening lines come through before any event: nginx does not buffer the stream.
      await waitUntil(() => (received.includes('retry:') ? true : undefined), 10_000, 'the stream to open');
      // A whole local day (24 hours of 2026-11-20 in Oslo, UTC+1), written by the CLI: a process
      // of its own, so the event reaches the stream's instance through the shared database.
      const csv = join(env.dir, 'ngx-day.csv');
      const rows = Array.from({ length: 24 }, (_, h) => {
        const start = new Date(Date.UTC(2026, 10, 19, 23 + h)).toISOString();
        return `NGX,${start},${40 + h}.5`;
      });
      writeFileSync(csv, ['symbol,start,price', ...rows].join('\n'));
      const imported = await runCli(['import', csv], settings);
      assert.equal(imported.code, 0, imported.stderr);
      const text = await published;
      const data = /event: day\.published\ndata: (.*)\n/.exec(text)?.[1];
      assert.ok(data, text);
      const event = JSON.parse(data) as {
        type: string;
        data: { symbol: string; date: string; intervals: number };
      };
      assert.deepEqual(
        {
          type: event.type,
          symbol: event.data.symbol,
          date: event.data.date,
          intervals: event.data.intervals,
        },
        { type: 'day.published', symbol: 'NGX', date: '2026-11-20', intervals: 24 },
      );
    } finally {
      controller.abort();
      await stream.body.dump().catch(() => {});
    }
  });

  test('/metrics is refused from outside the allowed network, /readyz answers', async () => {
    assert.equal((await get('/metrics')).status, 403, '/metrics is refused from outside');
    const ready = await get('/readyz');
    assert.equal(ready.status, 200, ready.text);
    assert.equal(JSON.parse(ready.text).status, 'ready', '/readyz says ready');
  });
});
