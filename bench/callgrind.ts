/**
 * What the instruction-counting benches share (bench/instructions.ts, bench/consumer-prices.ts): a
 * server runs under `valgrind --tool=callgrind` with counting off, and each measured stretch is
 * switched on, dumped and read back with `callgrind_control` (bench/README.md says why instructions).
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Throws when valgrind is not installed: the bench cannot count without it. */
export function requireValgrind(): void {
  if (!existsSync('/usr/bin/valgrind') && !existsSync('/usr/local/bin/valgrind')) {
    throw new Error('valgrind is not installed (apt-get install valgrind)');
  }
}

/** The `totals:` of the newest callgrind dump of `pid` in `dir`. */
export function newestTotal(dir: string, pid: number, dumpsBefore: number): number {
  const prefix = `cg.${pid}.out.`;
  const dumps = readdirSync(dir).filter((f) => f.startsWith(prefix));
  if (dumps.length <= dumpsBefore) throw new Error(`callgrind wrote no dump for ${pid}`);
  const newest = dumps.sort((a, b) => Number(a.slice(prefix.length)) - Number(b.slice(prefix.length))).at(-1);
  const text = readFileSync(join(dir, newest ?? ''), 'utf8');
  const total = /^totals: (\d+)$/m.exec(text.slice(text.lastIndexOf('\ntotals:')));
  if (total === null) throw new Error(`no totals in ${newest}`);
  return Number(total[1]);
}

/** `callgrind_control ARGS PID`: `--instr=on`, `--instr=off`, `--dump`. */
export const control = (pid: number, ...args: string[]) =>
  execFileSync('callgrind_control', [...args, String(pid)], { stdio: 'ignore' });

/** `control` without blocking the event loop, so that the caller can go on using its connections meanwhile. */
export const controlAsync = (pid: number, ...args: string[]) =>
  new Promise<void>((resolve, reject) =>
    execFile('callgrind_control', [...args, String(pid)], (error) => (error ? reject(error) : resolve())),
  );

export const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
/** The middle count (the mean of the middle two for an even number). */
export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const half = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[half] as number) : mean(sorted.slice(half - 1, half + 1));
};
/** How far apart the counts of one setup are, as a share of their mean. */
export const spread = (values: number[]) => (Math.max(...values) - Math.min(...values)) / mean(values);
export const thousands = (n: number) => `${(n / 1000).toFixed(1)}k`;
