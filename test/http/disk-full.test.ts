/**
 * A full disk, for real: the server's data folder is a small tmpfs (mounting one needs root; the
 * test is skipped with the reason where it cannot). An upload that does not fit answers 503 with a
 * detail that names the full disk (docs/using-the-api.md "Errors"), nothing of it is stored, reads go on, and
 * `/readyz` says `degraded` with `checks.disk: "full"`; once the disk has room again, the next
 * write succeeds and `/readyz` is `ready`. Before, the answer said "A database cannot be reached"
 * and `/readyz` stayed ready. A small write that still fits (the server's own last-used times, written
 * every 5 s, or a new key) said nothing about room for prices: it used to turn `/readyz` back to
 * ready while the disk was as full as before.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { cleanUp, httpsClient, operatorKey, startServer, tempDir } from '../helpers/process.js';

const mounted: string[] = [];
after(async () => {
  // Lazily: the server may still hold files there until cleanUp kills it.
  for (const dir of mounted) execFileSync('umount', ['-l', dir]);
  await cleanUp();
});

/** A tmpfs of `size` at a fresh folder, or why there cannot be one. */
async function smallDisk(size: string): Promise<string | { skip: string }> {
  const dir = join(await tempDir('pricepoint-full-'), 'data');
  await mkdir(dir);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    return { skip: `cannot mount a tmpfs (needs root): ${String((error as Error).message).split('\n')[0]}` };
  }
  mounted.push(dir);
  return dir;
}

/** `start,price` CSV of `days` days of quarter hours from 2000 on, with prices long enough to fill pages. */
function quarterHours(days: number, from = Date.parse('2000-01-01T00:00:00Z')): string {
  const rows = ['start,price'];
  for (let i = 0; i < days * 96; i++) {
    rows.push(
      `${new Date(from + i * 900_000).toISOString().slice(0, 19)}Z,${i % 1000}.${String(i).padStart(11, '7').slice(-11)}`,
    );
  }
  return `${rows.join('\n')}\n`;
}

test('a full disk: the upload says so, reads go on, /readyz reports it, and writes work again once there is room', async (t) => {
  const dir = await smallDisk('3m');
  if (typeof dir !== 'string') {
    t.skip(dir.skip);
    return;
  }
  const settings = { PRICEPOINT_DATA_DIR: dir };
  const admin = await operatorKey(settings);
  const server = await startServer(['serve'], settings);
  const client = httpsClient(join(dir, 'tls', 'localhost-cert.pem'));
  const send = (method: 'PUT' | 'POST', path: string, type: string, body: string) =>
    client.send(method, `${server.url}${path}`, { 'x-api-key': admin, 'content-type': type }, body);
  const series = {
    name: 'Full',
    kind: 'electricity',
    currency: 'EUR',
    unit: 'MWh',
    timezone: 'UTC',
    resolution: 'PT15M',
  };
  assert.equal(
    (await send('PUT', '/api/v1/series/FULL', 'application/json', JSON.stringify(series))).status,
    201,
  );
  const first = await send('PUT', '/api/v1/series/FULL/prices', 'text/csv', quarterHours(1));
  assert.equal(first.status, 200, first.text);
  const readDay = () =>
    client.get(`${server.url}/api/v1/prices/2000-01-01?symbols=FULL&format=csv`, { 'x-api-key': admin });
  const before = await readDay();
  assert.equal(before.status, 200, before.text);
  const ready = await client.get(`${server.url}/readyz`);
  assert.equal(JSON.parse(ready.text).checks.disk, 'ok', `/readyz sees room at first: ${ready.text}`);

  // About 140,000 points (several MB in the database and its WAL) into a 3 MB disk.
  const full = await send(
    'PUT',
    '/api/v1/series/FULL/prices',
    'text/csv',
    quarterHours(1_500, Date.parse('2001-01-01T00:00:00Z')),
  );
  assert.equal(full.status, 503, full.text);
  const problem = JSON.parse(full.text) as { code: string; detail: string };
  assert.equal(problem.code, 'service_unavailable');
  assert.match(problem.detail, /disk is full/, 'the detail names the full disk');
  assert.match(problem.detail, /nothing was written/);

  // A few hundred bytes still fit where the refused upload was rolled back (the server's last-used
  // times are such a write, every 5 s): that is no room for prices.
  const key = await send(
    'POST',
    '/api/v1/keys',
    'application/json',
    JSON.stringify({ name: 'small', tier: 'free' }),
  );
  assert.equal(key.status, 201, `a small write still fits: ${key.text}`);
  const degraded = await client.get(`${server.url}/readyz`);
  assert.equal(
    degraded.status,
    200,
    `reads are still served, so the instance stays in rotation: ${degraded.text}`,
  );
  assert.deepEqual(
    { status: JSON.parse(degraded.text).status, disk: JSON.parse(degraded.text).checks.disk },
    { status: 'degraded', disk: 'full' },
    '/readyz reports the full disk',
  );
  const after = await readDay();
  assert.equal(after.text, before.text, 'committed prices are still served');
  const refused = await client.get(`${server.url}/api/v1/prices/2001-01-01?symbols=FULL`, {
    'x-api-key': admin,
  });
  assert.deepEqual(JSON.parse(refused.text).series[0].prices, [], 'nothing of the refused upload is stored');

  execFileSync('mount', ['-o', 'remount,size=64m', dir]);
  const again = await send('PUT', '/api/v1/series/FULL/prices', 'text/csv', quarterHours(2));
  assert.equal(again.status, 200, `a write succeeds once there is room: ${again.text}`);
  const readyAgain = await client.get(`${server.url}/readyz`);
  assert.equal(JSON.parse(readyAgain.text).status, 'ready', readyAgain.text);
});
