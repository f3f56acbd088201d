/**
 * `pricepoint series list|upsert` as a real process: the same rules as
 * PUT /api/v1/series/{symbol}, every bad option named, and the grid of a series with prices kept.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cleanUp, onlyJson, runCli, type Settings, tempDir } from '../helpers/process.js';

after(cleanUp);

interface SeriesView {
  symbol: string;
  name: string;
  timezone: string;
  resolution: string;
  currency: string;
  coverage: { first: string; last: string } | null;
}

const SE3 = [
  '--name',
  'Stockholm day-ahead',
  '--kind',
  'electricity',
  '--currency',
  'SEK',
  '--unit',
  'MWh',
  '--timezone',
  'Europe/Stockholm',
  '--resolution',
  'PT15M',
];

describe('pricepoint series', () => {
  let settings: Settings;
  const cli = (...args: string[]) => runCli(args, settings);
  before(async () => {
    settings = { PRICEPOINT_DATA_DIR: await tempDir() };
  });

  test('list on an empty database: no series', async () => {
    const json = await cli('series', 'list', '--json');
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(onlyJson(json), []);
    const text = await cli('series', 'list');
    assert.equal(text.stdout.trim(), 'no series');
  });

  test('upsert of a new series without every option fails with exit 1 naming the missing ones', async () => {
    const output = await cli('series', 'upsert', 'se3', '--name', 'Stockholm', '--json');
    assert.equal(output.code, 1);
    const error = JSON.parse(output.stderr) as { error: { code: string; message: string } };
    assert.equal(error.error.code, 'invalid_parameter');
    for (const field of ['kind', 'currency', 'unit', 'timezone', 'resolution']) {
      assert.match(error.error.message, new RegExp(`"${field}" is required`), field);
    }
    assert.deepEqual(onlyJson(await cli('series', 'list', '--json')), []);
  });

  test('upsert creates, then updates with omitted options keeping their values', async () => {
    const created = await cli('series', 'upsert', 'se3', ...SE3, '--json');
    assert.equal(created.code, 0, created.stderr);
    const first = onlyJson(created) as { outcome: string; series: SeriesView };
    assert.equal(first.outcome, 'created');
    assert.equal(first.series.symbol, 'SE3');
    assert.equal(first.series.coverage, null);
    const updated = await cli('series', 'upsert', 'SE3', '--name', 'Stockholm (SE3)', '--json');
    assert.equal(updated.code, 0, updated.stderr);
    const second = onlyJson(updated) as { outcome: string; series: SeriesView };
    assert.equal(second.outcome, 'updated');
    assert.equal(second.series.name, 'Stockholm (SE3)');
    assert.equal(second.series.timezone, 'Europe/Stockholm');
    assert.equal(second.series.currency, 'SEK');
    const text = await cli('series', 'list');
    assert.match(
      text.stdout,
      /^SE3\tStockholm \(SE3\)\telectricity\tSEK\tMWh\tEurope\/Stockholm\tPT15M\tno prices$/m,
    );
  });

  test('bad options are refused, each named', async () => {
    const output = await cli('series', 'upsert', 'SE3', '--timezone', 'Mars/Base', '--resolution', 'PT5M');
    assert.equal(output.code, 1);
    assert.match(output.stderr, /"timezone" must be an IANA time zone/);
    assert.match(output.stderr, /"resolution" must be one of PT15M, PT30M, PT1H, P1D/);
  });

  test('with prices loaded, list shows coverage and the grid of a series cannot change', async () => {
    const loaded = await cli('dev-data');
    assert.equal(loaded.code, 0, loaded.stderr);
    const list = onlyJson(await cli('series', 'list', '--json')) as SeriesView[];
    const no1 = list.find((s) => s.symbol === 'NO1');
    assert.ok(no1?.coverage, 'NO1 has coverage');
    assert.match(no1.coverage.first, /^\d{4}-\d{2}-\d{2}$/);
    assert.ok(no1.coverage.first < no1.coverage.last, 'first date before last');
    const refused = await cli('series', 'upsert', 'no1', '--timezone', 'UTC');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /NO1 already has prices on its Europe\/Oslo PT15M grid/);
    const renamed = await cli('series', 'upsert', 'no1', '--currency', 'NOK', '--json');
    assert.equal(renamed.code, 0, renamed.stderr);
    assert.equal((onlyJson(renamed) as { series: SeriesView }).series.currency, 'NOK');
  });
});
