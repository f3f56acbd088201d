/**
 * The data folder and the SQLite files hold key hashes: they are owner-only (folder 0700, the
 * database and its `-wal` and `-shm` 0600) whatever the umask, for a new data folder and for one an
 * older version created 0755/0644. Before, they were 0755/0644, readable by every local user.
 */
import assert from 'node:assert/strict';
import { chmod, mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { BIN, cleanUp, cliEnv, runCommand, startServer, tempDir } from '../helpers/process.js';

after(cleanUp);

async function modes(dir: string): Promise<Record<string, string>> {
  const mode = async (path: string) => ((await stat(path)).mode & 0o777).toString(8);
  const db = join(dir, 'pricepoint.db');
  return {
    folder: await mode(dir),
    database: await mode(db),
    wal: await mode(`${db}-wal`),
    shm: await mode(`${db}-shm`),
  };
}

const OWNER_ONLY = { folder: '700', database: '600', wal: '600', shm: '600' };

test('a new data folder and its SQLite files are owner-only, under a umask of 0', async () => {
  const dir = join(await tempDir('pricepoint-modes-'), 'data');
  // `sh -c 'umask 0; exec …'`: the CLI creates everything under the loosest umask there is.
  const started = await runCommand(
    'sh',
    ['-c', `umask 0; exec "${process.execPath}" "${BIN}" keys create --tier free --name umask --json`],
    cliEnv({ PRICEPOINT_DATA_DIR: dir }),
  );
  assert.equal(started.code, 0, started.stderr);
  const serving = await startServer(['serve'], { PRICEPOINT_DATA_DIR: dir });
  assert.deepEqual(await modes(dir), OWNER_ONLY);
  await serving.stop();
});

test('a data folder an older version left readable is made owner-only at start', async () => {
  const dir = join(await tempDir('pricepoint-modes-'), 'data');
  await mkdir(dir, { mode: 0o755 });
  const first = await startServer(['serve'], { PRICEPOINT_DATA_DIR: dir });
  await first.stop();
  const db = join(dir, 'pricepoint.db');
  await chmod(dir, 0o755);
  await chmod(db, 0o644);
  for (const file of [`${db}-wal`, `${db}-shm`]) {
    await writeFile(file, '', { flag: 'a' });
    await chmod(file, 0o644);
  }
  const again = await startServer(['serve'], { PRICEPOINT_DATA_DIR: dir });
  assert.deepEqual(await modes(dir), OWNER_ONLY);
  await again.stop();
});
