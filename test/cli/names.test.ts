/**
 * Names are plain text, also when printed (docs/decisions.md): a key or series name stored before
 * the rule existed (written straight into SQLite here) may hold a line feed, tabs, escape sequences
 * or a bidirectional override. `keys list`, `keys show` and `series list` print it escaped, so it
 * neither forges a row nor reaches the operator's terminal raw, and `--json` still gives it back
 * exactly. A new name with such a character is refused by the CLI too.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { cleanUp, onlyJson, runCli, tempDir } from '../helpers/process.js';

after(cleanUp);

/** A name that, printed raw, adds a forged admin key row, clears the screen and reverses text. */
const FORGED =
  'ci bot\nkey_FAKEFAKEFAKEFAKE\t…abcd\tenterprise\tread,admin\tactive\t-\tops\u001b[2J\u001b[H\u009b31m\u202Eexe.vil\u2028end';
/**
 * The characters of `text` a terminal acts on, but for the line ends and the tabs between columns
 * that the CLI prints itself.
 */
function rawControls(text: string): string[] {
  return [...text].filter((char) => {
    const code = char.codePointAt(0) ?? 0;
    if (char === '\n' || char === '\t') return false;
    return (
      code < 0x20 || (code >= 0x7f && code <= 0x9f) || /[\u2028\u2029\u202a-\u202e\u2066-\u2069]/.test(char)
    );
  });
}

let dataDir: string;
const cli = (...args: string[]) => runCli(args, { PRICEPOINT_DATA_DIR: dataDir });

/** Runs `sql` on the data folder's SQLite file, as a tool other than Pricepoint would. */
function writeDirectly(sql: string, ...params: string[]): void {
  const db = new SQLite(join(dataDir, 'pricepoint.db'));
  try {
    db.prepare(sql).run(...params);
  } finally {
    db.close();
  }
}

let forgedId: string;

before(async () => {
  dataDir = await tempDir();
  assert.equal((await cli('migrate')).code, 0);
  const plain = await cli('keys', 'create', '--tier', 'free', '--name', 'dashboard', '--json');
  assert.equal(plain.code, 0, plain.stderr);
  const other = await cli('keys', 'create', '--tier', 'free', '--name', 'placeholder', '--json');
  assert.equal(other.code, 0, other.stderr);
  forgedId = (onlyJson(other) as { id: string }).id;
  writeDirectly('UPDATE api_keys SET name = ? WHERE id = ?', FORGED, forgedId);
});

describe('keys', () => {
  test('keys list prints one row per key, the stored control characters escaped', async () => {
    const output = await cli('keys', 'list');
    assert.equal(output.code, 0, output.stderr);
    assert.deepEqual(rawControls(output.stdout), []);
    const [header, ...rows] = output.stdout.trimEnd().split('\n');
    assert.equal(header, 'id\tkey\ttier\tscopes\tstate\texpires\tname', 'a header row names the columns');
    assert.equal(rows.length, 2, `two keys, two rows:\n${output.stdout}`);
    for (const row of rows) assert.equal(row.split('\t').length, 7, `seven columns: ${row}`);
    const forged = rows.find((row) => row.startsWith(forgedId)) ?? '';
    assert.ok(
      forged.endsWith(
        'ci bot\\u000akey_FAKEFAKEFAKEFAKE\\u0009…abcd\\u0009enterprise\\u0009read,admin\\u0009active\\u0009-\\u0009ops' +
          '\\u001b[2J\\u001b[H\\u009b31m\\u202eexe.vil\\u2028end',
      ),
      forged,
    );
    assert.equal(output.stdout.includes('key_FAKEFAKEFAKEFAKE\t'), false, 'no forged row or column');
  });

  test('keys show escapes the name; keys list --json gives it back exactly, with no raw control character', async () => {
    const shown = await cli('keys', 'show', forgedId);
    assert.equal(shown.code, 0, shown.stderr);
    assert.deepEqual(rawControls(shown.stdout), []);
    assert.match(shown.stdout, /^name {6}ci bot\\u000akey_FAKE/m);

    const json = await cli('keys', 'list', '--json');
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(rawControls(json.stdout), []);
    const listed = onlyJson(json) as { id: string; name: string }[];
    assert.equal(listed.find((k) => k.id === forgedId)?.name, FORGED);
  });

  test('keys create refuses a name with a control character, naming the rule', async () => {
    for (const name of ['ci\tbot', 'ci\nbot', 'ci\u001b[2Jbot', 'ci\u202Ebot']) {
      const output = await cli('keys', 'create', '--tier', 'free', '--name', name);
      assert.notEqual(output.code, 0, JSON.stringify(name));
      assert.match(output.stderr, /name must be plain text/, output.stderr);
    }
    const listed = onlyJson(await cli('keys', 'list', '--json')) as unknown[];
    assert.equal(listed.length, 2, 'nothing was stored');
  });
});

describe('series', () => {
  test('series list escapes a stored name and unit in text, and gives them back exactly in --json', async () => {
    const upsert = await cli(
      'series',
      'upsert',
      'SE3',
      '--name',
      'Stockholm',
      '--kind',
      'electricity',
      '--currency',
      'EUR',
      '--unit',
      'MWh',
      '--timezone',
      'Europe/Stockholm',
      '--resolution',
      'PT15M',
    );
    assert.equal(upsert.code, 0, upsert.stderr);
    writeDirectly("UPDATE series SET name = ?, unit = ? WHERE symbol = 'SE3'", FORGED, 'M\u001b[5mWh');

    const text = await cli('series', 'list');
    assert.equal(text.code, 0, text.stderr);
    assert.deepEqual(rawControls(text.stdout), []);
    const rows = text.stdout.trimEnd().split('\n');
    assert.equal(rows.length, 2, `a header and one series:\n${text.stdout}`);
    assert.equal(rows[1]?.split('\t').length, 8, rows[1]);
    assert.match(rows[1] ?? '', /^SE3\tci bot\\u000akey_FAKE.*\tM\\u001b\[5mWh\t/);

    const json = await cli('series', 'list', '--json');
    assert.deepEqual(rawControls(json.stdout), []);
    const [series] = onlyJson(json) as { name: string; unit: string }[];
    assert.deepEqual([series?.name, series?.unit], [FORGED, 'M\u001b[5mWh']);
  });
});
