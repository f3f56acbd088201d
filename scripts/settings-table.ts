/**
 * Writes docs/settings.md's settings table from the settings declared in src/config/settings.ts, between the
 * two marker comments of the "Settings" section. `npm run docs:settings`; with `--check` it only
 * tells whether docs/settings.md is up to date (exit code 1 when not).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { betweenMarkers, settingsTable, tableInPage, withTable } from '../src/config/settings-table.js';

const pagePath = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'settings.md');
const page = readFileSync(pagePath, 'utf8');
const table = settingsTable();
if (tableInPage(page) === betweenMarkers(table)) {
  console.log('docs/settings.md: the settings table is up to date');
} else if (process.argv.includes('--check')) {
  console.error(
    'docs/settings.md: the settings table differs from src/config/settings.ts; run npm run docs:settings',
  );
  process.exitCode = 1;
} else {
  writeFileSync(pagePath, withTable(page, table));
  console.log('docs/settings.md: settings table written');
}
