/**
 * The fenced `sh` blocks of README.md and docs/*.md, and a way to run one as a reader would: with
 * bash, in a folder of its own that looks like the repository folder (its `.pricepoint` is the test
 * server's data folder), against a server on another port than 8443.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { type Output, REPO, runCommand, tempDir } from './process.js';

export interface ShBlock {
  /** The page, relative to the repository: `README.md`, `docs/api.md`. */
  readonly file: string;
  /** The line of the opening fence. */
  readonly line: number;
  readonly text: string;
}

/** README.md, then every page of docs/ in name order. */
export function docPages(): string[] {
  const docs = readdirSync(join(REPO, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort();
  return ['README.md', ...docs.map((name) => `docs/${name}`)];
}

/** The `sh` blocks of `file`, as written (an indented block loses its indentation). */
export function shBlocks(file: string): ShBlock[] {
  const lines = readFileSync(join(REPO, file), 'utf8').split('\n');
  const blocks: ShBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)```sh\s*$/.exec(lines[i] ?? '');
    if (open === null) continue;
    const indent = open[1]?.length ?? 0;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^ *```\s*$/.test(lines[j] ?? ''); j++)
      body.push((lines[j] ?? '').slice(indent));
    blocks.push({ file, line: i + 1, text: `${body.join('\n')}\n` });
    i = j;
  }
  return blocks;
}

/**
 * A fresh folder standing in for the repository folder: the command, the build, the examples and
 * the installed packages are links to the repository's, and `.pricepoint` is `dataDir`, so a block's
 * `.pricepoint/tls/localhost-cert.pem` and `npx pricepoint` reach the test's server and database,
 * while the files a block writes (`no1.csv`) land in this folder.
 */
export async function repositoryLike(dataDir: string): Promise<string> {
  const folder = await tempDir('pricepoint-doc-block-');
  for (const name of ['bin', 'dist', 'examples', 'node_modules', 'package.json', 'packages', 'tzdata']) {
    await symlink(join(REPO, name), join(folder, name));
  }
  await symlink(dataDir, join(folder, '.pricepoint'));
  return folder;
}

/**

 * Runs `text` with bash in `folder` as written, but for the port of `https://localhost:8443`. Every
 * curl fails on an HTTP error (`--fail-with-body`), so a block that only prints a 4xx problem fails;
 * `curlSeconds` stops each curl after that long (exit 28), for a stream that never ends by itself.
 */
export function runShBlock(
  text: string,
  options: { folder: string; port: number; timeoutMs?: number; curlSeconds?: number },
): Promise<Output> {
  const limit = options.curlSeconds === undefined ? '' : ` --max-time ${options.curlSeconds}`;
  const script = `curl() { command curl --fail-with-body${limit} "$@"; }\n${text.replaceAll('localhost:8443', `localhost:${options.port}`)}`;
  const env: NodeJS.ProcessEnv = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PRICEPOINT_'))),
    // `npx pricepoint` with an empty npx cache would run this folder's `prepare` (a rebuild of dist/).
    npm_config_ignore_scripts: 'true',
    npm_config_update_notifier: 'false',
  };
  return runCommand('bash', ['-e', '-o', 'pipefail', '-c', script], env, {
    cwd: options.folder,
    timeoutMs: options.timeoutMs ?? 180_000,
  });
}
