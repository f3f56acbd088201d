/**
 * The variables the docs tell client programs to export never stop the server (docs/settings.md):
 * every `PRICEPOINT_*` name in README.md, docs/, the client's README and examples/ is either a setting
 * or left alone, and the server and a CLI command start with all of them set at once. Misspelt
 * settings are still refused (src/config/config-env.test.ts).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { ENV_SETTINGS } from '../../src/config/settings.js';
import { cleanUp, REPO, runCli, startServer, tempDir } from '../helpers/process.js';

after(cleanUp);

const markdown = (dir: string) =>
  readdirSync(join(REPO, dir))
    .filter((name) => /\.(md|mjs|ts)$/.test(name))
    .map((name) => join(dir, name));
const FILES = ['README.md', 'packages/client/README.md', ...markdown('docs'), ...markdown('examples')];
const named = new Set(
  FILES.flatMap((file) => readFileSync(join(REPO, file), 'utf8').match(/PRICEPOINT_[A-Z0-9_]+/g) ?? []),
);
/** README's examples of what is refused as misspelt (src/config/config-env.test.ts tests the rule). */
const MISSPELT = ['PRICEPOINT_PROT', 'PRICEPOINT_DATABASE'];
/** The names the docs use that are not settings: clients' and the test suite's own variables. */
const others = [...named].filter((name) => !ENV_SETTINGS.includes(name) && !MISSPELT.includes(name)).sort();
/** A value of the shape each is documented with: none of them is read by the server. */
const documentedValue = (name: string) =>
  name.endsWith('_URL')
    ? 'https://localhost:8443'
    : name.endsWith('SECRET')
      ? 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
      : 'pp_demo_TryPricepointDemo2026x1pqsyk';

test('the docs name client variables, and every name they use is found', () => {
  for (const name of ['PRICEPOINT_URL', 'PRICEPOINT_API_KEY', 'PRICEPOINT_WEBHOOK_SECRET']) {
    assert.ok(others.includes(name), `${name} is among ${others.join(', ')}`);
  }
});

test("README's examples of misspelt settings are refused", () => {
  for (const name of MISSPELT) {
    assert.ok(named.has(name), `README.md names ${name}`);
    assert.throws(() => loadConfig({ [name]: '1' }), /not a Pricepoint setting; did you mean/);
  }
});

test('each variable the docs name that is not a setting is accepted beside the settings', () => {
  for (const name of others) {
    assert.doesNotThrow(() => loadConfig({ [name]: documentedValue(name) }), name);
  }
});

test('the server and the CLI run with every one of them exported', async () => {
  const exported = Object.fromEntries(others.map((name) => [name, documentedValue(name)]));
  const dataDir = await tempDir();
  const listed = await runCli(['tiers', 'list', '--json'], { ...exported, PRICEPOINT_DATA_DIR: dataDir });
  assert.equal(listed.code, 0, listed.stderr);
  const server = await startServer(['serve'], { ...exported, PRICEPOINT_DATA_DIR: dataDir });
  try {
    assert.match(server.url, /^https:\/\/localhost:\d+$/);
  } finally {
    const stopped = await server.stop();
    assert.equal(stopped.code, 0, stopped.stderr);
  }
});
