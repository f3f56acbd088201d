/**
 * `pricepoint keys ...`: the key lifecycle from the command line, through the same key service as the
 * admin API. A key is printed by `create` and `rotate`, once; nothing else prints a key or a hash.
 */

import { type Command, Option } from 'commander';
import type { Config } from '../config/config.js';
import type { LimitRule } from '../domain/limits/tiers.js';
import { printable, printableJson } from '../domain/text/plain-text.js';
import { parseDuration } from '../domain/time/duration.js';
import { parseTimestamp } from '../domain/time/timestamp.js';
import { withServices } from '../server/compose.js';
import type { AuditAction } from '../services/audit-service.js';
import type { KeyExtras, KeyPatch, KeyService, KeyView } from '../services/key-service.js';
import { SCOPES, type Scope } from '../stores/types.js';
import { recordCli } from './cli-audit.js';
import { CliError } from './cli-error.js';

export interface KeyCommandsDeps {
  readonly print: (text: string) => void;
  readonly config: () => Config;
}

/** `--scopes read,write`, as `keys create` and `invitations create` take it. */
export function parseScopes(value: string): Scope[] {
  const scopes = value.split(',').map((s) => s.trim());
  const bad = scopes.find((s) => !(SCOPES as readonly string[]).includes(s));
  if (bad !== undefined)
    throw new CliError('invalid_parameter', `--scopes: "${bad}" is not one of ${SCOPES.join(', ')}`);
  return scopes as Scope[];
}

/** `YYYY-MM-DD` (00:00 UTC that day) or an RFC 3339 timestamp with its offset. */
function parseExpiry(value: string): number {
  const ms = parseTimestamp(value);
  if (ms === undefined) {
    throw new CliError(
      'invalid_parameter',
      `--expires: "${value}" is not a date (YYYY-MM-DD) or RFC 3339 timestamp`,
    );
  }
  return ms;
}

function parseGrace(value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined) {
    throw new CliError(
      'invalid_parameter',
      `--grace: "${value}" is not a duration such as 30s, 15m, 24h or 7d`,
    );
  }
  return ms;
}

/**
 * `--limits`: `NAME=LIMIT/SECONDS`, comma-separated (`minute=600/60,day=100000/86400`), or `tier`
 * for the tier's own. The key service checks the values as the admin API does.
 */
function parseLimits(value: string): LimitRule[] | null {
  if (value.trim() === 'tier') return null;
  return value.split(',').map((part) => {
    const match = /^\s*([^=\s]+)\s*=\s*(\d{1,10})\s*\/\s*(\d{1,9})\s*$/.exec(part);
    if (match === null) {
      throw new CliError(
        'invalid_parameter',
        `--limits: "${part.trim()}" is not NAME=LIMIT/SECONDS such as minute=600/60 (or "tier" for the tier's limits)`,
      );
    }
    return { name: match[1] as string, limit: Number(match[2]), windowSeconds: Number(match[3]) };
  });
}

/** `--allow`: comma-separated CIDRs, or `any` for every address. */
function parseAllowed(value: string): string[] | null {
  if (value.trim() === 'any') return null;
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** An owner field as given: an empty value clears it. */
const ownerText = (value: string) => (value.trim() === '' ? null : value);

/** The extras `keys create` and `keys update` take alike. */
function extrasOf(opts: ExtraOptions): KeyExtras {
  return {
    ...(opts.limits !== undefined && { limits: parseLimits(opts.limits) }),
    ...(opts.allow !== undefined && { allowedAddresses: parseAllowed(opts.allow) }),
    ...(opts.customer !== undefined && { customerRef: ownerText(opts.customer) }),
    ...(opts.contact !== undefined && { contact: ownerText(opts.contact) }),
  };
}

interface ExtraOptions {
  limits?: string;
  allow?: string;
  customer?: string;
  contact?: string;
}

const iso = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString());

function keyState(k: KeyView): string {
  if (k.revokedAt !== null) return 'revoked';
  return k.expiresAt !== null && k.expiresAt <= Date.now() ? 'expired' : 'active';
}

/**
 * One key per line, tab-separated. A name stored before names had to be plain text may hold a tab,
 * a line feed or an escape sequence: every field is printed with those escaped, so no name can
 * forge a row or drive the terminal.
 */
/** The columns of `keys list`, in the order keyLine writes them. */
const KEY_LIST_HEADER = 'id\tkey\ttier\tscopes\tstate\texpires\tname';

function keyLine(k: KeyView): string {
  const fields = [k.id, `…${k.last4}`, k.tier, k.scopes.join(','), keyState(k), iso(k.expiresAt), k.name];
  return fields.map(printable).join('\t');
}

/** One key, one field per line, for `keys show`. */
function keyDetails(k: KeyView): string {
  const fields: [string, string][] = [
    ['id', k.id],
    ['key', `…${k.last4}`],
    ['name', k.name],
    ['tier', k.tier],
    ['scopes', k.scopes.join(',')],
    ['state', keyState(k)],
    ['created', iso(k.createdAt)],
    ['expires', iso(k.expiresAt)],
    ['revoked', iso(k.revokedAt)],
    ['last used', iso(k.lastUsedAt)],
    [
      'limits',
      k.limits == null
        ? "the tier's"
        : k.limits.map((l) => `${l.name}=${l.limit}/${l.windowSeconds}`).join(','),
    ],
    ['allowed', k.allowedAddresses == null ? 'any address' : k.allowedAddresses.join(',')],
    ['customer', k.customerRef ?? '-'],
    ['contact', k.contact ?? '-'],
  ];
  return fields.map(([name, value]) => `${name.padEnd(10)}${printable(value)}`).join('\n');
}

/**
 * Opens the stores for one command, runs it against the key service and closes them. `changed`
 * names a key the command changed: running servers are told through the notice bus (Redis when
 * scaled out), so they drop it from their key caches at once instead of after the cache time.
 */
async function withKeys<T>(
  config: Config,
  run: (keys: KeyService) => Promise<T>,
  changed?: string,
  audit?: CliAudit<T>,
): Promise<T> {
  return withServices(config, async ({ keys, stores, audit: log }) => {
    let result: T;
    try {
      result = await run(keys);
    } catch (error) {
      if (audit !== undefined) await recordCli(log, audit.action, changed ?? null, error);
      throw error;
    }
    if (audit !== undefined) await recordCli(log, audit.action, audit.target?.(result) ?? changed ?? null);
    if (changed !== undefined) {
      // Best effort: without the notice, servers still re-check the key within their 2 s cache time.
      await stores.notices.publish({ kind: 'keys', keyIds: [changed] }).catch(() => {});
    }
    return result;
  });
}

/** The audit entry of a key command: its action, and the key it made when it made one. */
interface CliAudit<T> {
  readonly action: AuditAction;
  readonly target?: (result: T) => string;
}

/** Adds `keys create|list|show|revoke|rotate|set-tier|update` to `program`. */
export function registerKeyCommands(program: Command, { print, config }: KeyCommandsDeps): void {
  const json = () => new Option('--json', 'print machine-readable JSON');
  const keys = program
    .command('keys')
    .description('create, list, show, revoke, rotate, re-tier and update API keys');
  keys
    .command('create')
    .description('create a key; it is printed once and never again')
    .requiredOption('--tier <tier>', 'access tier')
    .requiredOption('--name <name>', 'who or what the key is for')
    .option('--scopes <scopes>', `comma-separated: ${SCOPES.join(', ')}`, 'read')
    .option('--expires <date>', 'expiry: YYYY-MM-DD (00:00 UTC) or an RFC 3339 timestamp')
    .option('--limits <limits>', "the key's own limits, NAME=LIMIT/SECONDS comma-separated: minute=600/60")
    .option('--allow <cidrs>', 'client addresses the key may be used from: comma-separated CIDRs')
    .option('--customer <ref>', 'your customer reference (shown to admins only)')
    .option('--contact <contact>', 'who to contact about the key (shown to admins only)')
    .addOption(json())
    .action(
      async (
        opts: { tier: string; name: string; scopes: string; expires?: string; json?: boolean } & ExtraOptions,
      ) => {
        const spec = {
          tier: opts.tier,
          name: opts.name,
          scopes: parseScopes(opts.scopes),
          expiresAt: opts.expires === undefined ? null : parseExpiry(opts.expires),
          ...extrasOf(opts),
        };
        const { key, record } = await withKeys(config(), (s) => s.create(spec), undefined, {
          action: 'keys.create',
          target: (made) => made.record.id,
        });
        print(
          opts.json
            ? printableJson({ ...record, key })
            : `${key}\n\nid ${record.id}, tier ${printable(record.tier)}. Store the key now: it is not shown again.`,
        );
      },
    );
  keys
    .command('list')
    .description('list keys (never their secrets)')
    .addOption(json())
    .action(async (opts: { json?: boolean }) => {
      const list = await withKeys(config(), (s) => s.list());
      if (opts.json) return print(printableJson(list));
      // A header row names the columns, as `series list` does.
      print(list.length ? [KEY_LIST_HEADER, ...list.map(keyLine)].join('\n') : 'no keys');
    });
  keys
    .command('show <id>')
    .description('show one key: tier, scopes, state, expiry and last use (never its secret)')
    .addOption(json())
    .action(async (id: string, opts: { json?: boolean }) => {
      const record = await withKeys(config(), (s) => s.get(id));
      print(opts.json ? printableJson(record) : keyDetails(record));
    });
  keys
    .command('revoke <id>')
    .description('revoke a key; every server refuses it within 5 seconds')
    .addOption(json())
    .action(async (id: string, opts: { json?: boolean }) => {
      const record = await withKeys(config(), (s) => s.revoke(id), id, { action: 'keys.revoke' });
      print(opts.json ? printableJson(record) : `revoked ${record.id} (…${record.last4})`);
    });
  keys
    .command('rotate <id>')
    .description(
      'issue a new key with the same name, tier and scopes; the old one works for the grace period',
    )
    .option(
      '--grace <duration>',
      'how long the old key keeps working: 30s, 15m, 24h (default), 7d; at most 30d',
    )
    .addOption(json())
    .action(async (id: string, opts: { grace?: string; json?: boolean }) => {
      const graceMs = opts.grace === undefined ? undefined : parseGrace(opts.grace);
      const { key, record, previous } = await withKeys(config(), (s) => s.rotate(id, graceMs), id, {
        action: 'keys.rotate',
      });
      print(
        opts.json
          ? printableJson({ ...record, key, previous })
          : `${key}\n\nid ${record.id}, tier ${printable(record.tier)}. Store the key now: it is not shown again.\n` +
              `The old key ${previous.id} (…${previous.last4}) stops working at ${iso(previous.expiresAt)}.`,
      );
    });
  keys
    .command('set-tier <id> <tier>')
    .description('move a key to another tier; servers apply it within seconds')
    .addOption(json())
    .action(async (id: string, tier: string, opts: { json?: boolean }) => {
      const record = await withKeys(config(), (s) => s.setTier(id, tier), id, { action: 'keys.update' });
      print(
        opts.json
          ? printableJson(record)
          : `${record.id} (…${record.last4}) is now in tier ${printable(record.tier)}`,
      );
    });
  keys
    .command('update <id>')
    .description("change a key's name, tier, expiry, own limits, allowed addresses or owner fields")
    .option('--name <name>', 'who or what the key is for')
    .option('--tier <tier>', 'access tier')
    .option('--expires <date>', 'expiry: YYYY-MM-DD (00:00 UTC), an RFC 3339 timestamp, or "never"')
    .option('--limits <limits>', 'NAME=LIMIT/SECONDS comma-separated, or "tier" for the tier\'s limits')
    .option('--allow <cidrs>', 'comma-separated CIDRs the key may be used from, or "any"')
    .option('--customer <ref>', 'your customer reference; "" clears it')
    .option('--contact <contact>', 'who to contact about the key; "" clears it')
    .addOption(json())
    .action(
      async (
        id: string,
        opts: { name?: string; tier?: string; expires?: string; json?: boolean } & ExtraOptions,
      ) => {
        const patch: KeyPatch = {
          ...(opts.name !== undefined && { name: opts.name }),
          ...(opts.tier !== undefined && { tier: opts.tier }),
          ...(opts.expires !== undefined && {
            expiresAt: opts.expires.trim() === 'never' ? null : parseExpiry(opts.expires),
          }),
          ...extrasOf(opts),
        };
        if (Object.keys(patch).length === 0) {
          throw new CliError(
            'invalid_parameter',
            'keys update: name at least one of --name, --tier, --expires, --limits, --allow, --customer, --contact',
          );
        }
        const record = await withKeys(config(), (s) => s.update(id, patch), id, { action: 'keys.update' });
        print(opts.json ? printableJson(record) : keyDetails(record));
      },
    );
}
