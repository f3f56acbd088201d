/**
 * The price event behaviour (event-behaviour.ts) on PostgreSQL, each test in a fresh schema dropped
 * afterwards. Skipped with the reason when PostgreSQL is unreachable, except on CI (helpers/postgres.ts).
 */
import { openPostgresStores } from '../../src/stores/postgres/index.js';
import { postgresSchemaUrl } from '../helpers/postgres.js';
import { describeOrSkip } from '../helpers/skip.js';
import { type EventStores, eventBehaviour } from './event-behaviour.js';

const probe = await postgresSchemaUrl();
const skip = 'skip' in probe ? probe.skip : false;

async function openInFreshSchema(): Promise<EventStores> {
  const target = await postgresSchemaUrl();
  if ('skip' in target) throw new Error(target.skip);
  try {
    const stores = await openPostgresStores(target.url, { schema: target.schema });
    return {
      ...stores,
      async close() {
        try {
          await stores.close();
        } finally {
          await target.drop();
        }
      },
    };
  } catch (error) {
    await target.drop();
    throw error;
  }
}

describeOrSkip('PostgreSQL', { skip }, () => eventBehaviour('PostgreSQL', openInFreshSchema));
