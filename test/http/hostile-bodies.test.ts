/**
 * Hostile price uploads over a real socket: a 16 MiB body that is one line nested millions of
 * levels deep, or one giant line, is a 422 that names the line, read in bounded steps so that the
 * server keeps answering `/healthz` meanwhile (docs/operating.md "Importing prices": the limits of a JSON line).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { dayIntervals, formatInstant } from '../../src/domain/time/days.js';
import { PRICE_BODY_LIMIT } from '../../src/http/routes/price-writes.js';
import { MAX_JSON_DEPTH, MAX_JSON_LINE } from '../../src/services/import-formats.js';
import { MAX_JSON_VALUE } from '../../src/services/import-json-document.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const PATH = '/api/v1/series/NO1/prices';
const ZONE = 'Europe/Oslo';

interface Problem {
  code: string;
  status: number;
  errorCount?: number;
  errors?: { line: number; reason: string }[];
}

/** JSON Lines of `count` valid points of NO1 on 2026-11-20. */
function goodLines(count: number): string[] {
  return dayIntervals('2026-11-20', ZONE, 'PT15M')
    .slice(0, count)
    .map((i, n) => `{"start":"${formatInstant(i.start, ZONE)}","price":${n}.5}`);
}

/** `head`, `fill` repeated, `tail`: at most `size` characters (exactly, with a one-character fill). */
function padded(head: string, fill: string, size: number, tail = ''): string {
  return head + fill.repeat(Math.floor((size - head.length - tail.length) / fill.length)) + tail;
}

describe('hostile price bodies', () => {
  let h: Harness;
  let base: string;
  let agent: Agent;
  let writeKey: string;

  before(async () => {
    h = await createHarness();
    writeKey = (await h.createKey({ scopes: ['write'], tier: 'enterprise' })).key;
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    const address = h.app.server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
    agent = new Agent({ connections: 16 });
  });
  after(async () => {
    await agent.destroy();
    await h.close();
  });

  async function put(body: string, type = 'application/json') {
    const response = await request(`${base}${PATH}`, {
      method: 'PUT',
      headers: { 'x-api-key': writeKey, 'content-type': type },
      body,
      dispatcher: agent,
    });
    const text = await response.body.text();
    return {
      status: response.statusCode,
      type: String(response.headers['content-type']),
      connection: response.headers.connection,
      text,
    };
  }

  /** A 422 `invalid_prices` as problem+json whose errors are exactly at `lines`, each matching `reason`. */
  function assertInvalid(answer: Awaited<ReturnType<typeof put>>, lines: number[], reason: RegExp) {
    assert.equal(answer.status, 422, answer.text.slice(0, 300));
    assert.match(answer.type, /^application\/problem\+json/);
    const problem = JSON.parse(answer.text) as Problem;
    assert.equal(problem.code, 'invalid_prices');
    assert.deepEqual(
      problem.errors?.map((e) => e.line),
      lines,
      `the bad lines are named: ${answer.text.slice(0, 300)}`,
    );
    for (const e of problem.errors ?? []) assert.match(e.reason, reason, `line ${e.line} says why`);
  }

  /** How long each `/healthz` took, asked one after the other until `work` is done. */
  async function probingHealth<T>(work: Promise<T>): Promise<{ result: T; waits: number[] }> {
    const waits: number[] = [];
    let done = false;
    const probing = (async () => {
      while (!done) {
        const started = performance.now();
        const response = await request(`${base}/healthz`, { dispatcher: agent });
        await response.body.text();
        assert.equal(response.statusCode, 200);
        waits.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    try {
      return { result: await work, waits };
    } finally {
      done = true;
      await probing;
    }
  }

  test('five 16 MiB bodies at once, nested 8 million deep or one huge line, are 422 at their line while /healthz keeps answering', async () => {
    const { waits: calm } = await probingHealth(new Promise((resolve) => setTimeout(resolve, 300)));
    // Generous: the machine is shared, and a stalled event loop shows as seconds, not milliseconds.
    const bound = 500 + 5 * Math.max(...calm);

    const [a, b, c] = goodLines(3);
    const nested = padded(`${a}\n${b}\n`, '[', PRICE_BODY_LIMIT);
    const nestedObjects = padded(`${a}\n`, '{"a":', PRICE_BODY_LIMIT - 1, '\n');
    const hugeString = padded(`${a}\n{"start":"`, 'x', PRICE_BODY_LIMIT, `","price":1}\n${c}\n`);
    const hugeNumber = padded('{"start":"2026-11-20T00:00:00+01:00","price":1', '0', PRICE_BODY_LIMIT, '}');
    const csv = padded('start,price\n', '9', PRICE_BODY_LIMIT);
    const { result, waits } = await probingHealth(
      Promise.all([put(nested), put(nestedObjects), put(hugeString), put(hugeNumber), put(csv, 'text/csv')]),
    );
    assert.ok(waits.length > 0, 'health was asked during the uploads');
    const slowest = Math.max(...waits);
    assert.ok(
      slowest < bound,
      `/healthz answered within ${Math.round(bound)} ms throughout (slowest ${Math.round(slowest)} ms of ${waits.length})`,
    );
    // application/json is read as a JSON document by a streaming tokenizer: nesting is followed by
    // depth and a value is kept up to its limit, so a deep line is too deep, a huge value too long.
    const tooLong = new RegExp(`longer than ${MAX_JSON_VALUE} characters`);
    assertInvalid(result[0], [3], /nests deeper than/);
    assertInvalid(result[1], [2], /nests deeper than/);
    assertInvalid(result[2], [2], tooLong);
    assertInvalid(result[3], [1], tooLong);
    assertInvalid(result[4], [2], /longer than/);
    // The CSV reader stops at its limit, long before the body's end: the rest is not read, and the
    // connection that would still carry it is closed rather than left waiting.
    assert.equal(result[4]?.connection, 'close');
  });

  test(`a short line nested deeper than ${MAX_JSON_DEPTH} levels is a bad row at its line`, async () => {
    const [a, b] = goodLines(2);
    const deep = `${'['.repeat(MAX_JSON_DEPTH)}${a}${']'.repeat(MAX_JSON_DEPTH)}`;
    const deepValue = `{"start":"2026-11-20T00:30:00+01:00","price":1,"end":${'{"a":'.repeat(1000)}1${'}'.repeat(1000)}}`;
    assertInvalid(await put(`${b}\n${deep}\n${deepValue}\n`), [2, 3], /nests deeper than/);
    // At the limit, an ignored field may still hold a nested value: one level for the point itself.
    const nestedDate = `{"start":"2026-11-20T00:30:00+01:00","price":1,"date":${'['.repeat(MAX_JSON_DEPTH - 1)}${']'.repeat(MAX_JSON_DEPTH - 1)}}`;
    const answer = await put(`${b}\n${nestedDate}\n`);
    assert.equal(answer.status, 200, answer.text);
  });

  test(`a JSON Lines line of exactly ${MAX_JSON_LINE} characters is read; one more is a bad row`, async () => {
    const [a, b] = goodLines(2);
    const atLimit = padded('', ' ', MAX_JSON_LINE, a as string);
    const answer = await put(`${atLimit}\r\n${b}\r\n`, 'application/x-ndjson');
    assert.equal(answer.status, 200, answer.text);
    assert.equal(JSON.parse(answer.text).written, 2);
    assertInvalid(await put(`${b}\r\n ${atLimit}\r\n`, 'application/x-ndjson'), [2], /longer than/);
    // A JSON document limits values, not lines: the same text as application/json is read.
    assert.equal((await put(`${b}\r\n ${atLimit}\r\n`)).status, 200);
  });

  test('as JSON Lines, a 16 MiB line is a bad row at its line while the rest is read', async () => {
    const [a, , c] = goodLines(3);
    const hugeString = padded(`${a}\n{"start":"`, 'x', PRICE_BODY_LIMIT, `","price":1}\n${c}\n`);
    assertInvalid(
      await put(hugeString, 'application/jsonl'),
      [2],
      new RegExp(`longer than ${MAX_JSON_LINE}`),
    );
  });
});
