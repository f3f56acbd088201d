/**
 * `pricepoint usage show|export`: usage history and the billing export from the command line
 * (docs/usage-history.md), through the same usage service the API reads with.
 */
import { writeFile } from 'node:fs/promises';
import { type Command, Option } from 'commander';
import type { Config } from '../config/config.js';
import { GRANULARITIES, type Granularity, isRangeProblem, usageRange } from '../domain/usage/usage-range.js';
import { withServices } from '../server/compose.js';
import type { Services } from '../server/services.js';
import {
  DEFAULT_EVENT_NAMES,
  EXPORT_FORMATS,
  type ExportFormat,
  type ExportKey,
  exportRows,
  formatExport,
  monthSpan,
} from '../services/usage-export.js';
import type { UsageHistory } from '../services/usage-history.js';
import { usageCsv, usageReport } from '../services/usage-report.js';
import type { KeyRecord } from '../stores/types.js';
import { CliError } from './cli-error.js';

export interface UsageCommandsDeps {
  readonly print: (text: string) => void;
  readonly config: () => Config;
  /** Epoch milliseconds; tests pass a fixed time. */
  readonly clock?: () => number;
}

const bad = (option: string, reason: string) => new CliError('invalid_parameter', `${option}: ${reason}`);

/** `value` as one of `allowed`, in any letter case, or a refusal naming `option`. */
function oneOf<const T extends readonly string[]>(option: string, value: string, allowed: T): T[number] {
  const found = allowed.find((a) => a.toLowerCase() === value.toLowerCase());
  if (found === undefined) throw bad(option, `"${value.slice(0, 40)}" is not one of ${allowed.join(', ')}`);
  return found;
}

/** Opens the stores for one command and runs it with the usage service and the key store. */
function withUsage<T>(config: Config, run: (usage: UsageHistory, services: Services) => Promise<T>) {
  return withServices(config, async (services) => {
    if (services.usage === undefined)
      throw new CliError('invalid_option', 'this database keeps no usage history');
    return run(services.usage, services);
  });
}

/** A key as the export shows it; the customer reference where the key store keeps one. */
function exportKey(record: KeyRecord): ExportKey {
  return { id: record.id, name: record.name, tier: record.tier, customerRef: record.customerRef ?? null };
}

/** Adds `usage show|export` to `program`. */
export function registerUsageCommands(
  program: Command,
  { print, config, clock = Date.now }: UsageCommandsDeps,
) {
  const json = () => new Option('--json', 'print machine-readable JSON');
  const usage = program.command('usage').description('usage history per key and the billing export');

  usage
    .command('show')
    .description('counted requests by outcome and units, per hour or day, of one key or of every key summed')
    .option('--key <id>', 'one key (default: every key, summed)')
    .option('--from <when>', 'a date, yesterday, today, tomorrow or an RFC 3339 timestamp')
    .option(
      '--to <when>',
      'a date (included), yesterday, today, tomorrow or an RFC 3339 timestamp (excluded)',
    )
    .option('--granularity <g>', `${GRANULARITIES.join(' or ')}`, 'PT1H')
    .option('--tz <zone>', 'IANA zone of the days (P1D) and of the times written', 'UTC')
    .option('--format <format>', 'csv or json', 'csv')
    .addOption(json())
    .action(
      async (opts: {
        key?: string;
        from?: string;
        to?: string;
        granularity: string;
        tz: string;
        format: string;
        json?: boolean;
      }) => {
        const granularity: Granularity = oneOf('--granularity', opts.granularity, GRANULARITIES);
        const format = opts.json ? 'json' : oneOf('--format', opts.format, ['csv', 'json'] as const);
        const range = usageRange({ from: opts.from, to: opts.to, granularity, tz: opts.tz }, clock());
        if (isRangeProblem(range)) throw bad(`--${range.parameter}`, range.reason);
        const report = await withUsage(config(), async (history, { stores }) => {
          if (opts.key !== undefined && (await stores.keys.get(opts.key)) === undefined) {
            throw new CliError('not_found', `there is no key with id ${opts.key.slice(0, 100)}`);
          }
          return usageReport(opts.key ?? null, range, await history.read(range.buckets, opts.key));
        });
        print(format === 'json' ? JSON.stringify(report) : usageCsv(report).trimEnd());
      },
    );

  usage
    .command('export')
    .description(
      'one row per key and UTC day of a month, for billing; the running month through today, marked partial',
    )
    .requiredOption('--month <YYYY-MM>', 'the month (UTC)')
    .option('--format <format>', 'csv, cloudevents (alias openmeter) or stripe', 'csv')
    .option('--out <file>', 'write to this file instead of standard output')
    .option(
      '--event-name <name>',
      `CloudEvents type or Stripe event_name (default ${DEFAULT_EVENT_NAMES.cloudevents} or ${DEFAULT_EVENT_NAMES.stripe})`,
    )
    .addOption(json())
    .action(
      async (opts: { month: string; format: string; out?: string; eventName?: string; json?: boolean }) => {
        const format: ExportFormat = oneOf('--format', opts.format, EXPORT_FORMATS);
        if (opts.eventName !== undefined && !/^[A-Za-z0-9._:-]{1,100}$/.test(opts.eventName)) {
          throw bad('--event-name', 'use 1 to 100 letters, digits or . _ : -');
        }
        const now = clock();
        const span = monthSpan(opts.month, now);
        if (typeof span === 'string') throw bad('--month', span);
        const rows = await withUsage(config(), async (history, { stores }) => {
          const keys = new Map((await stores.keys.list()).map((k) => [k.id, exportKey(k)]));
          return exportRows(await history.keyDays(span.from, span.to), keys, now);
        });
        const text = formatExport(rows, format, opts.eventName);
        if (opts.out === undefined) {
          if (text !== '') print(text.replace(/\r?\n$/, ''));
          return;
        }
        try {
          await writeFile(opts.out, text);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
          throw bad('--out', `cannot write ${opts.out}: ${code}`);
        }
        const partial = rows.find((row) => row.partial)?.date ?? null;
        const summary = { month: opts.month, format, rows: rows.length, out: opts.out, partial };
        print(
          opts.json
            ? JSON.stringify(summary)
            : `wrote ${rows.length} rows of ${opts.month} as ${format} to ${opts.out}${partial ? `; ${partial} is partial` : ''}`,
        );
      },
    );
}
