/**
 * `pricepoint usage show|export` as real processes (docs/usage-history.md): a server's counted
 * requests are in the database once it stops cleanly, and the commands read them; every bad flag is
 * refused with a message that names it, as JSON with `--json`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  cleanUp,
  httpsClient,
  jsonLines,
  onlyJson,
  operatorKey,
  runCli,
  type Settings,
  startServer,
  tempDir,
} from '../helpers/process.js';

after(cleanUp);

const today = () => new Date().toISOString().slice(0, 10);

describe('pricepoint usage', () => {
  let settings: Settings;
  let keyId: string;
  const cli = (...args: string[]) => runCli(args, settings);

  before(async () => {
    settings = { PRICEPOINT_DATA_DIR: await tempDir('pricepoint-usage-cli-') };
    const key = await operatorKey(settings);
    const listed = onlyJson(await cli('keys', 'list', '--json')) as { id: string }[];
    keyId = listed[0]?.id ?? '';
    const server = await startServer(['serve', '--dev-data', '--json'], settings);
    const client = httpsClient(server.info?.certFile ?? '');
    for (let n = 0; n < 4; n++) {
      assert.equal((await client.get(`${server.url}/api/v1/series`, { 'x-api-key': key })).status, 200);
    }
    assert.equal((await client.get(`${server.url}/api/v1/series/NOPE`, { 'x-api-key': key })).status, 404);
    // Nothing read the usage: it is written by the clean stop.
    const stopped = await server.stop();
    assert.equal(stopped.code, 0, stopped.stderr);
  });

  test('usage show reads what the server counted, of one key or of every key', async () => {
    const one = await cli(
      'usage',
      'show',
      '--key',
      keyId,
      '--granularity',
      'p1d',
      '--from',
      'today',
      '--json',
    );
    assert.equal(one.code, 0, one.stderr);
    const report = onlyJson(one) as { keyId: string; totals: Record<string, number>; intervals: unknown[] };
    assert.equal(report.keyId, keyId);
    assert.equal(report.intervals.length, 1);
    assert.deepEqual(report.totals, {
      requests: 5,
      served: 4,
      notModified: 0,
      rateLimited: 0,
      clientErrors: 1,
      units: 5,
    });
    const all = await cli('usage', 'show', '--granularity', 'P1D', '--from', 'today');
    assert.equal(all.code, 0, all.stderr);
    const [header, row] = all.stdout.trim().split(/\r?\n/);
    assert.equal(header, 'start,end,requests,served,notModified,rateLimited,clientErrors,units');
    const tomorrow = new Date(Date.parse(today()) + 86_400_000).toISOString().slice(0, 10);
    assert.equal(row, `${today()}T00:00:00+00:00,${tomorrow}T00:00:00+00:00,5,4,0,0,1,5`);
  });

  test('usage export writes this month per key and day, today partial, with the same ids each time', async () => {
    const month = today().slice(0, 7);
    const out = join(settings.PRICEPOINT_DATA_DIR as string, 'usage.csv');
    const written = await cli('usage', 'export', '--month', month, '--out', out, '--json');
    assert.equal(written.code, 0, written.stderr);
    assert.deepEqual(onlyJson(written), { month, format: 'csv', rows: 1, out, partial: today() });
    assert.equal(
      readFileSync(out, 'utf8'),
      `date,keyId,keyName,tier,customerRef,units,requests,served,notModified,rateLimited,clientErrors,partial\r\n${today()},${keyId},operator,enterprise,,5,5,4,0,0,1,true\r\n`,
    );
    const stripe = await cli('usage', 'export', '--month', month, '--format', 'stripe');
    assert.equal(stripe.code, 0, stripe.stderr);
    const [event] = jsonLines(stripe.stdout);
    assert.deepEqual(event, {
      event_name: 'pricepoint_units',
      identifier: `pricepoint-${keyId}-${today()}`,
      timestamp: Date.parse(`${today()}T00:00:00Z`) / 1000,
      payload: { stripe_customer_id: keyId, value: '5' },
      partial: true,
    });
    const openmeter = await cli(
      'usage',
      'export',
      '--month',
      month,
      '--format',
      'openmeter',
      '--event-name',
      'api.units',
    );
    const again = await cli(
      'usage',
      'export',
      '--month',
      month,
      '--format',
      'cloudevents',
      '--event-name',
      'api.units',
    );
    assert.equal(openmeter.stdout, again.stdout);
    assert.equal(jsonLines(again.stdout)[0]?.id, `usage-${keyId}-${today()}`);
    assert.equal(jsonLines(again.stdout)[0]?.type, 'api.units');
  });

  test('every bad flag is refused with a message naming it', async () => {
    const refusals: [string[], RegExp][] = [
      [['export', '--month', '2026-13'], /--month: "2026-13" is not a month written YYYY-MM/],
      [['export', '--month', '2999-01'], /--month: 2999-01 has not begun yet/],
      [['export'], /required option '--month/],
      [
        ['export', '--month', '2026-11', '--format', 'xml'],
        /--format: "xml" is not one of csv, cloudevents, openmeter, stripe/,
      ],
      [['export', '--month', '2026-11', '--event-name', 'a b'], /--event-name: use 1 to 100 letters/],
      [
        ['export', '--month', '2026-11', '--out', '/nonexistent/folder/usage.csv'],
        /--out: cannot write \/nonexistent\/folder\/usage.csv: ENOENT/,
      ],
      [['show', '--granularity', 'PT15M'], /--granularity: "PT15M" is not one of PT1H, P1D/],
      [
        ['show', '--from', 'last week'],
        /--from: must be a date \(YYYY-MM-DD\), yesterday, today, tomorrow or an RFC 3339 timestamp/,
      ],
      [['show', '--from', 'today', '--to', 'yesterday'], /--to: must come after from/],
      [
        ['show', '--from', '2020-01-01'],
        /--from: spans \d+ hours; granularity PT1H answers at most 744 hours/,
      ],
      [['show', '--tz', 'Mars/Olympus'], /--tz: must be an IANA time zone/],
      [
        ['show', '--granularity', 'P1D', '--tz', 'Asia/Kolkata'],
        /--tz: cuts days that begin within a UTC hour/,
      ],
      [['show', '--format', 'xml'], /--format: "xml" is not one of csv, json/],
      [['show', '--key', 'key_none'], /there is no key with id key_none/],
    ];
    for (const [args, message] of refusals) {
      const refused = await cli('usage', ...args);
      assert.notEqual(refused.code, 0, args.join(' '));
      assert.match(refused.stderr, message, args.join(' '));
      assert.equal(refused.stdout, '', args.join(' '));
    }
    const json = await cli('usage', 'export', '--month', 'soon', '--json');
    assert.equal(json.code, 1);
    assert.deepEqual(JSON.parse(json.stderr), {
      error: {
        code: 'invalid_parameter',
        message: '--month: "soon" is not a month written YYYY-MM, such as 2026-11',
      },
    });
  });
});
