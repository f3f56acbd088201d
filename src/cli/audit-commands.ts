/**
 * `pricepoint audit list`: the audit log of admin actions (docs/audit.md), through the same audit
 * service as `GET /api/v1/audit`, newest first, with the same filters.
 */
import { type Command, Option } from 'commander';
import type { Config } from '../config/config.js';
import { printable, printableJson } from '../domain/text/plain-text.js';
import { parseTimestamp } from '../domain/time/timestamp.js';
import { withServices } from '../server/compose.js';
import { AUDIT_ACTIONS } from '../services/audit-service.js';
import type { AuditEntry } from '../stores/types.js';
import { CliError } from './cli-error.js';

export interface AuditCommandsDeps {
  readonly print: (text: string) => void;
  readonly config: () => Config;
}

const HEADER = 'id\ttime\tactor\taddress\taction\ttarget\tstatus\tcode\tkey';

/** One entry per line, tab-separated, every field with control characters escaped. */
function entryLine(e: AuditEntry): string {
  const fields = [
    String(e.id),
    new Date(e.time).toISOString(),
    e.actor,
    e.address ?? '-',
    e.action,
    e.target ?? '-',
    e.status === null ? '-' : String(e.status),
    e.code ?? '-',
    // The key a claim or sign-up made (docs/invitations.md).
    e.keyId ?? '-',
  ];
  return fields.map(printable).join('\t');
}

function timeOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseTimestamp(value);
  if (ms === undefined) {
    throw new CliError(
      'invalid_parameter',
      `--${name}: "${value}" is not a date (YYYY-MM-DD) or RFC 3339 timestamp`,
    );
  }
  return ms;
}

/** Adds `audit list` to `program`. */
export function registerAuditCommands(program: Command, { print, config }: AuditCommandsDeps): void {
  const audit = program.command('audit').description('the audit log of admin actions');
  audit
    .command('list')
    .description('admin actions, newest first: who, when, from where, what, to what and how it ended')
    .option('--from <time>', 'entries at or after: YYYY-MM-DD (00:00 UTC) or an RFC 3339 timestamp')
    .option('--to <time>', 'entries before: YYYY-MM-DD (00:00 UTC) or an RFC 3339 timestamp')
    .addOption(new Option('--action <action>', 'one action').choices([...AUDIT_ACTIONS]))
    .option('--actor <id>', 'entries of one acting key, by its id, or "cli" for this command line')
    .option('--limit <n>', 'at most this many entries, 1 to 10000', '100')
    .addOption(new Option('--json', 'print machine-readable JSON'))
    .action(
      async (opts: {
        from?: string;
        to?: string;
        action?: string;
        actor?: string;
        limit: string;
        json?: boolean;
      }) => {
        const limit = Number(opts.limit);
        if (!/^\d{1,5}$/.test(opts.limit) || limit < 1 || limit > 10_000) {
          throw new CliError(
            'invalid_parameter',
            `--limit: "${opts.limit}" is not a whole number from 1 to 10000`,
          );
        }
        const from = timeOption('from', opts.from);
        const to = timeOption('to', opts.to);
        const entries = await withServices(config(), ({ audit: log }) =>
          log.list({
            ...(from !== undefined && { from }),
            ...(to !== undefined && { to }),
            ...(opts.action !== undefined && { action: opts.action }),
            ...(opts.actor !== undefined && { actor: opts.actor }),
            limit,
          }),
        );
        if (opts.json) return print(printableJson(entries));
        print(entries.length ? [HEADER, ...entries.map(entryLine)].join('\n') : 'no entries');
      },
    );
}
