/**
 * The table of `pricepoint` commands lists every command the CLI has, and every command takes
 * `--json` as docs/operating.md says: a command added without a row, or without `--json`, fails here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { Command } from 'commander';
import { buildCli } from '../../src/cli/main.js';

/** Every command that runs something, as its full name (`keys create`), leaving out `help`. */
function leaves(command: Command, prefix = ''): { name: string; command: Command }[] {
  return command.commands
    .filter((sub) => sub.name() !== 'help')
    .flatMap((sub) => {
      const name = `${prefix}${sub.name()}`;
      return sub.commands.length > 0 ? leaves(sub, `${name} `) : [{ name, command: sub }];
    });
}

const program = buildCli(() => {}, {});
const commands = leaves(program);
const readme = readFileSync(new URL('../../docs/operating.md', import.meta.url), 'utf8');
/** The first cells of the command table's rows: `keys create --tier T …`, `sources list\|status`. */
const rows = [...readme.matchAll(/^\| `([a-z][^`]*)`/gm)].map((m) => (m[1] ?? '').replaceAll('\\|', '|'));

test('the CLI has the commands the table of docs/operating.md is checked against', () => {
  for (const name of ['serve', 'keys create', 'webhooks remove', 'webhooks test', 'sources run']) {
    assert.ok(
      commands.some((c) => c.name === name),
      name,
    );
  }
});

test('every pricepoint command has a row in docs/operating.md', () => {
  // A row names a command by its words (`keys create …`) or a group's alternatives (`sources list|status`).
  const named = (name: string) =>
    rows.some((row) => {
      const [group, ...rest] = name.split(' ');
      if (row === name || row.startsWith(`${name} `)) return true;
      const [first, alternatives = ''] = row.split(' ');
      return rest.length === 1 && first === group && alternatives.split('|').includes(rest[0] ?? '');
    });
  const missing = commands.map((c) => c.name).filter((name) => !named(name));
  assert.deepEqual(missing, []);
});

test('every pricepoint command takes --json', () => {
  const without = commands
    .filter((c) => !c.command.options.some((o) => o.long === '--json'))
    .map((c) => c.name);
  assert.deepEqual(without, []);
});
