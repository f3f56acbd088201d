/**
 * The stores are the bottom of the house: nothing under src/stores imports from the layers built on
 * them (HTTP, services, the server, webhooks, events, sources, the CLI, MCP, MQTT). The SQL of every
 * table, the webhook and event tables included, lives in src/stores, and the layers above reach it
 * through the interfaces of src/stores/types.ts and src/stores/event-types.ts. The graph is read from
 * the sources' relative imports, type-only and dynamic ones included.
 */
import assert from 'node:assert/strict';
import { join, relative, sep } from 'node:path';
import { test } from 'node:test';
import { importsOf, SRC, sources, specifiersIn } from './import-graph.js';

const ABOVE = ['http', 'services', 'server', 'webhooks', 'events', 'sources', 'cli', 'mcp', 'mqtt'];

/** Each import of a module under src/stores from a layer above it, as `importer -> imported` (relative to src/). */
function upward(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const stores = join(SRC, 'stores') + sep;
  const above = ABOVE.map((name) => join(SRC, name) + sep);
  const found: string[] = [];
  for (const [file, imports] of graph) {
    if (!file.startsWith(stores)) continue;
    for (const imported of imports) {
      if (above.some((dir) => imported.startsWith(dir))) {
        found.push(`${relative(SRC, file)} -> ${relative(SRC, imported)}`);
      }
    }
  }
  return found.sort();
}

test('nothing under src/stores imports from a layer above it', () => {
  const files = sources(join(SRC, 'stores'));
  const graph = new Map(files.map((file) => [file, importsOf(file, { dynamic: true })]));
  assert.ok(graph.size > 20, `read the modules of src/stores (${graph.size})`);
  assert.ok(
    graph
      .get(join(SRC, 'stores', 'sqlite', 'index.ts'))
      ?.includes(join(SRC, 'stores', 'sql', 'event-log.ts')),
    'found the embedded stores importing their event log',
  );
  assert.deepEqual(upward(graph), []);
});

test('an upward import is found, type-only and dynamic ones included', () => {
  const store = join(SRC, 'stores', 'sql', 'x.ts');
  assert.deepEqual(
    upward(
      new Map([
        [store, [join(SRC, 'webhooks', 'service.ts'), join(SRC, 'domain', 'errors', 'api-error.ts')]],
        [join(SRC, 'http', 'app.ts'), [store]],
      ]),
    ),
    ['stores/sql/x.ts -> webhooks/service.ts'],
  );
  // The same import, written in each form the reader must see.
  const forms = [
    "import type { WebhookService } from '../../webhooks/service.js';",
    "export { type WebhookService } from '../../webhooks/service.js';",
    "import {\n  type WebhookService,\n} from '../../webhooks/service.js';",
    "const { createWebhookService } = await import('../../webhooks/service.js');",
    "import '../../webhooks/service.js';",
  ];
  for (const form of forms) {
    assert.deepEqual(specifiersIn(form, { dynamic: true }), ['../../webhooks/service.js'], form);
  }
});
