/**
 * `pricepoint serve` with a source in its config file, as a real process: an admin runs the source
 * through the API, a failing run shows in the listing and the metrics while /readyz stays ready,
 * and neither the log nor any answer ever holds the token.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cleanUp, onlyJson, runCli, type ServerProcess, startServer, tempDir } from '../helpers/process.js';
import { FakeUpstream, fixture } from './fake-upstream.js';

const TOKEN = 'tok-serve-0a1b2c3d';
let upstream: FakeUpstream;
let server: ServerProcess;
let admin: string;
const bodies: string[] = [];

async function call(method: 'GET' | 'POST', path: string) {
  const answer = await fetch(`${server.url}${path}`, { method, headers: { 'x-api-key': admin } });
  const text = await answer.text();
  bodies.push(text);
  return { status: answer.status, text, json: () => JSON.parse(text) };
}

describe('pricepoint serve with a source', () => {
  before(async () => {
    upstream = await new FakeUpstream().start();
    const dataDir = await tempDir();
    const file = join(dataDir, 'pricepoint.yaml');
    writeFileSync(
      file,
      `sources:\n  entsoe-no1:\n    type: entsoe\n    zone: NO1\n    token: \${ENTSOE_TOKEN}\n    baseUrl: ${upstream.url('/api')}\n    minSpacingSeconds: 0\n`,
    );
    const settings = {
      PRICEPOINT_CONFIG: file,
      PRICEPOINT_DATA_DIR: dataDir,
      PRICEPOINT_INSECURE_HTTP: 'true',
      ENTSOE_TOKEN: TOKEN,
    };
    const created = await runCli(
      ['keys', 'create', '--tier', 'free', '--name', 'ops', '--scopes', 'admin', '--json'],
      settings,
    );
    admin = (onlyJson(created) as { key: string }).key;
    server = await startServer(['serve'], settings);
  });
  after(async () => {
    await server?.stop();
    await upstream.close();
    await cleanUp();
  });

  test('an admin runs the source, then sees a failure; /readyz stays ready', async () => {
    upstream.answer('/api', { body: fixture('entsoe/no1-a01-pt60m.xml') });
    const ran = await call('POST', '/api/v1/sources/entsoe-no1/run?from=2026-11-23&to=2026-11-23');
    assert.equal(ran.status, 200, ran.text);
    assert.equal(ran.json().pointsWritten, 22);
    upstream.answer('/api', { status: 401, body: `securityToken=${TOKEN} is not valid` });
    const failed = await call('POST', '/api/v1/sources/entsoe-no1/run');
    assert.equal(failed.json().outcome, 'failed');
    const [source] = (await call('GET', '/api/v1/sources')).json().sources;
    assert.match(source.lastError.message, /answered HTTP 401/);
    assert.equal(source.settings.token, `\${ENTSOE_TOKEN}`);
    assert.equal((await call('GET', '/readyz')).status, 200);
    const metrics = await call('GET', '/metrics');
    assert.match(metrics.text, /pricepoint_source_failures_total\{source="entsoe-no1"\} 1/);
  });

  test('the token is in no log line, answer or metric', async () => {
    const output = await server.stop();
    const everything = [output.stdout, output.stderr, ...bodies].join('\n');
    assert.match(output.stdout, /source entsoe-no1 failed: /);
    assert.ok(!everything.includes(TOKEN), 'the token leaked');
  });
});
