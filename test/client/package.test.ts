/**
 * `@pricepoint/client` as a package a stranger installs: `npm pack` in packages/client, then
 * `npm install` of the tarball in an empty folder outside this repository (offline: the package has
 * no dependencies), then a program that loads it with `import` and one that loads it with `require`
 * read today's prices from a real `pricepoint serve`, upload a day of prices with an admin key and
 * read them back. Its types compile under `tsc --strict` for both.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  cleanUp,
  onlyJson,
  REPO,
  runCli,
  runCommand,
  type ServerProcess,
  startServer,
  tempDir,
} from '../helpers/process.js';

const PACKAGE = join(REPO, 'packages', 'client');
const PROGRAMS = join(REPO, 'test', 'client', 'package-programs');
const TSC = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');

/** Our environment without what an enclosing `npm test` sets for npm, so npm runs as a user's would. */
function plainEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(name) && !name.startsWith('PRICEPOINT_') && name !== 'NODE_TEST_CONTEXT') {
      env[name] = value;
    }
  }
  return { ...env, ...extra };
}

async function run(command: string, args: string[], cwd: string, env = plainEnv()) {
  const output = await runCommand(command, args, env, { cwd, timeoutMs: 180_000 });
  assert.equal(output.code, 0, `${command} ${args.join(' ')}\n${output.stdout}\n${output.stderr}`);
  return output;
}

interface ProgramReport {
  resolved: string;
  todayPrices: number;
  uploaded: { symbol: string; written: number };
  prices: string[];
  refused: string;
}

describe('the packed client, installed outside the repository', () => {
  let app: string;
  let server: ServerProcess;
  let adminKey: string;
  let demoKey: string;
  let certFile: string;

  before(async () => {
    // The tarball of what `npm run build` built (a user's `npm pack` builds first, by `prepack`).
    const packs = await tempDir('pricepoint-client-pack-');
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', packs], PACKAGE);
    const tarball = readdirSync(packs).find((name) => /^pricepoint-client-.*\.tgz$/.test(name));
    assert.ok(tarball, `npm pack wrote pricepoint-client-*.tgz: ${readdirSync(packs).join(', ')}`);

    app = await tempDir('pricepoint-client-app-');
    await run('npm', ['init', '-y'], app);
    const flags = ['--offline', '--no-audit', '--no-fund', '--ignore-scripts'];
    await run('npm', ['install', join(packs, tarball), ...flags], app);
    for (const name of readdirSync(PROGRAMS)) copyFileSync(join(PROGRAMS, name), join(app, name));

    const dataDir = await tempDir('pricepoint-client-data-');
    const created = await runCli(
      ['keys', 'create', '--tier', 'enterprise', '--scopes', 'admin', '--name', 'packed client', '--json'],
      { PRICEPOINT_DATA_DIR: dataDir },
    );
    assert.equal(created.code, 0, created.stderr);
    adminKey = (onlyJson(created) as { key: string }).key;
    server = await startServer(['serve', '--dev-data', '--json'], { PRICEPOINT_DATA_DIR: dataDir });
    assert.ok(server.info?.demoKey && server.info.certFile, server.banner);
    demoKey = server.info.demoKey;
    certFile = server.info.certFile;
  });
  after(cleanUp);

  test('the installed package is the built ES module and CommonJS code, with no dependencies', () => {
    const installed = join(app, 'node_modules', '@pricepoint', 'client');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    assert.equal(manifest.dependencies, undefined);
    for (const file of [
      'dist/esm/index.js',
      'dist/esm/index.d.ts',
      'dist/cjs/index.js',
      'dist/cjs/index.d.ts',
    ]) {
      assert.ok(existsSync(join(installed, file)), `${file} is in the package`);
    }
    assert.deepEqual(JSON.parse(readFileSync(join(installed, 'dist/cjs/package.json'), 'utf8')), {
      type: 'commonjs',
    });
    const installedNames = readdirSync(join(app, 'node_modules')).filter((name) => !name.startsWith('.'));
    assert.deepEqual(installedNames, ['@pricepoint'], 'nothing else was installed');
  });

  test('it carries its licence and can be published: npm publish --dry-run takes it', async () => {
    const installed = join(app, 'node_modules', '@pricepoint', 'client');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    assert.equal(manifest.license, JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).license);
    assert.equal(manifest.private, undefined, 'a private package cannot be published');
    assert.equal(
      readFileSync(join(installed, 'LICENSE'), 'utf8'),
      readFileSync(join(REPO, 'LICENSE'), 'utf8'),
      'the licence text travels with the package',
    );
    // Offline: npm checks the package and stops before the registry, as a first publish would.
    const dry = await run('npm', ['publish', '--dry-run', '--offline', '--ignore-scripts'], PACKAGE);
    assert.match(`${dry.stdout}${dry.stderr}`, /@pricepoint\/client@\d+\.\d+\.\d+/);
  });

  for (const [program, build] of [
    ['read-upload.mjs', 'esm'],
    ['read-upload.cjs', 'cjs'],
  ] as const) {
    test(`${program} reads today's prices, uploads prices and reads them back`, async () => {
      const symbol = `PKG-${build.toUpperCase()}`;
      const output = await run(
        process.execPath,
        [program],
        app,
        plainEnv({
          PRICEPOINT_URL: server.url,
          READ_KEY: demoKey,
          ADMIN_KEY: adminKey,
          SYMBOL: symbol,
          NODE_EXTRA_CA_CERTS: certFile,
        }),
      );
      const report = onlyJson(output) as ProgramReport;
      assert.match(report.resolved, new RegExp(`node_modules/@pricepoint/client/dist/${build}/index\\.js$`));
      // Today in Oslo at 15 minutes: 96 intervals, 92 or 100 on a DST change.
      assert.ok([92, 96, 100].includes(report.todayPrices), `today's NO1 prices: ${report.todayPrices}`);
      assert.deepEqual(report.uploaded, { symbol, written: 24 });
      assert.deepEqual(
        report.prices,
        Array.from({ length: 24 }, (_, hour) => `1.${String(hour).padStart(2, '0')}0`),
        'every price read back as written',
      );
      assert.equal(report.refused, 'insufficient_scope', 'the demo key may not upload');
      assert.ok(!output.stdout.includes(adminKey) && !output.stderr.includes(adminKey));
    });
  }

  test('its types compile under tsc --strict from an ES module and from a CommonJS module', async () => {
    const options = ['--noEmit', '--strict', '--module', 'node16', '--moduleResolution', 'node16'];
    await run(process.execPath, [TSC, ...options, '--lib', 'es2022,dom', 'typed.mts', 'typed.cts'], app);
  });
});
