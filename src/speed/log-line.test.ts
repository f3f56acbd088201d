/**
 * log-line.ts writes the request line itself, through pino's private symbols, because pino's
 * serialiser is slow on the hot path. These tests hold it to pino's public path byte for byte, and
 * show it falls back to that path when pino is set up in a way it does not copy.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { plainLineWriter, type RequestLine } from '../http/pipeline/record.js';
import { epochText, hundredths, quoted, requestLineWriter } from './log-line.js';

/** A synchronous destination that keeps every line written. */
function capture() {
  const lines: string[] = [];
  return { lines, stream: { write: (line: string) => lines.push(line) } };
}

const withoutTime = (line: string) => line.replace(/"time":\d+/, '"time":0');

const LINES: RequestLine[] = [
  {
    reqId: '0b6f1a8e-3c1d-4f6e-9a0b-5d2c7e8f9a10',
    method: 'GET',
    url: '/api/v1/prices/today?symbols=NO1',
    status: 200,
    latencyMs: 0.42,
    keyId: 'k_0123',
    tier: 'free',
    ip: '127.0.0.1',
  },
  {
    reqId: 'a-\u2028-"quoted"-\\',
    method: 'GET',
    url: '/api/v1/prices/today?tz=%22Europe/Oslo%22&x=\u00e9\u{1f600}\u0001',
    status: 304,
    latencyMs: 12,
    keyId: null,
    tier: null,
    ip: '::ffff:10.0.0.1',
  },
];

/** The line as pino's public API writes it: the reference (record.ts `plainLineWriter`). */
function viaPino(log: pino.Logger, line: RequestLine): void {
  log.info(line, 'request');
}

/** The line as a child logger bound to the request id writes it, which Fastify's request log is. */
function viaChild(log: pino.Logger, line: RequestLine): void {
  const { reqId, ...rest } = line;
  log.child({ reqId }).info(rest, 'request');
}

describe('the request line', () => {
  test('is written byte for byte as pino writes it through its public API', () => {
    const direct = capture();
    const reference = capture();
    const logger = pino({}, direct.stream);
    // The writer must take its own way here, not pino's (which would make this test say nothing).
    let children = 0;
    const child = logger.child.bind(logger);
    logger.child = ((...args: Parameters<typeof child>) => {
      children += 1;
      return child(...args);
    }) as typeof logger.child;
    const write = requestLineWriter(logger as unknown as FastifyBaseLogger);
    const log = pino({}, reference.stream);
    for (const line of LINES) {
      write(line);
      viaPino(log, line);
    }
    assert.equal(direct.lines.length, LINES.length);
    assert.equal(children, 0, 'written directly, without a child logger');
    assert.deepEqual(direct.lines.map(withoutTime), reference.lines.map(withoutTime));
  });

  test('matches pino for every ASCII character, number and time it is given', (t) => {
    const direct = capture();
    const reference = capture();
    const write = requestLineWriter(pino({}, direct.stream) as unknown as FastifyBaseLogger);
    const log = pino({}, reference.stream);
    const first = LINES[0] as RequestLine;
    const lines: RequestLine[] = [first, LINES[1] as RequestLine];
    // Every ASCII character in a URL, in an id and in a key id.
    for (let c = 0; c < 0x80; c++) {
      const char = String.fromCharCode(c);
      lines.push(
        { ...first, url: `/api/v1/prices${char}?x=1` },
        { ...first, reqId: char, keyId: `k${char}` },
      );
    }
    // Characters past ASCII, and no key.
    lines.push({ ...first, url: '/api/v1/prices/today?symbols=\u00e9' }, { ...first, ip: '\u2028' });
    lines.push({ ...first, keyId: null, tier: null });
    lines.push({ ...first, ip: '10.0.0.2' }, { ...first, tier: 'pro' }, { ...first, tier: null });
    lines.push({ ...first, method: 'POST' }, { ...first, method: 'HEAD' }, first, first);
    // Statuses and latencies: whole numbers, hundredths, and numbers that take String's way.
    for (const status of [0, 9, 10, 99, 100, 200, 304, 429, 599, 1000, 0x7fffffff, 2 ** 31, -1, 1.5])
      lines.push({ ...first, status });
    for (const latencyMs of [
      0,
      -0,
      0.01,
      0.05,
      0.1,
      0.5,
      0.55,
      1,
      9.99,
      10,
      12.3,
      99.09,
      1234.56,
      0.123,
      1 / 3,
      -0.5,
      2 ** 40,
    ])
      lines.push({ ...first, latencyMs });
    // Times: now, its edges, and times that take String's way (pino reads the same clock).
    const times = [
      1_764_028_800_000,
      1_764_028_800_123,
      1_764_028_800_124,
      1_764_028_099_999,
      1_764_028_800_009,
      1_000_000,
      Number.MAX_SAFE_INTEGER,
      999_999,
      2 ** 60,
      1.5,
    ];
    let now = Date.now();
    t.mock.method(Date, 'now', () => now);
    for (const line of lines) {
      write(line);
      viaPino(log, line);
    }
    for (const time of times) {
      now = time;
      write(first);
      viaPino(log, first);
    }
    assert.equal(direct.lines.length, lines.length + times.length);
    assert.deepEqual(direct.lines, reference.lines);
  });

  test('pino writes the plain line as a child logger bound to the request id would', () => {
    const plain = capture();
    const reference = capture();
    const write = plainLineWriter(pino({}, plain.stream) as unknown as FastifyBaseLogger);
    const log = pino({}, reference.stream);
    for (const line of LINES) {
      write(line);
      viaChild(log, line);
    }
    assert.deepEqual(plain.lines.map(withoutTime), reference.lines.map(withoutTime));
  });

  test('quotes every string as JSON.stringify does', () => {
    // Every character below 0x80 alone and inside text, a character from each wider range, a
    // surrogate pair and lone surrogates of both halves.
    const ascii = Array.from({ length: 0x80 }, (_, c) => String.fromCharCode(c));
    const samples = [
      '',
      ...ascii,
      ...ascii.map((c) => `/api/v1/prices${c}?symbols=NO1`),
      '\u00e9\u00ff\u0100\u2028\u2029\uffff',
      'a\u{1f600}b',
      'a\ud83db',
      'a\ude00b',
      '\ud83d',
      'x'.repeat(5000),
    ];
    for (const sample of samples)
      assert.equal(quoted(sample), JSON.stringify(sample), JSON.stringify(sample));
  });

  test('writes a latency in hundredths of a millisecond as String does', () => {
    const values: number[] = [];
    for (let n = 0; n <= 200_000; n++) values.push(n / 100);
    for (let n = 1; n < 0x7fffffff; n = Math.floor(n * 1.37) + 1) values.push(n / 100, (n - 1) / 100);
    // Not hundredths, or not numbers of milliseconds at all: these take String's own way.
    values.push(0.123, 1 / 3, -0, -0.5, 1e21 / 100, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY);
    for (const value of values) assert.equal(hundredths(value), String(value), `for ${value}`);
  });

  test('writes the time in epoch milliseconds as String does', () => {
    const times = [0, 999_999, 1_000_000, 1_000_001, 1_764_028_800_000, 1_764_028_800_123, 1_764_028_099_999];
    for (let t = 1; t < Number.MAX_SAFE_INTEGER; t = Math.floor(t * 1.7) + 3) times.push(t, t + 1_000_000);
    times.push(Number.MAX_SAFE_INTEGER, 2 ** 60, 1.5, -5, Number.NaN);
    for (const t of times) assert.equal(epochText(t), String(t), `for ${t}`);
  });

  test('is not written below the info level', () => {
    const direct = capture();
    const write = requestLineWriter(pino({ level: 'warn' }, direct.stream) as unknown as FastifyBaseLogger);
    write(LINES[0] as RequestLine);
    assert.deepEqual(direct.lines, []);
  });

  test('goes through pino itself where pino is set up otherwise (a message key, a mixin)', () => {
    for (const options of [{ messageKey: 'message' }, { mixin: () => ({ extra: 1 }) }]) {
      const direct = capture();
      const reference = capture();
      const write = requestLineWriter(pino(options, direct.stream) as unknown as FastifyBaseLogger);
      const log = pino(options, reference.stream);
      write(LINES[0] as RequestLine);
      viaPino(log, LINES[0] as RequestLine);
      assert.deepEqual(direct.lines.map(withoutTime), reference.lines.map(withoutTime));
    }
  });

  test('goes through the public API of a logger that is not pino', () => {
    const calls: unknown[] = [];
    const logger = { info: (fields: unknown, msg: unknown) => calls.push([fields, msg]) };
    requestLineWriter(logger as unknown as FastifyBaseLogger)(LINES[0] as RequestLine);
    assert.deepEqual(calls, [[LINES[0], 'request']]);
  });
});
