/**
 * The served OpenAPI document, linted by two tools nobody here wrote, with their own rule sets
 * unchanged (redocly.yaml, spectral.yaml beside this file): Redocly CLI's recommended rules and
 * Spectral's `oas` ruleset. No error and no warning is allowed. Both run offline: Redocly's
 * telemetry and update check are switched off, Spectral's ruleset ships with it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createHarness } from '../helpers/harness.js';
import { runCommand } from '../helpers/process.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const BIN = join(HERE, '..', '..', 'node_modules', '.bin');

const dir = mkdtempSync(join(tmpdir(), 'pricepoint-openapi-lint-'));
const file = join(dir, 'openapi.json');
const h = await createHarness();
after(async () => {
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});
writeFileSync(file, (await h.app.inject({ url: '/api/v1/openapi.json' })).body);

const env = {
  ...process.env,
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
  NO_COLOR: '1',
};

describe('the OpenAPI document passes the linters', () => {
  test('Redocly CLI, recommended rules: no error, no warning', async () => {
    const run = await runCommand(
      join(BIN, 'redocly'),
      ['lint', '--config', join(HERE, 'redocly.yaml'), '--format=json', file],
      env,
      { timeoutMs: 100_000 },
    );
    const report = JSON.parse(run.stdout) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string; location?: { pointer?: string }[] }[];
    };
    const problems = report.problems.map((p) => `${p.ruleId} at ${p.location?.[0]?.pointer}: ${p.message}`);
    assert.deepEqual(problems, []);
    assert.deepEqual(report.totals, { ...report.totals, errors: 0, warnings: 0 });
    assert.equal(run.code, 0, run.stderr);
  });

  test("Spectral, the 'oas' ruleset: no error, no warning", async () => {
    const output = join(dir, 'spectral.json');
    const run = await runCommand(
      join(BIN, 'spectral'),
      ['lint', '--ruleset', join(HERE, 'spectral.yaml'), '--format', 'json', '--output', output, file],
      env,
      { timeoutMs: 100_000 },
    );
    assert.equal(run.code, 0, `${run.stdout.slice(0, 2000)}\n${run.stderr.slice(0, 2000)}`);
    const results = JSON.parse(readFileSync(output, 'utf8')) as {
      code: string;
      message: string;
      severity: number;
      path: string[];
    }[];
    // Severity 0 is an error, 1 a warning, 2 information, 3 a hint.
    const problems = results
      .filter((r) => r.severity <= 1)
      .map((r) => `${r.code} at ${r.path.join('.')}: ${r.message}`);
    assert.deepEqual(problems, []);
  });
});
