/**
 * `pricepoint sources list|status|zones|run NAME [--from DATE --to DATE]` (docs/sources.md): the
 * sources of the config file with their upstream's terms, what they did last, the zones their types
 * can fill, and a run now through the same runner and lease as the server, so a run never overlaps
 * one an instance is doing, recorded in the audit log as the API's run is. Settings print as written: a secret prints as the name of its
 * environment variable.
 */
import { type Command, Option } from 'commander';
import type { Config } from '../config/config.js';
import { printable, printableJson } from '../domain/text/plain-text.js';
import { withServices } from '../server/compose.js';
import type { Services } from '../server/services.js';
import { plannedScheduler } from '../sources/scheduler.js';
import { termsOfSource } from '../sources/source-terms.js';
import { backfillWindow, runView, type SourceView, sourceView } from '../sources/source-view.js';
import { openSources, type Sources } from '../sources/sources.js';
import type { SourceWindow, UpstreamTerms } from '../sources/types.js';
import { findZones } from '../sources/zone-finder.js';
import { audited } from './cli-audit.js';
import { CliError } from './cli-error.js';

export interface SourceCommandsDeps {
  readonly print: (text: string) => void;
  readonly config: () => Config;
}

/** The sources over the configured stores, for one command, with the services (the audit log). */
async function withSources<T>(
  config: Config,
  run: (sources: Sources, services: Services) => Promise<T>,
): Promise<T> {
  return withServices(config, async (services) => {
    const sources = await openSources(config.sources, {
      prices: services.stores.prices,
      databaseUrl: config.databaseUrl,
      databasePath: config.databasePath,
      scheduler: plannedScheduler(),
    });
    sources.start();
    try {
      return await run(sources, services);
    } finally {
      await sources.close();
    }
  });
}

const when = (at: string | null) => at ?? 'never';

/** The terms in one line: licence, the credit asked for, where they are published. */
const termsLine = (terms: UpstreamTerms | null) =>
  terms === null ? 'unknown' : `${terms.license}; credit: ${terms.attribution}; ${terms.termsUrl}`;

function statusLines(s: SourceView): string {
  const lines = [
    `${s.name} (${s.type})`,
    `  schedule      ${s.schedule.map((e) => `${e.cron} ${e.zone}${e.untilTomorrowComplete ? ' until tomorrow is complete' : ''}`).join('; ')}`,
    `  last run      ${when(s.lastRun)}${s.lastOutcome === null ? '' : `: ${s.lastOutcome}`}`,
    `  last success  ${when(s.lastSuccess)}${s.pointsWritten === null ? '' : `, ${s.pointsWritten} points written`}`,
    ...(s.lastNotPublished === null
      ? []
      : [`  not published ${s.lastNotPublished} (the upstream had no price for the window yet)`]),
    `  last error    ${s.lastError ? `${s.lastError.at}: ${s.lastError.message}` : 'none'}`,
    `  next run      ${when(s.nextRun)}`,
    ...(s.retryAfterUntil === null
      ? []
      : [`  retry after   ${s.retryAfterUntil} (the upstream asked to wait)`]),
    ...(s.lastSkipped === null ? [] : [`  last skipped  ${s.lastSkipped.at}: ${s.lastSkipped.message}`]),
    `  terms         ${termsLine(s.terms)}`,
  ];
  return lines.map(printable).join('\n');
}

/** Adds `sources list|status|run` to `program`. */
export function registerSourceCommands(program: Command, { print, config }: SourceCommandsDeps): void {
  const json = () => new Option('--json', 'print machine-readable JSON');
  const sources = program.command('sources').description('the price sources of the config file');

  sources
    .command('list')
    .description('list the sources of the config file with their schedules and settings')
    .addOption(json())
    .action((opts: { json?: boolean }) => {
      const list = config().sources.map(({ name, type, schedule, settings }) => ({
        name,
        type,
        schedule,
        settings,
        terms: termsOfSource(type, settings) ?? null,
      }));
      if (opts.json) return print(printableJson(list));
      print(
        list.length
          ? list
              .map((s) =>
                [s.name, s.type, s.schedule.map((e) => `${e.cron} ${e.zone}`).join('; '), termsLine(s.terms)]
                  .map(printable)
                  .join('\t'),
              )
              .join('\n')
          : 'no sources: add them under sources: in the config file (docs/sources.md)',
      );
    });

  sources
    .command('zones')
    .description('the zones the types of the sources can fill, with EIC codes and aliases')
    .option('--all', 'every connector type, not only those of the configured sources')
    .option('--q <name>', 'only the zone with this name, alias or EIC code (any letter case)')
    .addOption(json())
    .action((opts: { all?: boolean; q?: string; json?: boolean }) => {
      if (opts.q !== undefined && opts.q.trim() === '') {
        throw new CliError('invalid_option', '--q: name a zone');
      }
      const types = findZones(config().sources, {
        all: opts.all === true,
        ...(opts.q !== undefined && { q: opts.q }),
      });
      if (opts.json) return print(printableJson(types));
      const lines = types.flatMap((t) =>
        t.zones.map((z) => [t.type, z.zone, z.eic ?? '', z.aliases.join(', ')].map(printable).join('\t')),
      );
      print(lines.length ? lines.join('\n') : 'no zones: none of that name, or no sources (try --all)');
    });

  sources
    .command('status')
    .description('what each source did last and when it runs next')
    .addOption(json())
    .action(async (opts: { json?: boolean }) => {
      const views = (await withSources(config(), (s) => s.list())).map(sourceView);
      if (opts.json) return print(printableJson(views));
      print(views.length ? views.map(statusLines).join('\n') : 'no sources');
    });

  sources
    .command('run <name>')
    .description('run a source now: its scheduled window, or the local days --from through --to')
    .option('--from <date>', 'first local date, YYYY-MM-DD')
    .option('--to <date>', 'last local date, YYYY-MM-DD')
    .addOption(json())
    .action(async (name: string, opts: { from?: string; to?: string; json?: boolean }) => {
      const cfg = config();
      const source = cfg.sources.find((s) => s.name === name);
      if (source === undefined) {
        const names = cfg.sources.map((s) => s.name).join(', ') || 'none';
        throw new CliError('unknown_source', `no source is named "${name}"; the sources are: ${names}`);
      }
      if ((opts.from === undefined) !== (opts.to === undefined)) {
        throw new CliError('invalid_option', '--from and --to: give both or neither');
      }
      let window: SourceWindow | undefined;
      if (opts.from !== undefined && opts.to !== undefined) {
        const asked = backfillWindow(opts.from, opts.to, source.plan.window.zone);
        if (typeof asked === 'string') throw new CliError('invalid_option', `--${asked}`);
        window = asked;
      }
      // An admin action like the API's run (docs/audit.md): recorded with actor cli, and the
      // outcome's code when it wrote nothing.
      const view = await withSources(cfg, (s, services) =>
        audited(services.audit, 'sources.run', name, async () => {
          const outcome = await s.run(name, window);
          if (outcome === undefined) throw new CliError('unknown_source', `no source is named "${name}"`);
          const ran = runView(name, outcome);
          if (ran.outcome !== 'written') throw new CliError(`source_${ran.outcome}`, ran.message);
          return ran;
        }),
      );
      print(opts.json ? printableJson(view) : printable(view.message));
    });
}
