/**
 * Writes README.md's settings table from the settings declared in src/config/settings.ts, between the
 * two marker comments of the "Settings" section. `npm run docs:settings`; with `--check` it only
 * tells whether README.md is up to date (exit code 1 when not).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { betweenMarkers, settingsTable, tableInReadme, withTable } from '../src/config/settings-table.js';

const readmePath = join(dirname(fileURLToPath(import.meta.url)), '..', 'README.md');
const readme = readFileSync(readmePath, 'utf8');
const table = settingsTable();
if (tableInReadme(readme) === betweenMarkers(table)) {
  console.log('README.md: the settings table is up to date');
} else if (process.argv.includes('--check')) {
  console.error(
    'README.md: the settings table differs from src/config/settings.ts; run npm run docs:settings',
  );
  process.exitCode = 1;
} else {
  writeFileSync(readmePath, withTable(readme, table));
  console.log('README.md: settings table written');
}
