/** The modules of src/ and their relative imports, read from the sources, for the house tests. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { REPO } from '../helpers/process.js';

export const SRC = join(REPO, 'src');

/** Every module under `dir` (tests excluded), as absolute paths of .ts files. */
export function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * The relative module specifiers in `text` (`'./x.js'`), of imports and re-exports, type-only ones
 * included; with `dynamic` also `import('...')` and bare `import '...'`.
 */
export function specifiersIn(text: string, { dynamic = false } = {}): string[] {
  const found = [...text.matchAll(/^(?:import|export)\b[^;]*?\sfrom\s+'(\.[^']+)'/gms)];
  if (dynamic) found.push(...text.matchAll(/(?:\bimport\s*\(\s*|^import\s+)'(\.[^']+)'/gm));
  return found.map((match) => match[1] ?? '');
}

/** The relative modules `file` imports or re-exports (`specifiersIn`), as paths of .ts files. */
export function importsOf(file: string, options: { dynamic?: boolean } = {}): string[] {
  return specifiersIn(readFileSync(file, 'utf8'), options).map((specifier) =>
    resolve(dirname(file), specifier.replace(/\.js$/, '.ts')),
  );
}
