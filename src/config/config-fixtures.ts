/** What the config tests share: config files in a temporary folder, and the refusal they expect. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { ConfigError, loadConfig } from './config.js';

/**
 * A temporary folder for config files, removed when the test file ends.
 * @example const files = configFiles(); loadConfig({ PRICEPOINT_CONFIG: files.write('port: 1') })
 */
export function configFiles(): { readonly dir: string; write(text: string, extension?: string): string } {
  const dir = mkdtempSync(join(tmpdir(), 'pricepoint-config-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  let count = 0;
  return {
    dir,
    /** Writes a config file and returns its absolute path. */
    write(text, extension = 'yaml') {
      const path = join(dir, `config-${++count}.${extension}`);
      writeFileSync(path, text);
      return path;
    },
  };
}

/** Asserts that loading refuses with a ConfigError whose message matches `names` (the setting). */
export function refuses(env: Record<string, string>, names: RegExp): void {
  assert.throws(
    () => loadConfig(env),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
      assert.match(error.message, names);
      return true;
    },
  );
}
