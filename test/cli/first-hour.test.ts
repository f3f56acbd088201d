/**
 * The first hour with Pricepoint from the shell: `npm ci` on a fresh clone says nothing a newcomer
 * has to wonder about. npm 11 skips the install scripts of dependencies that package.json's
 * `allowScripts` does not name, and ends with a warning listing them; every dependency with an
 * install script (package-lock.json marks each) is named there, so none is skipped unasked and none
 * warns: allowed (`true`) where the package needs it, denied (`false`) where the script only reports
 * the install to a third party (@scarf/scarf, pulled in by Spectral).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

const root = new URL('../../', import.meta.url);
const readJson = (name: string) => JSON.parse(readFileSync(new URL(name, root), 'utf8')) as unknown;

test('every dependency with an install script is named in allowScripts, so npm ci decides without a warning', () => {
  const lock = readJson('package-lock.json') as {
    packages: Record<string, { hasInstallScript?: boolean }>;
  };
  const manifest = readJson('package.json') as { allowScripts?: Record<string, boolean> };
  const withScripts = Object.entries(lock.packages)
    .filter(([, entry]) => entry.hasInstallScript === true)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
  assert.ok(withScripts.includes('better-sqlite3'), 'the SQLite binding builds in an install script');
  for (const name of withScripts) {
    assert.equal(typeof manifest.allowScripts?.[name], 'boolean', `${name} is named in allowScripts`);
  }
  for (const needed of ['better-sqlite3', 'esbuild']) {
    assert.equal(manifest.allowScripts?.[needed], true, `${needed} is allowed to run its install script`);
  }
  assert.equal(manifest.allowScripts?.['@scarf/scarf'], false, 'install analytics are not sent');
});
