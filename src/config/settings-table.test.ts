/**
 * docs/settings.md's settings table is the settings table of settings.ts, rendered: when a setting, its
 * default or its description changes in one and not the other, this fails until
 * `npm run docs:settings` writes the page again.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Config, ENV_SETTINGS, loadConfig } from './config.js';
import { SETTINGS } from './settings.js';
import {
  betweenMarkers,
  settingsTable,
  TABLE_END,
  TABLE_START,
  tableInPage,
  withTable,
} from './settings-table.js';

const PAGE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'settings.md');

describe('docs/settings.md', () => {
  test('its table is the one the code declares (npm run docs:settings writes it)', () => {
    const page = readFileSync(PAGE, 'utf8');
    assert.equal(
      tableInPage(page),
      betweenMarkers(settingsTable()),
      'docs/settings.md differs from src/config/settings.ts: run npm run docs:settings',
    );
  });

  test('the table has one row per environment variable, in the order loadConfig lists them', () => {
    const names = settingsTable()
      .split('\n')
      .slice(2)
      .map((row) => /^\| `(PRICEPOINT_[A-Z_]+)`/.exec(row)?.[1]);
    assert.deepEqual(names, ENV_SETTINGS);
  });

  test('a page whose table differs is told apart, and writing the table makes it equal again', () => {
    const table = settingsTable();
    const stale = `intro\n${TABLE_START}\n${table.replace('`8443`', '`8080`')}\n${TABLE_END}\nafter\n`;
    assert.notEqual(tableInPage(stale), betweenMarkers(table), 'a changed default shows');
    const written = withTable(stale, table);
    assert.equal(tableInPage(written), betweenMarkers(table));
    assert.ok(
      written.startsWith(`intro\n${TABLE_START}\n\n|`) && written.endsWith(`|\n\n${TABLE_END}\nafter\n`),
    );
    assert.throws(() => tableInPage('no markers here'), /docs\/settings\.md has no/);
  });
});

test('loadConfig without any setting yields every default the table declares', () => {
  const config: Readonly<Record<string, unknown>> = loadConfig({}) satisfies Config;
  for (const [name, setting] of Object.entries(SETTINGS)) {
    if (!(name in config) || name === 'dataDir') continue; // dataDir comes back resolved
    const declared = typeof setting.default === 'function' ? setting.default({}) : setting.default;
    assert.deepEqual(config[name], declared, `${setting.env}: its default`);
  }
});
