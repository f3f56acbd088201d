/**
 * `pricepoint import FILE`: a CSV or JSON file of prices into the database, all or nothing. The file
 * is streamed, so one larger than memory imports; a bad file writes nothing and every bad row (the
 * first 100) is listed with its line number, and the exit status is 1.
 */

import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { extname } from 'node:path';
import { type Command, CommanderError, Option } from 'commander';
import type { Config } from '../config/config.js';
import { withServices } from '../server/compose.js';
import { type ImportFormat, readRows } from '../services/import-formats.js';
import { recordCli } from './cli-audit.js';
import { CliError } from './cli-error.js';

/**
 * `.csv` is CSV; `.json` any JSON document of points (as `application/json` uploads); `.jsonl` and
 * `.ndjson` JSON Lines; anything else needs `--format`.
 */
function formatOf(file: string, given: string | undefined): ImportFormat {
  if (given === 'csv' || given === 'json' || given === 'jsonl') return given;
  const ext = extname(file).toLowerCase();
  if (ext === '.csv') return 'csv';
  if (ext === '.json') return 'json';
  if (ext === '.jsonl' || ext === '.ndjson') return 'jsonl';
  throw new CliError(
    'invalid_parameter',
    `cannot tell the format of ${file} from its name; add --format csv, json or jsonl`,
  );
}

/**
 * Adds `import <file> [--dry-run] [--format csv|json|jsonl] [--json]` to `program`.
 * @example registerImportCommand(program, { config: () => loadConfig(env), print: console.log })
 */
export function registerImportCommand(
  program: Command,
  deps: { config: () => Config; print: (text: string) => void },
): void {
  program
    .command('import <file>')
    .description('import prices from a CSV or JSON file, all or nothing')
    .option('--dry-run', 'check the file and write nothing')
    .addOption(
      new Option('--format <format>', 'file format (default: from the file name)').choices([
        'csv',
        'json',
        'jsonl',
      ]),
    )
    .addOption(new Option('--json', 'print machine-readable JSON'))
    .action(async (file: string, opts: { dryRun?: boolean; format?: string; json?: boolean }) => {
      const format = formatOf(file, opts.format);
      try {
        await access(file);
      } catch (error) {
        throw new CliError('invalid_parameter', `cannot read ${file}: ${(error as Error).message}`);
      }
      const dryRun = opts.dryRun === true;
      const result = await withServices(deps.config(), async ({ imports, audit }) => {
        const run = () => imports.run(readRows(createReadStream(file), format, true), { dryRun });
        if (dryRun) return run();
        // An import is a price write of the series it names (docs/audit.md); a refused file writes nothing.
        let done: Awaited<ReturnType<typeof run>>;
        try {
          done = await run();
        } catch (error) {
          await recordCli(audit, 'prices.write', null, error);
          throw error;
        }
        if (done.ok) await recordCli(audit, 'prices.write', done.series.join(',') || null);
        else await recordCli(audit, 'prices.write', null, new CliError('invalid_prices', 'refused'));
        return done;
      });
      if (result.ok) {
        deps.print(
          opts.json
            ? JSON.stringify({
                written: dryRun ? 0 : result.written,
                checked: result.written,
                series: result.series,
                dryRun,
              })
            : dryRun
              ? `${file}: ${result.written} points of ${result.series.join(', ') || 'no series'} are fine; nothing written (--dry-run)`
              : `imported ${result.written} points of ${result.series.join(', ') || 'no series'}`,
        );
        return;
      }
      const message = `${file} has ${result.errorCount} bad row${result.errorCount === 1 ? '' : 's'}; nothing was written`;
      process.stderr.write(
        opts.json
          ? `${JSON.stringify({ error: { code: 'invalid_prices', message, errorCount: result.errorCount, errors: result.errors } })}\n`
          : `pricepoint: ${message}${result.errorCount > result.errors.length ? ` (the first ${result.errors.length} are listed)` : ''}:\n${result.errors.map((e) => `  line ${e.line}: ${e.reason}`).join('\n')}\n`,
      );
      // Exit status 1 without a second message: `main` maps a CommanderError to its exit code.
      throw new CommanderError(1, 'pricepoint.invalidPrices', message);
    });
}
