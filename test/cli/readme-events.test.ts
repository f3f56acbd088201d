/**
 * docs/using-the-api.md "Told when prices arrive: an event loop and a webhook receiver" run as written, each
 * block as its own Node program in the repository folder (where `@pricepoint/client` resolves),
 * against a real `pricepoint serve --dev-data`: an upload of a day of NO1 prices reaches the event
 * loop and, signed, the webhook receiver, which also refuses a forged delivery. Runs the compiled
 * CLI and client: `npm run build` first.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { DEMO_API_KEY } from '../../src/dev-data/dev-data.js';
import {
  cleanUp,
  httpsClient,
  operatorKey,
  REPO,
  type ServerProcess,
  startServer,
  tempDir,
  waitUntil,
} from '../helpers/process.js';

const page = readFileSync(join(REPO, 'docs', 'using-the-api.md'), 'utf8');
const section =
  page.split('## Told when prices arrive: an event loop and a webhook receiver')[1]?.split('\n## ')[0] ?? '';
const blocks = [...section.matchAll(/```js\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');

/** A block of docs/using-the-api.md run as an ES module in the repository folder, left running; `after` stops it. */
interface Program {
  output(): string;
  readonly child: ChildProcess;
}
const programs: Program[] = [];
function run(code: string, env: Record<string, string>): Program {
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
    cwd: REPO,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const program = { output: () => output, child };
  programs.push(program);
  return program;
}

/** Waits until the program's output matches `pattern`; fails with the output when it ends first. */
function outputOf(program: Program, pattern: RegExp, what: string): Promise<string> {
  return waitUntil(
    () => {
      const match = pattern.exec(program.output());
      if (match) return match[0];
      if (program.child.exitCode !== null)
        throw new Error(`the program ended before ${what}: ${program.output()}`);
      return undefined;
    },
    60_000,
    what,
  );
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address !== null ? address.port : 0;
}

/** Every quarter hour of a January day in Oslo (UTC+1), as the CSV `pricepoint import` reads. */
function januaryDayCsv(date: string, price: number): string {
  const rows = Array.from({ length: 96 }, (_, n) => {
    const time = `${String(Math.floor(n / 4)).padStart(2, '0')}:${String((n % 4) * 15).padStart(2, '0')}`;
    return `${date}T${time}:00+01:00,${price + n / 100}`;
  });
  return `start,price\n${rows.join('\n')}\n`;
}

describe('docs/using-the-api.md: the event loop and the webhook receiver', () => {
  let server: ServerProcess;
  let admin: string;
  let certFile: string;
  let api: ReturnType<typeof httpsClient>;

  before(async () => {
    assert.equal(blocks.length, 2, 'the section has an event loop block and a receiver block');
    const dataDir = await tempDir('pricepoint-readme-events-');
    const settings = {
      PRICEPOINT_DATA_DIR: dataDir,
      PRICEPOINT_KEY_SECRET: 'readme-events-test-key-secret-0123456789',
      // The receiver listens on loopback over plain HTTP.
      PRICEPOINT_WEBHOOK_ALLOW_PRIVATE: 'true',
      PRICEPOINT_WEBHOOK_ALLOW_HTTP: 'true',
    };
    admin = await operatorKey(settings);
    server = await startServer(['serve', '--dev-data'], settings);
    certFile = join(dataDir, 'tls', 'localhost-cert.pem');
    api = httpsClient(certFile);
  });
  after(async () => {
    for (const { child } of programs) {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
    }
    await cleanUp();
  });

  const upload = async (date: string, price: number) => {
    const answer = await api.send(
      'PUT',
      `${server.url}/api/v1/series/NO1/prices`,
      { 'x-api-key': admin, 'content-type': 'text/csv' },
      januaryDayCsv(date, price),
    );
    assert.equal(answer.status, 200, answer.text);
  };

  test('the event loop prints the day a price upload publishes, read back whole', async () => {
    const loop = run(blocks[0] ?? '', {
      PRICEPOINT_URL: server.url,
      PRICEPOINT_API_KEY: DEMO_API_KEY,
      NODE_EXTRA_CA_CERTS: certFile,
    });
    await outputOf(loop, /^waiting for NO1 prices$/m, 'the stream to open');
    await upload('2031-01-15', 40);
    await outputOf(loop, /^day\.published NO1 2031-01-15 96 prices$/m, 'the event and the day read back');
    await upload('2031-01-15', 41);
    await outputOf(loop, /^day\.revised NO1 2031-01-15 96 prices$/m, 'the revision');
    assert.ok(!loop.output().includes(DEMO_API_KEY), 'the loop prints no key');
    assert.equal(loop.child.exitCode, null, 'the loop keeps waiting for more');
  });

  test('the receiver verifies the signed delivery and refuses a forged one', async () => {
    const port = await freePort();
    const registered = await api.send(
      'POST',
      `${server.url}/api/v1/webhooks`,
      { 'x-api-key': admin, 'content-type': 'application/json' },
      JSON.stringify({
        url: `http://127.0.0.1:${port}/pricepoint`,
        events: ['day.published'],
        symbols: ['NO1'],
      }),
    );
    assert.equal(registered.status, 201, registered.text);
    const { id, secret } = JSON.parse(registered.text) as { id: string; secret: string };
    const receiver = run(blocks[1] ?? '', { PORT: String(port), PRICEPOINT_WEBHOOK_SECRET: secret });

    // A delivery signed with another secret, sent as soon as the receiver listens.
    const forged = JSON.stringify({
      id: 'evt_000000009999',
      type: 'day.published',
      time: '2031-01-16T12:00:00.000Z',
      data: { symbol: 'NO1', date: '2031-01-17', timezone: 'Europe/Oslo', intervals: 96, etag: '"x"' },
    });
    const forgedHeaders = {
      'content-type': 'application/json',
      'webhook-id': 'evt_000000009999',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': `v1,${Buffer.alloc(32, 7).toString('base64')}`,
    };
    let status: number | undefined;
    const deadline = Date.now() + 60_000;
    while (status === undefined) {
      try {
        const answer = await request(`http://127.0.0.1:${port}/pricepoint`, {
          method: 'POST',
          headers: forgedHeaders,
          body: forged,
        });
        await answer.body.text();
        status = answer.statusCode;
      } catch (error) {
        if (Date.now() > deadline || receiver.child.exitCode !== null) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    assert.equal(status, 400, 'a forged delivery is refused');
    await outputOf(receiver, /^refused: No v1 signature matches/m, 'the refusal');

    await upload('2031-01-16', 50);
    const line = await outputOf(
      receiver,
      /^evt_\d+ day\.published NO1 2031-01-16$/m,
      'the verified delivery of the uploaded day',
    );
    assert.ok(!receiver.output().includes('2031-01-17'), 'the forged event was never accepted');
    // The server logs the receiver's 204 as delivered (just after the receiver answered).
    const eventId = line.split(' ')[0];
    let logged: { eventId: string; state: string; status: number | null }[] = [];
    for (let tries = 0; tries < 300; tries++) {
      const answer = await api.get(`${server.url}/api/v1/webhooks/${id}/deliveries`, { 'x-api-key': admin });
      logged = JSON.parse(answer.text) as typeof logged;
      if (logged.some((d) => d.eventId === eventId && d.state === 'delivered')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.deepEqual(
      logged.map((d) => [d.eventId, d.state, d.status]),
      [[eventId, 'delivered', 204]],
    );
  });
});
