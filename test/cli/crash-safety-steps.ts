/** The steps of a crash-safety test: one import each, killed at its point, then a restart and the checks. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import type { Answer } from '../helpers/process.js';
import {
  bytesRead,
  type Deployment,
  feed,
  fifos,
  killWhen,
  restartAndCheck,
  serving,
  spawnImport,
} from './crash-safety-deployment.js';
import {
  type CliKill,
  CONTROL,
  FAR_FROM_WHOLE,
  type HttpKill,
  importedStart,
  importText,
  type Outcome,
  REFUSED,
} from './crash-safety-plan.js';

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

/** The control: a whole HTTP import, answered, then a kill: it must stay whole. It measures `whole`. */
export async function httpControl(t: TestContext, d: Deployment): Promise<void> {
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
export async function httpRefused(t: TestContext, d: Deployment): Promise<void> {
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

export async function httpKill(t: TestContext, d: Deployment, kill: HttpKill): Promise<void> {
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

export async function cliKill(t: TestContext, d: Deployment, kill: CliKill): Promise<void> {
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
      // The importer has read what was fed; its first rows reach the database a moment later on a
      // busy machine: wait for them (the kill is meant to land inside a transaction that wrote).
      let state = await d.site.importer();
      for (const deadline = Date.now() + 10_000; state.wrote === false && Date.now() < deadline; ) {
        await sleep(20);
        state = await d.site.importer();
      }
      const { locked, wrote } = state;
      if (d.site.stagesOutsideLock) {
        assert.ok(!locked, 'the import stages its points without holding the write lock');
      } else {
        assert.ok(locked, 'the import holds the write lock: it is under way, not committed');
      }
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
