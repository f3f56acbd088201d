/**
 * `npm start` and `pricepoint serve` as an operator meets them: a real process on a fresh data folder,
 * real HTTPS with the certificate it generated, its banner, its log, restarts, SIGTERM and bad
 * settings (docs/settings.md, docs/keys-and-tiers.md).
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  type Answer,
  cleanUp,
  httpsClient,
  onlyJson,
  probe,
  REPO,
  rawTls,
  runCli,
  runCommand,
  type ServerProcess,
  startServer,
  tempDir,
  waitUntil,
} from '../helpers/process.js';

after(cleanUp);

const KEY_LIKE = /pp_(?:live|test|demo)_[0-9A-Za-z]+/g;
const TODAY = '/api/v1/prices/today';

interface DaySeries {
  readonly symbol: string;
  readonly date: string;
  readonly prices: readonly unknown[];
}

/** The demo key as README.md documents it; every mention must agree. */
function readmeDemoKey(): string {
  const mentions = readFileSync(join(REPO, 'README.md'), 'utf8').match(/pp_demo_[0-9A-Za-z]+/g) ?? [];
  assert.ok(mentions.length > 0, 'README.md names the demo key');
  assert.equal(new Set(mentions).size, 1, `README.md names one demo key, not ${[...new Set(mentions)]}`);
  return mentions[0]!;
}

function problemCode(answer: Answer): unknown {
  return (JSON.parse(answer.text) as { code?: unknown }).code;
}

/** The certificate a TLS connection to `port` is served with. */
async function servedCertificate(port: number, certFile: string): Promise<X509Certificate> {
  const connection = await rawTls(port, certFile);
  const certificate = connection.socket.getPeerX509Certificate();
  connection.socket.destroy();
  assert.ok(certificate, 'the server presents a certificate');
  return certificate;
}

describe('npm start (serve --dev-data) on a fresh clone', () => {
  // Like `npm start` in a fresh clone: no PRICEPOINT_DATA_DIR, so the data folder is ./.pricepoint.
  let cwd: string;
  let dataDir: string;
  let certFile: string;
  let server: ServerProcess;
  let client: ReturnType<typeof httpsClient>;
  let liveKey: { id: string; key: string };
  let no1BeforeRestart: DaySeries;
  const demoKey = readmeDemoKey();
  const cli = (...args: string[]) => runCli(args, {}, { cwd });

  before(async () => {
    cwd = await tempDir();
    dataDir = join(cwd, '.pricepoint');
    certFile = join(dataDir, 'tls', 'localhost-cert.pem');
    server = await startServer(['serve', '--dev-data'], {}, { cwd });
    client = httpsClient(certFile);
  });

  test('creates ./.pricepoint with a migrated SQLite database and a localhost certificate', async () => {
    assert.ok(statSync(dataDir).isDirectory(), `${dataDir} is a folder`);
    const database = readFileSync(join(dataDir, 'pricepoint.db'));
    assert.equal(database.subarray(0, 16).toString('latin1'), 'SQLite format 3\0');
    const migrate = await cli('migrate', '--json');
    assert.equal(migrate.code, 0, migrate.stderr);
    assert.deepEqual(onlyJson(migrate), { applied: [] }, 'the start already applied every migration');

    const certificate = new X509Certificate(readFileSync(certFile));
    assert.equal(certificate.checkHost('localhost'), 'localhost');
    const valid = `${certificate.validFrom} to ${certificate.validTo}`;
    assert.ok(Date.parse(certificate.validFrom) <= Date.now(), valid);
    assert.ok(Date.now() < Date.parse(certificate.validTo), valid);
    assert.equal(statSync(join(dataDir, 'tls', 'localhost-key.pem')).mode & 0o077, 0, 'the key is private');
    const served = await servedCertificate(server.port, certFile);
    assert.equal(served.fingerprint256, certificate.fingerprint256, 'HTTPS is served with that certificate');
  });

  test('git ignores the default data folder', async () => {
    const ignored = await runCommand('git', ['check-ignore', '-q', '.pricepoint/pricepoint.db'], process.env);
    assert.equal(ignored.code, 0, 'git check-ignore .pricepoint/pricepoint.db');
  });

  test('the banner prints the URL, the demo key written in README.md and a curl line', () => {
    assert.match(server.url, /^https:\/\/localhost:\d+$/);
    assert.notEqual(server.port, 0, 'the URL names the port the kernel gave, not 0');
    assert.match(server.banner, new RegExp(`^Pricepoint is serving ${server.url}/api/v1/$`, 'm'));
    assert.match(server.banner, new RegExp(`^Demo key: ${demoKey}$`, 'm'));
    assert.match(server.banner, /^\s+curl .+$/m);
  });

  test('the printed curl line works as printed: 200 with the day prices of every series', async () => {
    const line = /^\s+(curl .+)$/m.exec(server.banner)?.[1];
    assert.ok(line, `a curl line in the banner:\n${server.banner}`);
    const before = server.logs().length;
    const curl = await runCommand('sh', ['-c', line], process.env, { cwd });
    assert.equal(curl.code, 0, curl.stderr);
    const body = JSON.parse(curl.stdout) as { series: DaySeries[] };
    assert.ok(Array.isArray(body.series) && body.series.length > 0, curl.stdout);
    const no1 = body.series.find((s) => s.symbol === 'NO1');
    assert.ok(no1 && no1.prices.length > 0, 'NO1 has prices today');
    no1BeforeRestart = no1;
    const logged = await waitUntil(() => server.logs()[before], 5_000, 'the log line of the curl request');
    assert.equal(logged.status, 200);
    assert.equal(logged.tier, 'demo');
  });

  test('the curl line of README.md works from the folder npm start ran in', async () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const block = /```sh\n(curl [^`]*?)\n```/.exec(readme)?.[1];
    assert.ok(block, 'README.md shows a curl command');
    const command = block.replace('https://localhost:8443', server.url);
    assert.notEqual(command, block, 'the README command uses the default port 8443');
    const curl = await runCommand('sh', ['-c', `${command} --fail-with-body`], process.env, { cwd });
    assert.equal(curl.code, 0, curl.stdout + curl.stderr);
    assert.ok((JSON.parse(curl.stdout) as { series: unknown[] }).series.length > 0, curl.stdout);
  });

  test('/healthz and /readyz answer 200 without a key', async () => {
    const health = await client.get(`${server.url}/healthz`);
    assert.equal(health.status, 200, health.text);
    // The tz release depends on what the machine has: at least the shipped copy's, from any source.
    const body = JSON.parse(health.text) as { status: string; tz: { release: string; source: string } };
    assert.equal(body.status, 'ok');
    assert.match(body.tz.release, /^\d{4}[a-z]+$/);
    assert.ok(body.tz.release >= '2026f', `tz release ${body.tz.release}`);
    assert.ok(['setting', 'system', 'shipped', 'icu'].includes(body.tz.source), body.tz.source);
    const ready = await client.get(`${server.url}/readyz`);
    assert.equal(ready.status, 200, ready.text);
    assert.equal((JSON.parse(ready.text) as { status: string }).status, 'ready');
  });

  test('the demo key works in both header forms', async () => {
    const forms: Record<string, string>[] = [
      { 'x-api-key': demoKey },
      { authorization: `Bearer ${demoKey}` },
    ];
    for (const headers of forms) {
      const answer = await client.get(`${server.url}${TODAY}`, headers);
      assert.equal(answer.status, 200, answer.text);
    }
  });

  test('every request writes exactly one JSON log line with reqId, keyId, tier, status and latencyMs', async () => {
    const created = await cli('keys', 'create', '--tier', 'free', '--name', 'log test', '--json');
    assert.equal(created.code, 0, created.stderr);
    liveKey = onlyJson(created) as { id: string; key: string };
    const listed = await cli('keys', 'list', '--json');
    const demoId = (onlyJson(listed) as { id: string; tier: string }[]).find((k) => k.tier === 'demo')?.id;
    assert.ok(demoId, 'the data set holds the demo key');

    const requests: {
      path: string;
      headers?: Record<string, string>;
      keyId: string | null;
      tier: string | null;
    }[] = [
      { path: '/healthz', keyId: null, tier: null },
      { path: '/readyz', keyId: null, tier: null },
      { path: TODAY, headers: { 'x-api-key': demoKey }, keyId: demoId, tier: 'demo' },
      { path: TODAY, headers: { authorization: `Bearer ${liveKey.key}` }, keyId: liveKey.id, tier: 'free' },
      { path: TODAY, keyId: null, tier: null },
      { path: `${TODAY}?api_key=${liveKey.key}`, keyId: null, tier: null },
      {
        path: TODAY,
        headers: { 'x-api-key': `${liveKey.key.slice(0, -1)}${liveKey.key.endsWith('x') ? 'y' : 'x'}` },
        keyId: null,
        tier: null,
      },
      { path: '/nowhere', keyId: null, tier: null },
    ];
    const answered: { id: string; status: number; keyId: string | null; tier: string | null }[] = [];
    for (const r of requests) {
      const answer = await client.get(`${server.url}${r.path}`, r.headers);
      const id = answer.headers['x-request-id'];
      assert.equal(typeof id, 'string', `${r.path} carries x-request-id`);
      answered.push({ id: id as string, status: answer.status, keyId: r.keyId, tier: r.tier });
    }
    assert.deepEqual(
      answered.map((a) => a.status),
      [200, 200, 200, 200, 401, 401, 401, 404],
    );

    const lines = await waitUntil(
      () => {
        const logs = server.logs();
        return answered.every((a) => logs.some((l) => l.reqId === a.id)) ? logs : undefined;
      },
      5_000,
      'a log line for every request',
    );
    for (const a of answered) {
      const mine = lines.filter((l) => l.reqId === a.id);
      assert.equal(mine.length, 1, `one line for request ${a.id}`);
      const line = mine[0]!;
      assert.equal(line.status, a.status);
      assert.equal(line.keyId, a.keyId);
      assert.equal(line.tier, a.tier);
      assert.equal(typeof line.latencyMs, 'number');
      assert.ok((line.latencyMs as number) >= 0, `latencyMs ${line.latencyMs}`);
    }
  });

  test('on SIGTERM it exits 0; its whole output has one log line per request and no key but the banner', async () => {
    const output = await server.stop('SIGTERM');
    assert.equal(output.code, 0, output.stderr);
    const requestIds = server
      .logs()
      .map((l) => l.reqId)
      .filter((id) => id !== undefined);
    assert.equal(new Set(requestIds).size, requestIds.length, 'no request is logged twice');

    assert.deepEqual(output.stdout.match(KEY_LIKE), null, 'the log never holds a key');
    for (const line of output.stderr.split('\n')) {
      const keys = line.match(KEY_LIKE) ?? [];
      if (keys.length === 0) continue;
      assert.ok(/^(Demo key: |\s+curl )/.test(line), `only the banner shows a key: ${line}`);
      assert.deepEqual([...new Set(keys)], [demoKey]);
    }
  });

  test('a restart on the same data folder keeps the certificate, the keys and the data', async () => {
    const certBefore = readFileSync(certFile);
    const tlsKeyBefore = readFileSync(join(dataDir, 'tls', 'localhost-key.pem'));
    // Without --dev-data the data set is not loaded again: what it serves is what was kept.
    server = await startServer(['serve'], {}, { cwd });
    assert.deepEqual(readFileSync(certFile), certBefore, 'the certificate is not generated again');
    assert.deepEqual(readFileSync(join(dataDir, 'tls', 'localhost-key.pem')), tlsKeyBefore);
    const served = await servedCertificate(server.port, certFile);
    assert.equal(served.fingerprint256, new X509Certificate(certBefore).fingerprint256);

    const answer = await client.get(`${server.url}${TODAY}?symbols=NO1`, { 'x-api-key': liveKey.key });
    assert.equal(answer.status, 200, 'a key created before the restart still works');
    const [no1] = (JSON.parse(answer.text) as { series: DaySeries[] }).series;
    assert.ok(no1 && no1.prices.length > 0, 'the prices are still there');
    // The same day (unless Oslo's midnight passed in between) comes back with the same prices.
    if (no1.date === no1BeforeRestart.date) assert.deepEqual(no1, no1BeforeRestart);
    const demo = await client.get(`${server.url}${TODAY}`, { 'x-api-key': demoKey });
    assert.equal(demo.status, 401, 'the demo key kept in the folder is refused without --dev-data');
    const stopped = await server.stop();
    assert.equal(stopped.code, 0, stopped.stderr);
  });
});

describe('serve without --dev-data', () => {
  test('has no demo key: serve --json names none and the demo key gets 401', async () => {
    const dataDir = await tempDir();
    const server = await startServer(['serve', '--json'], { PRICEPOINT_DATA_DIR: dataDir });
    assert.deepEqual(server.info, {
      url: server.url,
      demoKey: null,
      certFile: join(dataDir, 'tls', 'localhost-cert.pem'),
    });
    assert.match(server.url, /^https:\/\/localhost:\d+$/);
    const client = httpsClient(join(dataDir, 'tls', 'localhost-cert.pem'));
    const answer = await client.get(`${server.url}${TODAY}`, { 'x-api-key': readmeDemoKey() });
    assert.equal(answer.status, 401);
    assert.equal(problemCode(answer), 'invalid_api_key');
    const listed = await runCli(['keys', 'list', '--json'], { PRICEPOINT_DATA_DIR: dataDir });
    assert.deepEqual(onlyJson(listed), [], 'no key at all');
    await client.close();
    assert.equal((await server.stop()).code, 0);
  });
});

describe('SIGTERM', () => {
  /**
   * A request the server has begun and cannot finish yet: its headers announce a body with
   * `Expect: 100-continue`, and the body is held back. Node writes "100 Continue" in the same turn
   * in which it hands the request to Fastify, so once the client reads it the request is in flight.
   * (No route takes a body yet, so the answer is a 405; what matters is that it is answered.)
   */
  async function requestInFlight(server: ServerProcess, certFile: string) {
    const held = await rawTls(server.port, certFile);
    held.socket.write(
      'POST /healthz HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
        'Expect: 100-continue\r\nContent-Length: 2\r\n\r\n',
    );
    await waitUntil(
      () => (held.received().startsWith('HTTP/1.1 100 Continue\r\n\r\n') ? true : undefined),
      10_000,
      '100 Continue',
    );
    return held;
  }

  async function sigterm(server: ServerProcess) {
    server.child.kill('SIGTERM');
    await waitUntil(() => server.logs().find((l) => l.signal === 'SIGTERM'), 10_000, 'the SIGTERM log line');
  }

  /** The answers on a raw connection, after "100 Continue": status, headers, body. */
  function answers(received: string) {
    const found: { status: number; headers: string; body: string }[] = [];
    const pattern = /HTTP\/1\.1 (\d{3}) [^\r]*\r\n((?:[^\r]+\r\n)*)\r\n/g;
    for (let match = pattern.exec(received); match !== null; match = pattern.exec(received)) {
      const headers = match[2] ?? '';
      const length = Number(/^content-length: (\d+)$/im.exec(headers)?.[1] ?? 0);
      const start = match.index + match[0].length;
      found.push({ status: Number(match[1]), headers, body: received.slice(start, start + length) });
      pattern.lastIndex = start + length;
    }
    return found.filter((a) => a.status !== 100);
  }

  test('lets a request in flight finish, refuses new connections, then exits 0', async () => {
    const dataDir = await tempDir();
    // A grace time below the 5 s keep-alive timeout: a server that kept the drained connection open
    // until it timed out would be killed by the grace timer and exit 1.
    const server = await startServer(['serve', '--json'], {
      PRICEPOINT_DATA_DIR: dataDir,
      PRICEPOINT_SHUTDOWN_GRACE_SECONDS: '4',
    });
    const certFile = server.info!.certFile!;
    const held = await requestInFlight(server, certFile);
    await sigterm(server);

    // New connections: refused once the listener is closed (a connection accepted in the meantime may only get a 503).
    const probes: ('refused' | number)[] = [];
    while (probes.at(-1) !== 'refused' && probes.length < 50) probes.push(await probe(server.port, certFile));
    assert.equal(probes.at(-1), 'refused', `new connections after SIGTERM: ${probes}`);
    assert.ok(
      probes.every((p) => p === 'refused' || p === 503),
      `new connections after SIGTERM: ${probes}`,
    );

    assert.equal(server.child.exitCode, null, 'the server waits for the request in flight');
    held.socket.write('{}');
    const output = await server.closed;
    assert.equal(output.code, 0, output.stderr);
    const [answer, ...more] = answers(held.received());
    assert.ok(answer, `the request in flight was answered: ${JSON.stringify(held.received())}`);
    assert.deepEqual(more, []);
    assert.equal(answer.status, 405);
    const body = JSON.parse(answer.body) as { code: string; requestId: string };
    assert.equal(body.code, 'method_not_allowed');

    const logs = server.logs();
    const signalAt = logs.findIndex((l) => l.signal === 'SIGTERM');
    const requestAt = logs.findIndex((l) => l.reqId === body.requestId);
    assert.ok(signalAt >= 0 && requestAt > signalAt, 'the request finished after the signal');
    assert.equal(logs[requestAt]?.status, 405);
  });

  test('a request that starts after SIGTERM on a connection still open is answered 503', async () => {
    const dataDir = await tempDir();
    const server = await startServer(['serve', '--json'], { PRICEPOINT_DATA_DIR: dataDir });
    const held = await requestInFlight(server, server.info!.certFile!);
    await sigterm(server);
    // The held body, and right behind it on the same connection a new request (HTTP/1.1 pipelining).
    held.socket.write('{}GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    const output = await server.closed;
    assert.equal(output.code, 0, output.stderr);
    const [first, second] = answers(held.received());
    assert.equal(first?.status, 405);
    // Closing the connection after the first answer would do as well as a 503.
    if (second !== undefined) assert.equal(second.status, 503, 'a request after SIGTERM is not served');
  });
});

describe('bad settings stop the start with a message that names the setting', () => {
  /** Runs `serve` with `settings` and checks it stops at once, naming `setting`, without a stack trace. */
  async function refusesToStart(settings: Record<string, string>, setting: string) {
    const started = [false, true].map(async (json) => {
      const args = ['serve', '--dev-data', ...(json ? ['--json'] : [])];
      const output = await runCli(args, { PRICEPOINT_DATA_DIR: await tempDir(), ...settings });
      return { json, output };
    });
    for (const { json, output } of await Promise.all(started)) {
      assert.notEqual(output.code, 0, `exit status of ${JSON.stringify(settings)}`);
      assert.equal(output.signal, null);
      assert.doesNotMatch(output.stderr, /Pricepoint is serving|"url"/, 'no banner');
      assert.doesNotMatch(output.stdout, /listening/i);
      assert.doesNotMatch(output.stderr, /^\s+at /m, 'no stack trace');
      if (json) {
        const { error } = JSON.parse(output.stderr) as { error: { code: string; message: string } };
        assert.equal(error.code, 'invalid_setting');
        assert.ok(error.message.includes(setting), error.message);
      } else {
        assert.match(output.stderr, new RegExp(`^pricepoint: .*${setting}`), output.stderr);
        assert.equal(output.stderr.trim().split('\n').length, 1, `one line: ${output.stderr}`);
      }
    }
  }

  test('PRICEPOINT_PORT=abc', () => refusesToStart({ PRICEPOINT_PORT: 'abc' }, 'PRICEPOINT_PORT'));
  test('PRICEPOINT_CONFIG=/missing.json', () =>
    refusesToStart({ PRICEPOINT_CONFIG: '/missing.json' }, 'PRICEPOINT_CONFIG'));
  test('PRICEPOINT_LOG_LEVEL=loud', () =>
    refusesToStart({ PRICEPOINT_LOG_LEVEL: 'loud' }, 'PRICEPOINT_LOG_LEVEL'));

  test('a config file with a bad tier names the file setting', async () => {
    const dir = await tempDir();
    const file = join(dir, 'pricepoint.yaml');
    writeFileSync(file, 'tiers:\n  free:\n    countPer: everyone\n');
    await refusesToStart({ PRICEPOINT_CONFIG: file }, 'tiers.free.countPer');
  });

  test('an address the machine does not have names PRICEPOINT_HOST', () =>
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): never a local address, and no DNS lookup is involved.
    refusesToStart({ PRICEPOINT_HOST: '192.0.2.1' }, 'PRICEPOINT_HOST'));

  test('a port already in use names PRICEPOINT_PORT', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const address = taken.address();
    assert.ok(address !== null && typeof address === 'object', 'a TCP address');
    try {
      await refusesToStart({ PRICEPOINT_PORT: String(address.port) }, 'PRICEPOINT_PORT');
    } finally {
      taken.close();
    }
  });

  test('a data folder that cannot be created names PRICEPOINT_DATA_DIR', async () => {
    const dir = await tempDir();
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    await refusesToStart({ PRICEPOINT_DATA_DIR: join(file, 'data') }, 'PRICEPOINT_DATA_DIR');
    assert.ok(!existsSync(join(file, 'data')), 'nothing was created');
  });
});
