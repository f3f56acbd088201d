/**
 * `pricepoint series ...`: the series catalogue from the command line, through the same series
 * service as `PUT /api/v1/series/{symbol}`, so the CLI accepts exactly what the API accepts.
 */
import { type Command, Option } from 'commander';
import type { Config } from '../config/config.js';
import { printable, printableJson } from '../domain/text/plain-text.js';
import { withServices } from '../server/compose.js';
import type { SeriesInput, SeriesService, SeriesView } from '../services/series-service.js';
import { audited } from './cli-audit.js';

export interface SeriesCommandsDeps {
  readonly print: (text: string) => void;
  readonly config: () => Config;
}

/** Opens the stores for one command and closes them after it. */
async function withSeries<T>(config: Config, run: (series: SeriesService) => Promise<T>): Promise<T> {
  return withServices(config, (services) => run(services.series));
}

/**
 * One series per line, tab-separated, every field with control characters escaped: a name stored
 * before names had to be plain text cannot forge a row or drive the terminal.
 */
function seriesLine(s: SeriesView): string {
  const coverage = s.coverage === null ? 'no prices' : `${s.coverage.first}..${s.coverage.last}`;
  const fields = [s.symbol, s.name, s.kind, s.currency, s.unit, s.timezone, s.resolution, coverage];
  return fields.map(printable).join('\t');
}

/** Adds `series list|upsert` to `program`. */
export function registerSeriesCommands(program: Command, { print, config }: SeriesCommandsDeps): void {
  const json = () => new Option('--json', 'print machine-readable JSON');
  const series = program.command('series').description('list, create and update price series');

  series
    .command('list')
    .description('list series with their coverage (first and last local date with prices)')
    .addOption(json())
    .action(async (opts: { json?: boolean }) => {
      const list = await withSeries(config(), (s) => s.list());
      if (opts.json) return print(printableJson(list));
      print(
        list.length
          ? [
              'symbol\tname\tkind\tcurrency\tunit\ttimezone\tresolution\tcoverage',
              ...list.map(seriesLine),
            ].join('\n')
          : 'no series',
      );
    });

  series
    .command('upsert <symbol>')
    .description('create a series (every option needed) or update one (omitted options keep their values)')
    .option('--name <name>', 'human name, 1 to 200 characters')
    .option('--kind <kind>', 'lower-case category: electricity, fx, crypto, ...')
    .option('--currency <code>', 'ISO 4217 code (EUR) or crypto code (BTC)')
    .option('--unit <unit>', 'what one price buys: MWh, share, ...')
    .option('--timezone <zone>', 'IANA zone of the market day, e.g. Europe/Oslo')
    .option('--resolution <duration>', 'PT15M, PT30M, PT1H or P1D')
    .addOption(json())
    .action(async (symbol: string, opts: SeriesInput & { json?: boolean }) => {
      const { json: asJson, ...fields } = opts;
      const { outcome, series: saved } = await withServices(config(), ({ series: s, audit }) =>
        audited(audit, 'series.upsert', symbol.toUpperCase(), () => s.upsert(symbol, fields)),
      );
      print(asJson ? printableJson({ outcome, series: saved }) : `${outcome} ${seriesLine(saved)}`);
    });
}
