/**
 * Which tz database Pricepoint reads zone rules from (docs/operating.md "Time zone data"): the folder the
 * operator names (`PRICEPOINT_TZDIR`), else the newest release among the operating system's zoneinfo
 * (`TZDIR`, else /usr/share/zoneinfo), the copy shipped in tzdata/ and Node's own ICU data, which is
 * used only when it is strictly the newest (its rules cannot be updated without a new Node).
 */
import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type TzSourceKind = 'setting' | 'system' | 'shipped' | 'icu';

export interface TzSource {
  /** The tz release, such as `2026f`; `unknown` when a named folder does not say. */
  readonly release: string;
  readonly source: TzSourceKind;
  /** The folder of compiled zone files; none for ICU. */
  readonly path?: string;
}

/** tzdata/ at the package root: three folders up from src/domain/time and from dist/domain/time. */
export const SHIPPED_TZDIR = fileURLToPath(new URL('../../../tzdata', import.meta.url));

const RELEASE = /^(\d{4})([a-z]+)$/;

/**
 * Orders tz releases: by year, then by letters (`z` is followed by `za`, as the tz project plans).
 * @example compareReleases('2025c', '2026f') < 0 // true
 */
export function compareReleases(a: string, b: string): number {
  const [, yearA = '', lettersA = ''] = RELEASE.exec(a) ?? [];
  const [, yearB = '', lettersB = ''] = RELEASE.exec(b) ?? [];
  return (
    Number(yearA) - Number(yearB) ||
    lettersA.length - lettersB.length ||
    (lettersA < lettersB ? -1 : lettersA > lettersB ? 1 : 0)
  );
}

/** The release a zoneinfo folder says it holds: `tzdata.zi`'s first line, else `+VERSION`. */
export function folderRelease(dir: string): string | undefined {
  const firstLine = readStart(join(dir, 'tzdata.zi'), 64)?.split('\n')[0];
  const fromZi = /^# version (\S+)$/.exec(firstLine ?? '')?.[1];
  const release = fromZi ?? readStart(join(dir, '+VERSION'), 32)?.trim();
  return release !== undefined && RELEASE.test(release) ? release : undefined;
}

/**
 * Why `dir` is not a folder of compiled zone files, or `undefined` when it is one: it must hold TZif
 * files, `UTC` or `Etc/UTC` among them.
 */
export function tzFolderProblem(dir: string): string | undefined {
  try {
    if (!statSync(dir).isDirectory()) return `${dir} is not a folder`;
  } catch (error) {
    return `cannot read ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
  }
  const utc = [join(dir, 'Etc', 'UTC'), join(dir, 'UTC')].some((file) => readStart(file, 4) === 'TZif');
  return utc ? undefined : `${dir} holds no compiled zone file Etc/UTC or UTC (TZif)`;
}

function readStart(file: string, bytes: number): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const buffer = Buffer.alloc(bytes);
    const read = readSync(fd, buffer, 0, bytes, 0);
    return buffer.subarray(0, read).toString('latin1');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export interface TzSourceOptions {
  /** `PRICEPOINT_TZDIR`: used whatever its release (config.ts has checked it is a tz folder). */
  readonly setting?: string | undefined;
  /** The operating system's zoneinfo: `TZDIR`, else /usr/share/zoneinfo. */
  readonly systemDir: string;
  /** tzdata/ unless a test says otherwise. */
  readonly shippedDir?: string;
  /** Node's `process.versions.tz` unless a test says otherwise. */
  readonly icuRelease?: string | undefined;
}

/**
 * Picks the tz database to read: the setting, else the newest of system, shipped and ICU. A folder
 * whose release cannot be read is never preferred; on a tie the system's folder wins over the
 * shipped copy (the operator's package manager keeps it), and either wins over ICU.
 * @example chooseTzSource({ systemDir: '/usr/share/zoneinfo' }) // { release: '2026f', source: 'shipped', path: '/app/tzdata' }
 */
export function chooseTzSource(options: TzSourceOptions): TzSource {
  if (options.setting !== undefined) {
    return { release: folderRelease(options.setting) ?? 'unknown', source: 'setting', path: options.setting };
  }
  const candidates: TzSource[] = [];
  for (const [source, path] of [
    ['system', options.systemDir],
    ['shipped', options.shippedDir ?? SHIPPED_TZDIR],
  ] as const) {
    const release = folderRelease(path);
    if (release !== undefined && tzFolderProblem(path) === undefined)
      candidates.push({ release, source, path });
  }
  const icuRelease = 'icuRelease' in options ? options.icuRelease : process.versions.tz;
  let best = candidates[0];
  for (const candidate of candidates.slice(1)) {
    if (best === undefined || compareReleases(candidate.release, best.release) > 0) best = candidate;
  }
  if (icuRelease !== undefined && RELEASE.test(icuRelease)) {
    if (best === undefined || compareReleases(icuRelease, best.release) > 0)
      return { release: icuRelease, source: 'icu' };
  }
  return best ?? { release: icuRelease ?? 'unknown', source: 'icu' };
}

/** How `pricepoint --version` and the start-up log say it: `tz 2026f (shipped: /app/tzdata)`. */
export function describeTzSource(tz: TzSource): string {
  return `tz ${tz.release} (${tz.source}${tz.path === undefined ? '' : `: ${tz.path}`})`;
}

/** The names `tzdata.zi` declares (`Z` zones and `L target link` links), when the folder has one. */
export function readTzdataZi(
  dir: string,
): { zones: string[]; links: [link: string, target: string][] } | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, 'tzdata.zi'), 'utf8');
  } catch {
    return undefined;
  }
  const zones: string[] = [];
  const links: [string, string][] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(/\s+/);
    if (fields[0] === 'Z' && fields[1] !== undefined) zones.push(fields[1]);
    if (fields[0] === 'L' && fields[1] !== undefined && fields[2] !== undefined)
      links.push([fields[2], fields[1]]);
  }
  return { zones, links };
}
