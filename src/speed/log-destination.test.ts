import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { batchedDestination } from './log-destination.js';

const dir = mkdtempSync(join(tmpdir(), 'pricepoint-log-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A fresh file to log into, its descriptor, and a reader of what reached it. */
function logFile(name: string) {
  const path = join(dir, name);
  const fd = openSync(path, 'w');
  const read = () => readFileSync(path, 'utf8');
  /** What reached the file once it holds `expected`, or after 5 s (a write is asynchronous). */
  const settled = async (expected: string) => {
    for (let waited = 0; read() !== expected && waited < 5000; waited += 10) await sleep(10);
    return read();
  };
  return { fd, read, settled, close: () => closeSync(fd) };
}

describe('the batched log destination', () => {
  test('holds lines until a batch is full, then writes them whole and in order', async () => {
    const file = logFile('batch.log');
    const log = batchedDestination({ fd: file.fd, batchBytes: 100, everyMs: 60_000 });
    log.write('{"n":1}\n');
    log.write('{"n":2}\n');
    await sleep(50);
    assert.equal(file.read(), '', 'a batch that is not full waits');
    const lines = Array.from({ length: 20 }, (_, i) => `{"n":${i + 3}}\n`);
    for (const line of lines) log.write(line);
    const full = ['{"n":1}\n', '{"n":2}\n', ...lines.slice(0, 11)].join('');
    assert.equal(await file.settled(full), full, 'the first full batch, and nothing after it');
    log.flush();
    const all = ['{"n":1}\n', '{"n":2}\n', ...lines].join('');
    assert.equal(await file.settled(all), all);
    log.close();
    file.close();
  });

  test('writes what it holds within its interval, and at once after close', async () => {
    const file = logFile('interval.log');
    const log = batchedDestination({ fd: file.fd, batchBytes: 1 << 20, everyMs: 20 });
    log.write('first\n');
    assert.equal(await file.settled('first\n'), 'first\n');
    log.close();
    log.write('after close\n');
    assert.equal(await file.settled('first\nafter close\n'), 'first\nafter close\n');
    file.close();
  });

  test('lines beyond ASCII, and a line longer than a batch, arrive whole, in UTF-8 and in order', async () => {
    const file = logFile('wide.log');
    const log = batchedDestination({ fd: file.fd, batchBytes: 64, everyMs: 60_000 });
    const lines = [
      '{"url":"/caf\u00e9"}\n',
      `{"wide":"${'\u20ac\u{1f600}'.repeat(40)}"}\n`,
      '{"lone":"\ud800"}\n',
      `{"long":"${'x'.repeat(500)}"}\n`,
      '{"last":"\u00fc"}\n',
    ];
    for (const line of lines) log.write(line);
    log.flush();
    // A lone surrogate has no UTF-8 form: it is written as U+FFFD, as Buffer.from writes it.
    const all = lines.join('').replace('\ud800', '\ufffd');
    assert.equal(await file.settled(all), all);
    log.close();
    file.close();
  });

  test('a process that exits writes every line pino was given, in order', () => {
    const file = join(dir, 'exit.log');
    const module = fileURLToPath(new URL('./log-destination.ts', import.meta.url));
    // The child logs 5,000 lines through pino and exits at once, well inside one interval.
    const script = `
      import { openSync } from 'node:fs';
      import { pino } from 'pino';
      import { batchedDestination } from ${JSON.stringify(module)};
      const log = pino({}, batchedDestination({ fd: openSync(${JSON.stringify(file)}, 'w') }));
      for (let i = 0; i < 5000; i++) log.info({ i }, 'line');
      process.exit(0);
    `;
    execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
    });
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    assert.equal(lines.length, 5000);
    for (const [i, line] of lines.entries()) assert.equal(JSON.parse(line).i, i);
  });

  test('pino writes through it as through any destination', async () => {
    const file = logFile('pino.log');
    const destination = batchedDestination({ fd: file.fd });
    const log = pino({ base: null, timestamp: false }, destination);
    log.info({ reqId: 'a' }, 'request');
    log.flush();
    const line = '{"level":30,"reqId":"a","msg":"request"}\n';
    assert.equal(await file.settled(line), line);
    destination.close();
    file.close();
  });
});
