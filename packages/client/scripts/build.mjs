/**
 * Builds the package twice from the same sources: ES modules into dist/esm (for `import`) and
 * CommonJS into dist/cjs (for `require`), which the `exports` map of package.json points to. The
 * package is `"type": "module"`, so dist/cjs gets its own package.json saying its `.js` files are
 * CommonJS. Run by `npm run build` here and at the root, and before `npm pack`.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

for (const project of ['tsconfig.json', 'tsconfig.cjs.json']) {
  const run = spawnSync(process.execPath, [tsc, '-p', project], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
mkdirSync(new URL('../dist/cjs/', import.meta.url), { recursive: true });
writeFileSync(new URL('../dist/cjs/package.json', import.meta.url), '{ "type": "commonjs" }\n');
