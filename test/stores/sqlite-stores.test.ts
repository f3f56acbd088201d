/** The store behaviour suite (store-behaviour.ts) on the embedded engine: SQLite in memory. */
import { openEmbeddedStores } from '../../src/stores/sqlite/index.js';
import { storeBehaviour } from './store-behaviour.js';

storeBehaviour('SQLite', () => openEmbeddedStores(':memory:'));
