/**
 * Three `pricepoint serve` processes on one PostgreSQL database, with a source that runs every
 * second: the fake upstream is asked at most once per second between them (three instances without
 * the lease would ask three times), and when the instance that ran last is killed, the others go on.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ServerProcess, startServer } from '../helpers/process.js';
import { type ScaleEnvironment, scaleEnvironment, scaleSkipReason, within } from '../helpers/scale.js';
import { FakeUpstream, fixture } from './fake-upstream.js';

const skip = await scaleSkipReason('the sources across processes test');
const TOKEN = 'tok-processes-77aa';

describe('a source on three instances', { skip }, () => {
  let env: ScaleEnvironment;
  let upstream: FakeUpstream;
  const servers: ServerProcess[] = [];
  const runsOf = (server: ServerProcess) =>
    server.logs().filter((line) => String(line['msg']).startsWith('source entsoe-no1 wrote')).length;

  before(async () => {
    env = await scaleEnvironment('sources', { limit: 100 });
    upstream = await new FakeUpstream().start();
    upstream.answer('/api', { body: fixture('entsoe/no1-a01-pt60m.xml') });
    const file = join(env.dir, 'sources.json');
    writeFileSync(
      file,
      JSON.stringify({
        sources: {
          'entsoe-no1': {
            type: 'entsoe',
            zone: 'NO1',
            token: `\${ENTSOE_TOKEN}`,
            baseUrl: upstream.url('/api'),
            schedule: '* * * * * *',
          },
        },
      }),
    );
    const settings = {
      ...env.settings,
      PRICEPOINT_CONFIG: file,
      PRICEPOINT_INSECURE_HTTP: 'true',
      ENTSOE_TOKEN: TOKEN,
    };
    for (let i = 0; i < 3; i++) servers.push(await startServer(['serve'], settings));
  });

  after(async () => {
    for (const server of servers) await server.stop('SIGKILL');
    await upstream?.close();
    await env?.drop();
  });

  test('at most one upstream call per scheduled second, and the work goes on when the runner dies', async () => {
    const started = Date.now();
    const seen = upstream.requests.length;
    await within(20_000, 'five runs', async () => upstream.requests.length - seen >= 5);
    const seconds = Math.ceil((Date.now() - started) / 1000);
    assert.ok(
      // One per second, and one more at each end for a run already under way.
      upstream.requests.length - seen <= seconds + 2,
      `${upstream.requests.length - seen} upstream calls in ${seconds} s`,
    );
    // The instance that ran most is killed without a chance to give anything up.
    const runner = servers.reduce((a, b) => (runsOf(b) > runsOf(a) ? b : a));
    assert.ok(runsOf(runner) > 0);
    await runner.stop('SIGKILL');
    const survivors = servers.filter((s) => s !== runner);
    const before = survivors.map(runsOf);
    const afterKill = upstream.requests.length;
    const killedAt = Date.now();
    await within(60_000, 'a survivor runs the source', async () =>
      survivors.some((s, i) => runsOf(s) > (before[i] ?? 0)),
    );
    await within(20_000, 'three more runs', async () => upstream.requests.length - afterKill >= 3);
    const since = Math.ceil((Date.now() - killedAt) / 1000);
    assert.ok(upstream.requests.length - afterKill <= since + 2);
    for (const server of servers)
      assert.ok(!server.stdout().includes(TOKEN) && !server.stderr().includes(TOKEN));
  });
});
