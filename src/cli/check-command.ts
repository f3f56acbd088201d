/**
 * `pricepoint check`: lists the stored points that no longer lie on their series' grid under the
 * time zone rules in use (docs/operating.md "The `pricepoint` command"), per series and local date, with how
 * to fix them. It changes nothing, and exits 1 when there are any, so scripts can act on it.
 */
import { type Command, CommanderError, Option } from 'commander';
import type { Config } from '../config/config.js';
import { printable, printableJson } from '../domain/text/plain-text.js';
import { tzSource } from '../domain/time/zone.js';
import { withServices } from '../server/compose.js';
import { findOffGridPoints, type GridCheckReport } from '../services/grid-check.js';

export interface CheckCommandDeps {
  readonly print: (text: string) => void;
  readonly config: () => Config;
}

/** `1 point`, `2 points`; `series` is its own plural. */
const plural = (n: number, word: string) => `${n} ${word}${n === 1 || word.endsWith('series') ? '' : 's'}`;

/** What an operator can do; nothing is rewritten for them, since only they know which is right. */
export const HOW_TO_FIX = [
  'The time zone rules changed after these points were written. Nothing was changed. To fix:',
  '- if the prices belong to these local days, import each listed day again with its points starting',
  '  on the day\'s grid under the current rules (`pricepoint import FILE`, see "Importing prices");',
  '- if the points are right and the series names the wrong zone (its market keeps the old offset),',
  '  create a series with the zone that matches (`pricepoint series upsert NEW --timezone Z ...`) and',
  '  import the points there: a series with prices keeps its zone.',
  'The points listed stay stored, and listed, until removed from the database.',
].join('\n');

function reportText(report: GridCheckReport): string {
  const tz = tzSource();
  const rules = `tz ${tz.release} (${tz.source})`;
  if (report.offGridPoints === 0) {
    return `${plural(report.checkedPoints, 'point')} of ${plural(report.checkedSeries, 'series')} checked: all on their grid under ${rules}`;
  }
  const lines: string[] = [];
  for (const s of report.series) {
    const head = `${printable(s.symbol)} (${printable(s.timezone)}, ${s.resolution})`;
    lines.push(`${head}: ${plural(s.points, 'point')} off the grid on ${plural(s.dates.length, 'date')}`);
    for (const d of s.dates) {
      lines.push(
        `  ${d.date}\t${plural(d.points, 'point')}, first at ${d.first}; the day starts at ${d.dayStart}`,
      );
    }
  }
  lines.push(
    `${plural(report.offGridPoints, 'stored point')} of ${plural(report.series.length, 'series')} lie off their grid under ${rules}.`,
    HOW_TO_FIX,
  );
  return lines.join('\n');
}

/** Adds `check` to `program`. */
export function registerCheckCommand(program: Command, { print, config }: CheckCommandDeps): void {
  program
    .command('check')
    .description(
      "list stored points that no longer lie on their series' grid (after a time zone rules change)",
    )
    .addOption(new Option('--json', 'print machine-readable JSON'))
    .action(async (opts: { json?: boolean }) => {
      // config() also chooses the tz database
      const report: GridCheckReport = await withServices(config(), ({ stores }) =>
        findOffGridPoints(stores.prices),
      );
      const { release, source } = tzSource();
      print(opts.json ? printableJson({ tz: { release, source }, ...report }) : reportText(report));
      // Exit status 1 without a second message: `main` maps a CommanderError to its exit code.
      if (report.offGridPoints > 0) throw new CommanderError(1, 'pricepoint.offGrid', 'points off the grid');
    });
}
