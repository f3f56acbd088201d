/** The price event behaviour (event-behaviour.ts) on the embedded engine: SQLite in memory and in a file. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import { eventBehaviour } from './event-behaviour.js';

eventBehaviour('SQLite in memory', () => openEmbeddedStores(':memory:'));

// A file takes the other import paths: small imports on a connection of their own, large ones staged.
eventBehaviour('SQLite file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'pricepoint-events-'));
  const stores = await openEmbeddedStores(join(dir, 'pricepoint.db'));
  return {
    ...stores,
    async close() {
      await stores.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
