/**
 * docs/settings.md's settings table, rendered from the settings table in settings.ts. `npm run
 * docs:settings` writes it between the two marker comments; settings-table.test.ts fails while the page differs.
 */
import { SETTINGS, type Setting } from './settings.js';

export const TABLE_START =
  '<!-- settings table: written by `npm run docs:settings` from src/config/settings.ts -->';
export const TABLE_END = '<!-- end of settings table -->';

const HEADER = ['variable', 'file key', 'default', 'accepts', 'meaning'] as const;

/** What the table shows of a setting, whatever the type of its value. */
type Shown = Pick<Setting<unknown>, 'env' | 'file' | 'shownDefault' | 'meaning'> & {
  readonly default?: unknown;
  readonly kind: { readonly accepts: string };
};

function shownDefault(setting: Shown): string {
  if (setting.shownDefault !== undefined) return setting.shownDefault;
  const value = setting.default;
  if (value === undefined || (Array.isArray(value) && value.length === 0)) return '(none)';
  if (typeof value === 'function') throw new Error(`${setting.env}: a computed default needs a shownDefault`);
  return `\`${String(value)}\``;
}

/** The Markdown table, one row per setting; every column but the last padded to its widest cell. */
export function settingsTable(): string {
  const rows: string[][] = Object.values(SETTINGS).map((setting: Shown) =>
    [
      `\`${setting.env}\``,
      setting.file === undefined ? '' : `\`${setting.file}\``,
      shownDefault(setting),
      setting.kind.accepts,
      setting.meaning,
    ].map((cell) => cell.replaceAll('|', '\\|')),
  );
  const widths = HEADER.map((title, column) =>
    Math.max(title.length, 3, ...rows.map((row) => row[column]?.length ?? 0)),
  );
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join(' | ')} |`;
  const rule = HEADER.map((_, column) =>
    '-'.repeat(column === HEADER.length - 1 ? 3 : (widths[column] ?? 0)),
  );
  return [line(HEADER), line(rule), ...rows.map(line)].join('\n');
}

/** What stands between the markers: the table, with a blank line each side so no marker reads as a row. */
export function betweenMarkers(table: string): string {
  return `\n\n${table}\n\n`;
}

/**
 * The text between the markers of `page`, as it is: what docs/settings.md shows now.
 * Throws when the markers are missing, so neither the script nor the test passes on a page without them.
 */
export function tableInPage(page: string): string {
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  if (start === -1 || end < start)
    throw new Error(`docs/settings.md has no "${TABLE_START}" ... "${TABLE_END}"`);
  return page.slice(start + TABLE_START.length, end);
}

/** `page` with the text between the markers replaced by `table`. */
export function withTable(page: string, table: string): string {
  const start = page.indexOf(TABLE_START) + TABLE_START.length;
  const end = start + tableInPage(page).length;
  return `${page.slice(0, start)}${betweenMarkers(table)}${page.slice(end)}`;
}
