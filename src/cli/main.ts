/**
 * `pricepoint`: the operator's command line. It reads the same PRICEPOINT_* settings as the server
 * and goes through the same services, so the CLI can do nothing the API would refuse.
 */

import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { type Config, ConfigError, loadConfig } from '../config/config.js';
import { clientEnvironment, type Env } from '../config/environment.js';
import { DEV_SERIES, loadDevData } from '../dev-data/dev-data.js';
import { ApiError } from '../domain/errors/api-error.js';
import { describeTzSource } from '../domain/time/tz-source.js';
import { useTzSource } from '../domain/time/zone.js';
import { withServices } from '../server/compose.js';
import { dataDirError } from '../server/open-stores.js';
import { banner, closeOnSignals, startServer } from '../server/serve.js';
import { migrate as migratePostgresUrl } from '../stores/postgres/index.js';
import { migrateSqlite, openSqlite } from '../stores/sqlite/database.js';
import { registerAuditCommands } from './audit-commands.js';
import { registerCheckCommand } from './check-command.js';
import { CliError } from './cli-error.js';
import { registerImportCommand } from './import-command.js';
import { registerInvitationCommands } from './invitation-commands.js';
import { registerKeyCommands } from './key-commands.js';
import { registerMcpCommand } from './mcp-command.js';
import { registerSeriesCommands } from './series-commands.js';
import { registerSourceCommands } from './source-commands.js';
import { registerUsageCommands } from './usage-commands.js';
import { registerWebhookCommands } from './webhook-commands.js';

type Print = (text: string) => void;

/** package.json sits two folders up from src/cli and from dist/cli. */
function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  return String(pkg.version);
}

export function buildCli(print: Print, env: Env): Command {
  // Every command reads zones with the tz database its settings choose (docs/operating.md "Time zone data").
  const config = (overrides: Partial<Config> = {}) => {
    const cfg = loadConfig(env, overrides);
    useTzSource(cfg.tzData);
    return cfg;
  };
  const program = new Command('pricepoint')
    .description('Pricepoint: a self-hostable price data API')
    .exitOverride()
    .configureOutput({ writeOut: (s) => print(s.trimEnd()), writeErr: (s) => process.stderr.write(s) });
  // Not commander's own --version: the tz release depends on the settings, read only when asked.
  program
    .option('-V, --version', "print Pricepoint's version and the tz release its zone rules come from")
    .on('option:version', () => {
      const tz = useTzSource(config().tzData);
      print(`pricepoint ${packageVersion()}\n${describeTzSource(tz)}`);
      throw new CommanderError(0, 'pricepoint.version', 'version printed');
    });
  const json = () => new Option('--json', 'print machine-readable JSON');

  program
    .command('serve')
    .description('serve the API (HTTPS unless PRICEPOINT_INSECURE_HTTP=true)')
    .option('--dev-data', 'load the development data set and the demo key')
    .addOption(json())
    .action(async (opts: { devData?: boolean; json?: boolean }) => {
      const cfg = config(opts.devData ? { devData: true } : {});
      const running = await startServer(cfg);
      closeOnSignals(running, cfg.shutdownGraceMs);
      const info = { url: running.url, demoKey: running.demoKey ?? null, certFile: running.certFile ?? null };
      process.stderr.write(`${opts.json ? JSON.stringify(info) : banner(running)}\n`);
    });

  program
    .command('migrate')
    .description('create or update the database schema')
    .addOption(json())
    .action(async (opts: { json?: boolean }) => {
      const cfg = config();
      const report = (applied: string[]) =>
        print(
          opts.json
            ? JSON.stringify({ applied })
            : applied.length
              ? `applied ${applied.join(', ')}`
              : 'schema is up to date',
        );
      if (cfg.databaseUrl) {
        report(await migratePostgresUrl(cfg.databaseUrl));
        return;
      }
      let db: ReturnType<typeof openSqlite>['db'];
      try {
        db = openSqlite(cfg.databasePath).db;
      } catch (error) {
        throw dataDirError(error, cfg);
      }
      try {
        report(await migrateSqlite(db));
      } finally {
        await db.destroy();
      }
    });

  program
    .command('dev-data')
    .description('load the development data set (90 days back through tomorrow) and the demo key')
    .addOption(json())
    .action(async (opts: { json?: boolean }) => {
      const written = await withServices(config(), (s) =>
        loadDevData({ prices: s.stores.prices, keys: s.keys, now: Date.now() }),
      );
      const series = DEV_SERIES.map((s) => s.symbol);
      print(
        opts.json
          ? JSON.stringify({ series, points: written })
          : `loaded ${written} points of ${series.join(', ')}`,
      );
    });

  registerKeyCommands(program, { print, config });
  registerInvitationCommands(program, { print, config });
  registerAuditCommands(program, { print, config });
  registerSeriesCommands(program, { print, config });
  registerImportCommand(program, { print, config });
  registerSourceCommands(program, { print, config });
  registerWebhookCommands(program, { print, config });
  registerUsageCommands(program, { print, config });
  registerCheckCommand(program, { print, config });
  registerMcpCommand(program, { client: () => clientEnvironment(env) });

  program
    .command('tiers')
    .description('access tiers')
    .command('list')
    .description('list tiers and their limits')
    .addOption(json())
    .action(async (opts: { json?: boolean }) => {
      const tiers = Object.values(config().tiers);
      if (opts.json) return print(JSON.stringify(tiers));
      for (const t of tiers) {
        const limits = t.limits.map((l) => `${l.limit} per ${l.windowSeconds} s (${l.name})`).join(', ');
        const kinds = t.kinds === null ? 'all kinds' : t.kinds.join(', ');
        const history = t.historyDays === null ? 'unlimited history' : `${t.historyDays} days back`;
        const streams = `${t.streams} open event streams`;
        print(`${t.name}\t${limits}; counted per ${t.countPer}; ${kinds}; ${history}; ${streams}`);
      }
    });

  return program;
}

/**
 * Runs the CLI with the environment it is given (bin/pricepoint.js passes `process.env`), which only
 * config/ reads; resolves with the exit status (a server keeps the process alive).
 */
export async function main(argv: string[], env: Env): Promise<number> {
  const asJson = argv.includes('--json');
  const fail = (code: string, message: string, status: number) => {
    process.stderr.write(
      asJson ? `${JSON.stringify({ error: { code, message } })}\n` : `pricepoint: ${message}\n`,
    );
    return status;
  };
  try {
    await buildCli((text) => process.stdout.write(`${text}\n`), env).parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof ConfigError) return fail('invalid_setting', error.message, 2);
    if (error instanceof CliError) return fail(error.code, error.message, error.exitCode);
    // A service refused (an unknown key id, a bad tier): its domain error says why.
    if (error instanceof ApiError) return fail(error.code, error.detail, 1);
    return fail('internal', (error as Error).message, 1);
  }
}
