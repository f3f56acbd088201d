/**
 * `pricepoint invitations ...` (docs/invitations.md): invitations from the command line, through the
 * same service as the admin API. `create` prints the token and its claim link once; nothing else
 * prints a token or a hash. Creating and revoking are recorded in the audit log with actor `cli`.
 */
import { type Command, Option } from 'commander';
import type { Config } from '../config/config.js';
import { printable, printableJson } from '../domain/text/plain-text.js';
import { parseDuration } from '../domain/time/duration.js';
import { parseTimestamp } from '../domain/time/timestamp.js';
import { withServices } from '../server/compose.js';
import type { InvitationDraft, InvitationView } from '../services/invitation-service.js';
import { SCOPES } from '../stores/types.js';
import { audited } from './cli-audit.js';
import { CliError } from './cli-error.js';
import { parseScopes } from './key-commands.js';

export interface InvitationCommandsDeps {
  readonly print: (text: string) => void;
  readonly config: () => Config;
}

/** A time as an operator gives it: a duration from now (`7d`), a date (00:00 UTC) or an RFC 3339 timestamp. */
function parseWhen(option: string, value: string, now: number): number {
  const duration = parseDuration(value);
  if (duration !== undefined) return now + duration;
  const ms = parseTimestamp(value);
  if (ms === undefined) {
    throw new CliError(
      'invalid_parameter',
      `${option}: "${value}" is not a duration (7d, 12h), a date (YYYY-MM-DD) or an RFC 3339 timestamp`,
    );
  }
  return ms;
}

function parseUses(value: string): number {
  if (!/^\d{1,9}$/.test(value.trim())) {
    throw new CliError('invalid_parameter', `--uses: "${value}" is not a whole number from 1 to 1000`);
  }
  return Number(value);
}

/**
 * The address the claim link points at: the configured public URL, else the address `pricepoint
 * serve` prints at start on this machine (docs/invitations.md).
 */
function publicBase(config: Config): string {
  if (config.publicUrl !== undefined) return config.publicUrl.replace(/\/+$/, '');
  return `${config.tls.mode === 'off' ? 'http' : 'https'}://localhost:${config.port}`;
}

const iso = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString());

const LIST_HEADER = 'id\ttier\tscopes\tstate\tclaimed\texpires\tnote';

function line(i: InvitationView): string {
  const fields = [
    i.id,
    i.tier,
    i.scopes.join(','),
    i.state,
    `${i.claimed}/${i.uses}`,
    iso(i.expiresAt),
    i.note ?? '-',
  ];
  return fields.map(printable).join('\t');
}

function details(i: InvitationView): string {
  const fields: [string, string][] = [
    ['id', i.id],
    ['tier', i.tier],
    ['scopes', i.scopes.join(',')],
    ['state', i.state],
    ['claimed', `${i.claimed} of ${i.uses}`],
    ['created', iso(i.createdAt)],
    ['expires', iso(i.expiresAt)],
    ['key expiry', i.keyExpiresAt === null ? 'none' : iso(i.keyExpiresAt)],
    ['revoked', iso(i.revokedAt)],
    ['note', i.note ?? '-'],
  ];
  return fields.map(([name, value]) => `${name.padEnd(11)}${printable(value)}`).join('\n');
}

/** Adds `invitations create|list|show|revoke` to `program`. */
export function registerInvitationCommands(
  program: Command,
  { print, config }: InvitationCommandsDeps,
): void {
  const json = () => new Option('--json', 'print machine-readable JSON');
  const invitations = program
    .command('invitations')
    .description('make, list, show and revoke invitations to claim a key (docs/invitations.md)');
  invitations
    .command('create')
    .description('make an invitation; its token and claim link are printed once and never again')
    .requiredOption('--tier <tier>', 'the tier of the keys it makes')
    .option('--scopes <scopes>', `comma-separated: ${SCOPES.join(', ')}`, 'read')
    .option(
      '--expires <when>',
      'when it stops working: 7d, 12h, YYYY-MM-DD or RFC 3339 (default 7d, at most 90d)',
    )
    .option('--uses <n>', 'how many keys it may make, 1 to 1000', '1')
    .option('--key-expires <when>', 'expiry of each key it makes: 30d, YYYY-MM-DD or RFC 3339 (default none)')
    .option('--note <note>', 'your note (who it is for); never shown to the customer')
    .addOption(json())
    .action(
      async (opts: {
        tier: string;
        scopes: string;
        expires?: string;
        uses: string;
        keyExpires?: string;
        note?: string;
        json?: boolean;
      }) => {
        const now = Date.now();
        const draft: InvitationDraft = {
          tier: opts.tier,
          scopes: parseScopes(opts.scopes),
          uses: parseUses(opts.uses),
          ...(opts.expires !== undefined && { expiresAt: parseWhen('--expires', opts.expires, now) }),
          ...(opts.keyExpires !== undefined && {
            keyExpiresAt: parseWhen('--key-expires', opts.keyExpires, now),
          }),
          ...(opts.note !== undefined && { note: opts.note }),
        };
        const cfg = config();
        const { token, record } = await withServices(cfg, (s) =>
          audited(
            s.audit,
            'invitations.create',
            (made) => made.record.id,
            () => s.invitations.create(draft),
          ),
        );
        const claimUrl = `${publicBase(cfg)}/portal/claim#${token}`;
        print(
          opts.json
            ? printableJson({ ...record, token, claimUrl })
            : `${claimUrl}\n\ntoken ${token}\nid ${record.id}, tier ${printable(record.tier)}, ${record.uses} use(s), ` +
                `works until ${iso(record.expiresAt)}. Send the link now: it is not shown again.`,
        );
      },
    );
  invitations
    .command('list')
    .description('list invitations, newest first (never their tokens)')
    .addOption(json())
    .action(async (opts: { json?: boolean }) => {
      const list = await withServices(config(), (s) => s.invitations.list());
      if (opts.json) return print(printableJson(list));
      print(list.length ? [LIST_HEADER, ...list.map(line)].join('\n') : 'no invitations');
    });
  invitations
    .command('show <id>')
    .description('show one invitation: its state and how many keys it made (never its token)')
    .addOption(json())
    .action(async (id: string, opts: { json?: boolean }) => {
      const record = await withServices(config(), (s) => s.invitations.get(id));
      print(opts.json ? printableJson(record) : details(record));
    });
  invitations
    .command('revoke <id>')
    .description('revoke an invitation: it can no longer be claimed; keys it made keep working')
    .addOption(json())
    .action(async (id: string, opts: { json?: boolean }) => {
      const record = await withServices(config(), (s) =>
        audited(s.audit, 'invitations.revoke', id, () => s.invitations.revoke(id)),
      );
      print(opts.json ? printableJson(record) : `revoked ${record.id}`);
    });
}
