/**
 * `pricepoint --version` and the server's start-up log say which tz release zone rules come from and
 * where it was found; `PRICEPOINT_TZDIR` and `TZDIR` change it, and a PRICEPOINT_TZDIR that is no tz
 * folder stops the start with a message that names it.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { compareReleases, folderRelease } from '../../src/domain/time/tz-source.js';
import { cleanUp, REPO, runCli, startServer, tempDir } from '../helpers/process.js';

after(cleanUp);

const SHIPPED = join(REPO, 'tzdata');
const VERSION = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).version as string;
const systemRelease = folderRelease('/usr/share/zoneinfo');
/** What the defaults choose here: the system's folder only where it is newer than the shipped copy. */
const expected =
  systemRelease !== undefined && compareReleases(systemRelease, '2026f') > 0
    ? { release: systemRelease, source: 'system', path: '/usr/share/zoneinfo' }
    : { release: '2026f', source: 'shipped', path: SHIPPED };
const defaultLine = `tz ${expected.release} (${expected.source}: ${expected.path})`;

/** A folder with UTC and Oslo from tzdata/ and a tzdata.zi naming `release`. */
async function tzFolder(release: string): Promise<string> {
  const dir = await tempDir('pricepoint-tzdir-');
  mkdirSync(join(dir, 'Etc'));
  mkdirSync(join(dir, 'Europe'));
  copyFileSync(join(SHIPPED, 'Etc', 'UTC'), join(dir, 'Etc', 'UTC'));
  copyFileSync(join(SHIPPED, 'Europe', 'Oslo'), join(dir, 'Europe', 'Oslo'));
  writeFileSync(join(dir, 'tzdata.zi'), `# version ${release}\nZ Etc/UTC 0 - UTC\nZ Europe/Oslo 1 - CET\n`);
  return dir;
}

describe('pricepoint --version', () => {
  test("prints Pricepoint's version and the tz release with its source", async () => {
    const output = await runCli(['--version'], {});
    assert.equal(output.code, 0, output.stderr);
    assert.equal(output.stdout, `pricepoint ${VERSION}\n${defaultLine}\n`);
  });

  test('PRICEPOINT_TZDIR wins whatever its release; TZDIR names the system folder', async () => {
    const old = await tzFolder('2020a');
    const named = await runCli(['-V'], { PRICEPOINT_TZDIR: old });
    assert.equal(named.code, 0, named.stderr);
    assert.equal(named.stdout, `pricepoint ${VERSION}\ntz 2020a (setting: ${old})\n`);
    const newer = await tzFolder('2099a');
    const system = await runCli(['--version'], { TZDIR: newer });
    assert.equal(system.stdout, `pricepoint ${VERSION}\ntz 2099a (system: ${newer})\n`);
  });

  test('a PRICEPOINT_TZDIR that is no tz folder stops with a message naming it', async () => {
    const empty = await tempDir();
    const output = await runCli(['--version'], { PRICEPOINT_TZDIR: empty });
    assert.equal(output.code, 2);
    assert.match(
      output.stderr,
      /^pricepoint: PRICEPOINT_TZDIR: must be a folder of compiled time zone files/,
    );
  });
});

describe('pricepoint serve', () => {
  test('logs the tz release and its source once at start', async () => {
    const dataDir = await tempDir();
    const server = await startServer(['serve'], {
      PRICEPOINT_DATA_DIR: dataDir,
      PRICEPOINT_INSECURE_HTTP: 'true',
    });
    await server.stop(); // the log is written in batches: all of it is out once the process ends
    const lines = server.logs().filter((line) => String(line.msg).startsWith('time zone data'));
    assert.equal(lines.length, 1);
    assert.equal(lines[0]?.msg, `time zone data: ${defaultLine}`);
    assert.deepEqual(lines[0]?.tz, expected);
  });
});
