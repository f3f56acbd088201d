/**
 * `pricepoint webhooks ...`: webhook endpoints from the command line, through the same service as
 * the admin API (docs/webhooks.md). `add` prints the signing secret, once; nothing else prints it.
 */
import { type Command, Option } from 'commander';
import type { Config } from '../config/config.js';
import { printable, printableJson } from '../domain/text/plain-text.js';
import { withServices } from '../server/compose.js';
import type { AuditService } from '../services/audit-service.js';
import type { EndpointView, WebhookService } from '../webhooks/service.js';
import { audited } from './cli-audit.js';
import { CliError } from './cli-error.js';

export interface WebhookCommandsDeps {
  readonly print: (text: string) => void;
  readonly config: () => Config;
}

const list = (value: string) =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

const LIST_HEADER = 'id\tstate\tevents\tsymbols\turl';

function line(w: EndpointView): string {
  const state = w.enabled ? 'enabled' : `disabled (${w.disabledReason ?? ''})`;
  return [w.id, state, w.events.join(','), w.symbols?.join(',') ?? '*', w.url].map(printable).join('\t');
}

/** Opens the stores for one command and runs it with the webhook service, and the log's newest event. */
async function withWebhooks<T>(
  config: Config,
  run: (webhooks: WebhookService, latestSeq: number, audit: AuditService) => Promise<T>,
) {
  return withServices(config, async ({ webhooks, stores, audit }) => {
    if (!webhooks) throw new CliError('invalid_option', 'this database keeps no webhooks');
    return run(webhooks, (await stores.events?.latestSeq()) ?? 0, audit);
  });
}

const notFound = (id: string) => new CliError('not_found', `there is no webhook with id ${id}`);

/** Adds `webhooks add|list|remove|test` to `program`. */
export function registerWebhookCommands(program: Command, { print, config }: WebhookCommandsDeps): void {
  const json = () => new Option('--json', 'print machine-readable JSON');
  const webhooks = program
    .command('webhooks')
    .description('register, list, remove and test webhook endpoints (docs/webhooks.md)');
  webhooks
    .command('add <url>')
    .description('register an endpoint; its signing secret is printed once and never again')
    .option('--events <types>', 'comma-separated: day.published, day.revised', 'day.published')
    .option('--symbols <symbols>', 'comma-separated symbols it wants (default: every symbol)')
    .addOption(json())
    .action(async (url: string, opts: { events: string; symbols?: string; json?: boolean }) => {
      const spec = {
        url,
        events: list(opts.events),
        symbols: opts.symbols === undefined ? null : list(opts.symbols),
      };
      const { endpoint, secret } = await withWebhooks(config(), (w, latest, audit) =>
        audited(
          audit,
          'webhooks.create',
          (made) => made.endpoint.id,
          () => w.create(spec, latest),
        ),
      );
      if (opts.json) print(printableJson({ ...endpoint, secret }));
      else print(`${line(endpoint)}\nsecret: ${secret}\nKeep the secret now: it is not shown again.`);
    });
  webhooks
    .command('list')
    .description('every endpoint, never a secret')
    .addOption(json())
    .action(async (opts: { json?: boolean }) => {
      const all = await withWebhooks(config(), (w) => w.list());
      print(opts.json ? printableJson(all) : [LIST_HEADER, ...all.map(line)].join('\n'));
    });
  webhooks
    .command('remove <id>')
    .description('remove an endpoint and its delivery log')
    .addOption(json())
    .action(async (id: string, opts: { json?: boolean }) => {
      const removed = await withWebhooks(config(), (w, _latest, audit) =>
        audited(audit, 'webhooks.delete', id, async () => {
          if (!(await w.remove(id))) throw notFound(id);
          return true;
        }),
      );
      if (!removed) throw notFound(id);
      print(opts.json ? printableJson({ id, removed: true }) : `removed ${printable(id)}`);
    });
  webhooks
    .command('test <id>')
    .description('send a signed webhook.test event now and print how the endpoint answered')
    .addOption(json())
    .action(async (id: string, opts: { json?: boolean }) => {
      const outcome = await withWebhooks(config(), (w) => w.test(id));
      if (outcome === undefined) throw notFound(id);
      if (!outcome.ok) process.exitCode = 1;
      if (opts.json) {
        const { ok, status, latencyMs, error } = outcome;
        print(printableJson({ id, ok, status, latencyMs, error }));
        return;
      }
      const answer = outcome.status === null ? 'no answer' : `HTTP ${outcome.status}`;
      print(
        `${outcome.ok ? 'delivered' : 'failed'}: ${answer} in ${outcome.latencyMs} ms${outcome.error ? ` (${printable(outcome.error)})` : ''}`,
      );
    });
}
