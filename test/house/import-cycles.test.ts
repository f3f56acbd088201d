/**
 * The modules of src/ import each other without a cycle, type-only imports included: a cycle means two
 * modules that cannot be read, tested or replaced one without the other, and at run time an import
 * that sees the other half still undefined. The graph is read from the sources' relative imports.
 */
import assert from 'node:assert/strict';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { importsOf, SRC, sources } from './import-graph.js';

/** Every cycle, each once, as `a -> b -> a` of paths relative to src/. */
function cycles(graph: Map<string, string[]>): string[] {
  const found = new Set<string>();
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') {
        const loop = stack.slice(stack.indexOf(next)).map((path) => relative(SRC, path));
        const first = loop.indexOf([...loop].sort()[0] ?? '');
        found.add([...loop.slice(first), ...loop.slice(0, first), loop[first]].join(' -> '));
      } else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return [...found].sort();
}

test('src/ has no import cycle', () => {
  const graph = new Map(sources(SRC).map((file) => [file, importsOf(file)]));
  assert.ok(graph.size > 100, `read the modules of src/ (${graph.size})`);
  assert.ok(
    [...graph.values()].some((imports) => imports.length > 0),
    'found their imports',
  );
  assert.deepEqual(cycles(graph), []);
});

test('a cycle is found, type-only imports included', () => {
  const a = join(SRC, 'a.ts');
  const b = join(SRC, 'b.ts');
  const c = join(SRC, 'c.ts');
  assert.deepEqual(
    cycles(
      new Map([
        [a, [b]],
        [b, [c]],
        [c, [a]],
      ]),
    ),
    ['a.ts -> b.ts -> c.ts -> a.ts'],
  );
  assert.deepEqual(importsOf(join(SRC, 'http', 'app.ts')).length > 0, true);
});
