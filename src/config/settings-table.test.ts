/**
 * README.md's settings table is the settings table of settings.ts, rendered: when a setting, its
 * default or its description changes in one and not the other, this fails until
 * `npm run docs:settings` writes the README again.
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
  tableInReadme,
  withTable,
} from './settings-table.js';

const README = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'README.md');

describe('README.md "Settings"', () => {
  test('its table is the one the code declares (npm run docs:settings writes it)', () => {
    const readme = readFileSync(README, 'utf8');
    assert.equal(
      tableInReadme(readme),
      betweenMarkers(settingsTable()),
      'README.md differs from src/config/settings.ts: run npm run docs:settings',
    );
  });

  test('the table has one row per environment variable, in the order loadConfig lists them', () => {
    const names = settingsTable()
      .split('\n')
      .slice(2)
      .map((row) => /^\| `(PRICEPOINT_[A-Z_]+)`/.exec(row)?.[1]);
    assert.deepEqual(names, ENV_SETTINGS);
  });

  test('a README whose table differs is told apart, and writing the table makes it equal again', () => {
    const table = settingsTable();
    const stale = `intro\n${TABLE_START}\n${table.replace('`8443`', '`8080`')}\n${TABLE_END}\nafter\n`;
    assert.notEqual(tableInReadme(stale), betweenMarkers(table), 'a changed default shows');
    const written = withTable(stale, table);
    assert.equal(tableInReadme(written), betweenMarkers(table));
    assert.ok(
      written.startsWith(`intro\n${TABLE_START}\n\n|`) && written.endsWith(`|\n\n${TABLE_END}\nafter\n`),
    );
    assert.throws(() => tableInReadme('no markers here'), /README\.md has no/);
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
