/**
 * Import benchmark, not a test: generates CSV files of 15-minute prices for one
 * year (300 series, about 10.5 million points, and 30 series, a tenth of that), imports each into a
 * fresh SQLite file with the compiled `pricepoint import` in a child process, and prints points per
 * second and the child's peak memory, so the two runs show whether memory grows with the file.
 * Run with `npm run bench:import` (it builds first). `BENCH_SERIES=60` runs a smaller pair.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedStores } from '../src/stores/sqlite/index.js';
import { REPO, symbolOf, writePricesCsv } from './lib.js';

const FROM = Date.UTC(2025, 0, 1);
const TO = Date.UTC(2026, 0, 1);
const SERIES = Number(process.env.BENCH_SERIES ?? 300);

/** A fresh data folder whose database knows the benchmark series. */
async function prepare(dataDir: string, series: number): Promise<void> {
  const stores = await openEmbeddedStores(join(dataDir, 'pricepoint.db'));
  for (let s = 0; s < series; s++) {
    await stores.prices.upsertSeries({
      symbol: symbolOf(s),
      name: `Benchmark ${s}`,
      kind: 'electricity',
      currency: 'EUR',
      unit: 'MWh',
      timezone: 'Europe/Berlin',
      resolution: 'PT15M',
    });
  }
  await stores.close();
}

interface ChildReport {
  status: number;
  seconds: number;
  maxRssKiB: number;
}

function importInChild(file: string, dataDir: string): Promise<ChildReport & { stdout: string }> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = {};
    for (const [name, value] of Object.entries(process.env))
      if (!name.startsWith('PRICEPOINT_')) env[name] = value;
    const child = spawn(
      process.execPath,
      [join(REPO, 'bench', 'import-child.mjs'), 'import', file, '--json'],
      {
        env: { ...env, PRICEPOINT_DATA_DIR: dataDir },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    child.once('error', reject);
    child.once('close', () => {
      const last = stderr.trim().split('\n').pop() ?? '';
      try {
        const report = JSON.parse(last) as ChildReport;
        if (report.status !== 0) reject(new Error(`import failed:\n${stderr}`));
        else resolve({ ...report, stdout });
      } catch {
        reject(new Error(`no report from the import child:\n${stderr}`));
      }
    });
  });
}

async function run(dir: string, series: number) {
  const file = join(dir, `prices-${series}.csv`);
  const dataDir = join(dir, `data-${series}`);
  const points = await writePricesCsv(file, series, FROM, TO);
  const bytes = (await stat(file)).size;
  await prepare(dataDir, series);
  const report = await importInChild(file, dataDir);
  const written = (JSON.parse(report.stdout) as { written: number }).written;
  if (written !== points) throw new Error(`imported ${written} of ${points} points`);
  const result = {
    series,
    points,
    fileMiB: bytes / 2 ** 20,
    seconds: report.seconds,
    pointsPerSecond: points / report.seconds,
    peakRssMiB: report.maxRssKiB / 1024,
  };
  console.log(
    `${String(series).padStart(4)} series: ${points.toLocaleString('en')} points, ${result.fileMiB.toFixed(0)} MiB of CSV, ` +
      `${result.seconds.toFixed(1)} s, ${Math.round(result.pointsPerSecond).toLocaleString('en')} points/s, ` +
      `peak RSS ${result.peakRssMiB.toFixed(0)} MiB`,
  );
  await rm(file, { force: true });
  await rm(dataDir, { recursive: true, force: true });
  return result;
}

const dir = await mkdtemp(join(tmpdir(), 'pricepoint-bench-'));
try {
  console.log(
    `node ${process.version}; one year of 15-minute prices per series, imported with pricepoint import`,
  );
  const small = await run(dir, Math.max(1, Math.round(SERIES / 10)));
  const large = await run(dir, SERIES);
  console.log(
    `points ratio ${(large.points / small.points).toFixed(1)}x, peak RSS ratio ${(large.peakRssMiB / small.peakRssMiB).toFixed(2)}x; ` +
      `goal 200,000 points/s: ${large.pointsPerSecond >= 200_000 ? 'met' : 'NOT met'}`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
