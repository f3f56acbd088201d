/**
 * No module of src/ holds a top-level `let` or `var`: state shared by every app, server and test in
 * a process (a memo, a cache, a counter) belongs to an instance its owner creates (STYLE.md "What this
 * means here"). A module's top-level statements are read with TypeScript's parser, so a `let` in a
 * function or in a string (a page's script) is not one.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { REPO } from '../helpers/process.js';

const SRC = join(REPO, 'src');

/**
 * The only module-level state there is, each one per process by what it is for, with the reason: a
 * new entry needs one as good. An entry whose file has no `let` left fails, so the list only shrinks.
 */
const ONE_PER_PROCESS: Readonly<Record<string, string>> = {
  'src/speed/tick-shape.ts':
    "holds one of Node's tick objects for the life of the process, so that V8 keeps the maps of them all",
  'src/domain/time/zone.ts':
    'the tz database chosen at start from the settings, which every layer asks for days and offsets through plain functions; an instance once they are handed one',
};

const EXEMPT = Object.keys(ONE_PER_PROCESS);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

/** `line: let name` for each top-level `let` or `var` of a module's text. */
function moduleLets(text: string): string[] {
  const file = ts.createSourceFile('module.ts', text, ts.ScriptTarget.Latest, true);
  return file.statements.flatMap((statement) => {
    if (!ts.isVariableStatement(statement)) return [];
    const list = statement.declarationList;
    if (list.flags & (ts.NodeFlags.Const | ts.NodeFlags.Using)) return [];
    const kind = list.flags & ts.NodeFlags.Let ? 'let' : 'var';
    const line = file.getLineAndCharacterOfPosition(statement.getStart(file)).line + 1;
    return list.declarations.map((declaration) => `${line}: ${kind} ${declaration.name.getText(file)}`);
  });
}

/** Every top-level `let` or `var` in src/, as `path:line: let name` with the path from the repository. */
function found(): string[] {
  return sources(SRC).flatMap((path) => {
    const name = relative(REPO, path).split(sep).join('/');
    return moduleLets(readFileSync(path, 'utf8')).map((where) => `${name}:${where}`);
  });
}

test('src/ has no module-level let or var but those of ONE_PER_PROCESS', () => {
  const all = found();
  assert.ok(sources(SRC).length > 100, 'read the modules of src/');
  const exempt = (where: string) => EXEMPT.some((entry) => where.startsWith(entry));
  assert.deepEqual(
    all.filter((where) => !exempt(where)),
    [],
    'state belongs to an instance its owner creates (a factory or class), not to the module',
  );
  // An entry with nothing left to exempt is removed, so the list only shrinks.
  assert.deepEqual(
    EXEMPT.filter((entry) => !all.some((where) => where.startsWith(entry))),
    [],
    'exempt but without a module-level let: remove the entry',
  );
});

test('a top-level let or var is found; one in a function, a block or a string is not', () => {
  const text = [
    'let count = 0;',
    'export let last: string | undefined, seen = 1;',
    'var legacy = true;',
    'const fixed = new Set<string>();',
    'function f() { let inner = 1; return inner; }',
    'if (fixed.size === 0) { let block = 2; }',
    'const page = `',
    'let named = false;',
    '`;',
  ].join('\n');
  assert.deepEqual(moduleLets(text), ['1: let count', '2: let last', '2: let seen', '3: var legacy']);
});
