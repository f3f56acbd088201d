/**
 * `pricepoint`: the operator's command line. It reads the same PRICEPOINT_* settings as the server
 * and goes through the same services, so the CLI can do nothing the API would refuse.
 */
import { Command, CommanderError, Option } from 'commander';
import { type Config, ConfigError, loadConfig } from '../config/config.js';
import { DEV_SERIES, loadDevData } from '../dev-data/dev-data.js';
import { ApiError } from '../domain/errors/api-error.js';
import { banner, closeOnSignals, dataDirError, openStores, startServer } from '../server/serve.js';
import { createKeyService } from '../services/key-service.js';
import { migrate as migratePostgresUrl } from '../stores/postgres/index.js';
import { migrateSqlite, openSqlite } from '../stores/sqlite/database.js';
import { registerImportCommand } from './import-command.js';
import { registerKeyCommands } from './key-commands.js';
import { registerSeriesCommands } from './series-commands.js';

type Print = (text: string) => void;

/** Opens the stores for one command and closes them after it. */
async function withServices<T>(
  config: Config,
  run: (
    deps: Awaited<ReturnType<typeof openStores>> & { keys_: ReturnType<typeof createKeyService> },
  ) => Promise<T>,
): Promise<T> {
  const stores = await openStores(config);
  try {
    const keys_ = createKeyService({
      keys: stores.keys,
      tiers: config.tiers,
      keySecret: config.keySecret,
      clock: Date.now,
    });
    return await run({ ...stores, keys_ });
  } finally {
    await stores.close();
  }
}

export function buildCli(print: Print, env: NodeJS.ProcessEnv): Command {
  const config = (overrides: Partial<Config> = {}) => loadConfig(env, overrides);
  const program = new Command('pricepoint')
    .description('Pricepoint: a self-hostable price data API')
    .exitOverride()
    .configureOutput({ writeOut: (s) => print(s.trimEnd()), writeErr: (s) => process.stderr.write(s) });
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
        loadDevData({ prices: s.prices, keys: s.keys_, now: Date.now() }),
      );
      const series = DEV_SERIES.map((s) => s.symbol);
      print(
        opts.json
          ? JSON.stringify({ series, points: written })
          : `loaded ${written} points of ${series.join(', ')}`,
      );
    });

  registerKeyCommands(program, { print, config });
  registerSeriesCommands(program, { print, config });
  registerImportCommand(program, { print, config });

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
        print(`${t.name}\t${limits}; counted per ${t.countPer}; ${kinds}; ${history}`);
      }
    });

  return program;
}

/** Runs the CLI; resolves with the exit status (the server keeps the process alive on its own). */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
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
    if (error instanceof ApiError) return fail(error.code, error.detail, 1);
    return fail('internal', (error as Error).message, 1);
  }
}
