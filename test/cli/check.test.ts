/**
 * Stored data after a rules change, as real processes: points written while America/Vancouver
 * still fell back (an "old" tz folder where it follows America/Los_Angeles) are checked with the
 * current release in tzdata/. `pricepoint check` lists the series and the dates whose points left
 * the grid, says how to fix them and changes nothing; the server warns about them once at start.
 */
import assert from 'node:assert/strict';
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  cleanUp,
  onlyJson,
  REPO,
  runCli,
  type Settings,
  startServer,
  tempDir,
  waitUntil,
} from '../helpers/process.js';

after(cleanUp);

const CURRENT = join(REPO, 'tzdata');

/** A copy of tzdata/ in which America/Vancouver (and its links) still falls back, labelled 2025b. */
async function oldVancouverTzdata(): Promise<string> {
  const dir = await tempDir('pricepoint-old-tz-');
  await cp(CURRENT, dir, { recursive: true, verbatimSymlinks: true });
  await rm(join(dir, 'America', 'Vancouver'));
  await cp(join(CURRENT, 'America', 'Los_Angeles'), join(dir, 'America', 'Vancouver'));
  const source = await readFile(join(CURRENT, 'tzdata.zi'), 'utf8');
  await writeFile(join(dir, 'tzdata.zi'), source.replace(/^# version \S+/, '# version 2025b'));
  return dir;
}

const SERIES = (symbol: string, zone: string, resolution: string) => [
  'series',
  'upsert',
  symbol,
  ...['--name', `${symbol} test`, '--kind', 'electricity', '--currency', 'CAD', '--unit', 'MWh'],
  ...['--timezone', zone, '--resolution', resolution],
];

interface CheckReport {
  tz: { release: string; source: string };
  checkedSeries: number;
  checkedPoints: number;
  offGridPoints: number;
  series: {
    symbol: string;
    timezone: string;
    resolution: string;
    points: number;
    dates: { date: string; points: number; first: string; dayStart: string }[];
  }[];
}

describe('pricepoint check after the zone rules changed under stored points', () => {
  let dataDir: string;
  let old: Settings;
  let current: Settings;

  before(async () => {
    dataDir = await tempDir();
    old = { PRICEPOINT_DATA_DIR: dataDir, PRICEPOINT_TZDIR: await oldVancouverTzdata() };
    current = { PRICEPOINT_DATA_DIR: dataDir, PRICEPOINT_TZDIR: CURRENT };
    for (const args of [
      SERIES('VAN', 'America/Vancouver', 'P1D'),
      SERIES('VAN-H', 'America/Vancouver', 'PT1H'),
    ]) {
      const made = await runCli(args, old);
      assert.equal(made.code, 0, made.stderr);
    }
    // Written under the old rules: midnights at -07:00 before 2026-11-01 and at -08:00 after it.
    const csv = join(dataDir, 'old-days.csv');
    await writeFile(
      csv,
      [
        'symbol,start,price',
        'VAN,2026-10-31T00:00:00-07:00,50.1',
        'VAN,2026-11-02T00:00:00-08:00,51.2',
        'VAN,2026-11-03T00:00:00-08:00,52.3',
        'VAN-H,2026-11-02T00:00:00-08:00,10',
        'VAN-H,2026-11-02T01:00:00-08:00,11',
      ].join('\n'),
    );
    const imported = await runCli(['import', csv], old);
    assert.equal(imported.code, 0, imported.stderr);
  });

  test('under the rules the points were written with, check finds nothing and exits 0', async () => {
    const output = await runCli(['check', '--json'], old);
    assert.equal(output.code, 0, output.stderr);
    const report = onlyJson(output) as CheckReport;
    assert.equal(report.tz.release, '2025b');
    assert.deepEqual([report.checkedSeries, report.checkedPoints, report.offGridPoints], [2, 5, 0]);
    const text = await runCli(['check'], old);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /5 points of 2 series checked: all on their grid under tz 2025b/);
  });

  test('under 2026f, check lists the P1D series and each date whose point is off the grid, and exits 1', async () => {
    const output = await runCli(['check', '--json'], current);
    assert.equal(output.code, 1, output.stderr);
    const report = onlyJson(output) as CheckReport;
    assert.equal(report.tz.release, '2026f');
    assert.equal(report.offGridPoints, 2);
    // Hourly points stay on the hourly grid: only the daily series is listed.
    assert.deepEqual(report.series, [
      {
        symbol: 'VAN',
        timezone: 'America/Vancouver',
        resolution: 'P1D',
        points: 2,
        dates: [
          {
            date: '2026-11-02',
            points: 1,
            first: '2026-11-02T01:00:00-07:00',
            dayStart: '2026-11-02T00:00:00-07:00',
          },
          {
            date: '2026-11-03',
            points: 1,
            first: '2026-11-03T01:00:00-07:00',
            dayStart: '2026-11-03T00:00:00-07:00',
          },
        ],
      },
    ]);

    const text = await runCli(['check'], current);
    assert.equal(text.code, 1);
    assert.equal(text.stderr, '', 'the report is the whole message');
    assert.match(text.stdout, /^VAN \(America\/Vancouver, P1D\): 2 points off the grid on 2 dates$/m);
    assert.match(
      text.stdout,
      /^ {2}2026-11-02\t1 point, first at 2026-11-02T01:00:00-07:00; the day starts at 2026-11-02T00:00:00-07:00$/m,
    );
    assert.match(text.stdout, /pricepoint import/);
    assert.match(text.stdout, /pricepoint series upsert/);
    assert.match(text.stdout, /Nothing was changed/);

    // Nothing was rewritten: the points are where they were written, under either rules.
    const again = await runCli(['check', '--json'], old);
    assert.equal((onlyJson(again) as CheckReport).offGridPoints, 0);
  });

  test('a server started with 2026f logs one warning naming pricepoint check', async () => {
    const server = await startServer(['serve', '--json'], current);
    const warning = await waitUntil(
      () =>
        server.logs().find((line) => typeof line.msg === 'string' && line.msg.includes('pricepoint check')),
      20_000,
      'the warning about points off the grid',
    );
    assert.equal(warning.level, 40);
    assert.equal(warning.offGridPoints, 2);
    assert.deepEqual(warning.series, ['VAN']);
    assert.equal((await server.stop()).code, 0);
    assert.equal(server.logs().filter((line) => line.offGridPoints !== undefined).length, 1);
  });

  test('a server started with the rules the points were written with does not warn', async () => {
    // The scan says it is done only at debug level.
    const server = await startServer(['serve', '--json'], { ...old, PRICEPOINT_LOG_LEVEL: 'debug' });
    const done = await waitUntil(
      () => server.logs().find((line) => line.msg === 'stored points checked: all lie on their grid'),
      20_000,
      'the end of the scan',
    );
    assert.deepEqual([done.checkedSeries, done.checkedPoints], [2, 5]);
    assert.equal((await server.stop()).code, 0);
    assert.equal(server.logs().filter((line) => line.level === 40).length, 0);
  });
});
