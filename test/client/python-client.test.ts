/**
 * The Python client (packages/python, docs/python.md) against a real server started as `npm start`
 * starts it: `pip install --target` builds and installs it offline with py.typed; its unittest
 * suites pass from the installed copy against the live server (every method, a 429 waited out, a
 * problem as an exception, a range of 400 days, pandas); and the page's blocks run as written. Where
 * pandas or pip's setuptools is missing those parts are skipped with the reason; with CI=true they
 * fail instead (.ci/run installs python3-pandas, python3-pip and python3-venv).
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { symlink } from 'node:fs/promises';
import { devNull } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEMO_API_KEY } from '../../src/dev-data/dev-data.js';
import { runShBlock, shBlocks } from '../helpers/doc-blocks.js';
import {
  cleanUp,
  onlyJson,
  REPO,
  runCli,
  runCommand,
  type ServerProcess,
  type Settings,
  startServer,
  tempDir,
} from '../helpers/process.js';

const PACKAGE = join(REPO, 'packages', 'python');
const CI = process.env['CI'] === 'true';
const page = readFileSync(join(REPO, 'docs', 'python.md'), 'utf8');
const pythonBlocks = [...page.matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');

/** A python3 that can import every one of `modules`: the one on PATH, else Debian's; undefined when neither can. */
async function pythonWith(modules: readonly string[]): Promise<string | undefined> {
  for (const python of ['python3', '/usr/bin/python3']) {
    const imports = ['sys', ...modules].join(', ');
    const tried = await runCommand(
      python,
      ['-c', `import ${imports}; assert sys.version_info >= (3, 9)`],
      process.env,
    ).catch(() => undefined);
    if (tried?.code === 0) return python;
  }
  return undefined;
}

/**
 * A folder holding `packages/python` as committed, without the build output of an earlier install:
 * pip builds in the package's folder, and setuptools would pack files left in `build/` from then.
 */
async function packageCopy(): Promise<string> {
  const folder = await tempDir('pricepoint-python-repo-');
  const leftOver = /(^|\/)(build|__pycache__|[^/]*\.egg-info)$/;
  cpSync(PACKAGE, join(folder, 'packages', 'python'), {
    recursive: true,
    filter: (source) => !leftOver.test(source.slice(PACKAGE.length)),
  });
  return folder;
}

/** Where a part cannot run here: a skip with the reason, or with CI=true a failure. */
function missing(t: { skip(message: string): void }, what: string): void {
  assert.ok(!CI, `${what}; CI must run it (.ci/run installs python3-pandas, python3-pip and python3-venv)`);
  t.skip(what);
}

// Tiers of the test: a roomy demo tier (the suites and blocks share its key), one request per 2 s
// (a 429 soon waited out) and one a day (a 429 too long to wait for).
const TIERS = {
  tiers: {
    demo: { limits: [{ name: 'minute', limit: 1000, windowSeconds: 60 }] },
    burst: { limits: [{ name: 'burst', limit: 1, windowSeconds: 2 }], countPer: 'key' },
    daily: { limits: [{ name: 'day', limit: 1, windowSeconds: 86_400 }], countPer: 'key' },
  },
};

describe('the Python client', () => {
  let server: ServerProcess;
  let dataDir: string;
  let certFile: string;
  let env: NodeJS.ProcessEnv;
  let python: string | undefined;
  let pandasPython: string | undefined;
  let pipPython: string | undefined;
  let installed: string | undefined;

  before(async () => {
    dataDir = await tempDir('pricepoint-python-');
    const config = join(dataDir, 'tiers.json');
    writeFileSync(config, JSON.stringify(TIERS));
    const settings: Settings = { PRICEPOINT_DATA_DIR: dataDir, PRICEPOINT_CONFIG: config };
    server = await startServer(['serve', '--dev-data'], settings);
    certFile = join(dataDir, 'tls', 'localhost-cert.pem');
    const key = async (tier: string, scopes: string) => {
      const created = await runCli(
        ['keys', 'create', '--tier', tier, '--scopes', scopes, '--name', tier, '--json'],
        settings,
      );
      assert.equal(created.code, 0, created.stderr);
      return (onlyJson(created) as { key: string }).key;
    };
    env = {
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PRICEPOINT_'))),
      PRICEPOINT_URL: `https://localhost:${server.port}`,
      PRICEPOINT_API_KEY: DEMO_API_KEY,
      PRICEPOINT_TEST_CA_FILE: certFile,
      PRICEPOINT_TEST_PRO_KEY: await key('pro', 'read,write'),
      PRICEPOINT_TEST_BURST_KEY: await key('burst', 'read'),
      PRICEPOINT_TEST_DAILY_KEY: await key('daily', 'read'),
      PRICEPOINT_TEST_REQUIRE_PANDAS: CI ? '1' : '0',
      PYTHONDONTWRITEBYTECODE: '1',
    };
    // The suites trust the certificate through ca_file, and check that nothing else makes Python trust it.
    delete env['SSL_CERT_FILE'];
    pandasPython = await pythonWith(['pandas']);
    python = pandasPython ?? (await pythonWith([]));
    // pip builds the package with the setuptools and wheel it finds (no network, no build isolation);
    // ensurepip is what `python3 -m venv` installs pip with (Debian: python3-venv).
    pipPython = await pythonWith(['setuptools', 'wheel', 'pip', 'ensurepip']);
  });
  after(cleanUp);

  test('pip install --target builds and installs it offline, py.typed included', async (t) => {
    if (pipPython === undefined)
      return missing(
        t,
        'no python3 with pip, setuptools, wheel and venv (apt-get install python3-pip python3-venv)',
      );
    const target = await tempDir('pricepoint-python-target-');
    // No index and no config: only what is installed builds it, as on a machine without network.
    const pipEnv = { ...env, PIP_CONFIG_FILE: devNull, PIP_NO_INDEX: '1' };
    const source = join(await packageCopy(), 'packages', 'python');
    const args = ['-m', 'pip', 'install', '--no-build-isolation', '--no-index', '--target', target, source];
    const run = await runCommand(pipPython, args, pipEnv, { timeoutMs: 180_000 });
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    assert.ok(existsSync(join(target, 'pricepoint', 'py.typed')), 'py.typed is installed');
    const imported = await runCommand(
      pipPython,
      [
        '-c',
        'import pricepoint; print(pricepoint.__file__, pricepoint.__version__, pricepoint.PricepointClient.__name__)',
      ],
      { ...env, PYTHONPATH: target },
      { cwd: target },
    );
    assert.equal(imported.code, 0, imported.stderr);
    // __version__ (client.py) and the version pip installed (pyproject.toml) are one.
    const version = /^version = "([^"]+)"$/m.exec(readFileSync(join(PACKAGE, 'pyproject.toml'), 'utf8'))?.[1];
    assert.ok(existsSync(join(target, `pricepoint-${version}.dist-info`)), `pricepoint-${version}.dist-info`);
    assert.equal(
      imported.stdout.trim(),
      `${join(target, 'pricepoint', '__init__.py')} ${version} PricepointClient`,
    );
    installed = target;
  });

  test('its unittest suites pass against the live server, from the installed copy', async () => {
    assert.ok(python, 'python3 3.9 or newer is installed');
    // The copy pip installed where that ran (the same interpreter can import it: pure Python), else the source.
    const from = installed ?? join(PACKAGE, 'src');
    const run = await runCommand(
      python,
      ['-m', 'unittest', 'discover', '-v', '-s', join(PACKAGE, 'tests'), '-t', join(PACKAGE, 'tests')],
      { ...env, PYTHONPATH: from },
      { cwd: dataDir, timeoutMs: 300_000 },
    );
    assert.equal(run.code, 0, run.stderr);
    const ran = Number(/^Ran (\d+) tests/m.exec(run.stderr)?.[1]);
    assert.ok(ran >= 38, `${ran} tests ran\n${run.stderr}`);
    const skipped = run.stderr.split('\n').filter((line) => / \.\.\. skipped /.test(line));
    if (pandasPython === undefined) {
      assert.ok(
        skipped.every((line) => line.includes('test_live.Pandas')),
        skipped.join('\n'),
      );
    } else {
      assert.deepEqual(skipped, [], 'nothing skipped where pandas is installed');
    }
    for (const name of [
      'test_today_is_each_series',
      'test_a_429_is_waited_out',
      'test_400_days_of_dates',
      'test_an_unknown_series',
    ]) {
      assert.match(run.stderr, new RegExp(`${name}\\w* \\(.*\\) \\.\\.\\. ok$`, 'm'), name);
    }
  });

  test('docs/python.md shows examples/prices.py as it is, and the program prints what it says', async () => {
    assert.equal(pythonBlocks[0], readFileSync(join(REPO, 'examples', 'prices.py'), 'utf8'));
    const [install, run] = shBlocks('docs/python.md');
    assert.match(install?.text ?? '', /pip install --no-build-isolation \.\/packages\/python/);
    assert.match(run?.text ?? '', /PYTHONPATH=packages\/python\/src .*\n.*\n.*python3 examples\/prices\.py/);
    assert.ok(python, 'python3 is installed');
    const out = await runCommand(
      python,
      [join(REPO, 'examples', 'prices.py')],
      { ...env, PYTHONPATH: join(PACKAGE, 'src'), SSL_CERT_FILE: certFile },
      { timeoutMs: 60_000 },
    );
    assert.equal(out.code, 0, `${out.stdout}\n${out.stderr}`);
    const lines = out.stdout.trim().split('\n');
    assert.equal(lines.length, 4, out.stdout);
    for (const [line, symbol] of [
      [lines[0], 'NO1'],
      [lines[1], 'DE-LU'],
    ]) {
      // 31 days of quarter hours (one hour fewer or more over a DST change), offsets on every timestamp.
      const match = new RegExp(
        `^${symbol}: (\\d+) intervals from \\S+[+-]\\d\\d:\\d\\d to \\S+[+-]\\d\\d:\\d\\d; cheapest -?\\d+(\\.\\d+)? at \\S+[+-]\\d\\d:\\d\\d$`,
      ).exec(line ?? '');
      assert.ok(match, line);
      assert.ok(Math.abs(Number(match[1]) - 31 * 96) <= 4, line);
    }
    assert.match(
      lines[2] ?? '',
      /^NO1: cheapest 3 hours from \S+\+0[12]:00 to \S+\+0[12]:00, mean -?\d+\.\d+$/,
    );
    assert.equal(lines[3], "404 unknown_series: Unknown series: NOPE. ['NOPE']");
  });

  test('the install block of docs/python.md runs as written, offline, into .venv', async (t) => {
    if (pipPython === undefined)
      return missing(
        t,
        'no python3 with pip, setuptools, wheel and venv (apt-get install python3-pip python3-venv)',
      );
    const [install] = shBlocks('docs/python.md');
    assert.ok(install);
    const folder = await packageCopy(); // the block's ./packages/python
    // `python3` in the block is the interpreter found with setuptools and wheel (Debian's here).
    const bin = await tempDir('pricepoint-python-bin-');
    const executable = await runCommand(pipPython, ['-c', 'import sys; print(sys.executable)'], env);
    await symlink(executable.stdout.trim(), join(bin, 'python3'));
    const run = await runShBlock(
      `export PATH=${bin}:$PATH PIP_CONFIG_FILE=${devNull} PIP_NO_INDEX=1\n${install.text}`,
      {
        folder,
        port: server.port,
      },
    );
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout.trim().split('\n').at(-1) ?? '', /^\d+\.\d+\.\d+$/, 'it prints the version');
    assert.ok(existsSync(join(folder, '.venv', 'bin', 'python')), 'the environment is in the folder');
  });

  test('the python blocks of docs/python.md run against the server', async (t) => {
    for (const [index, block] of pythonBlocks.entries()) {
      if (index === 0) continue; // examples/prices.py, run above
      const needsPandas = /to_pandas|import pandas/.test(block);
      const interpreter = needsPandas ? pandasPython : python;
      if (interpreter === undefined) {
        missing(
          t,
          `pandas is not installed (apt-get install python3-pandas); python block ${index} did not run`,
        );
        continue;
      }
      const run = await runCommand(
        interpreter,
        ['-c', block],
        { ...env, PYTHONPATH: join(PACKAGE, 'src'), SSL_CERT_FILE: certFile },
        { timeoutMs: 120_000 },
      );
      assert.equal(run.code, 0, `block ${index}:\n${block}\n${run.stdout}\n${run.stderr}`);
      assert.ok(run.stdout.trim().length > 0, `block ${index} prints`);
      if (block.includes('UnknownSeriesError')) assert.match(run.stdout, /^404 unknown_series \['NOPE'\]$/m);
      if (needsPandas) assert.match(run.stdout, /^symbol\s+DE-LU\s+NO1$/m);
    }
  });
});
