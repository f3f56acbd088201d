/**
 * The price event behaviour (event-behaviour.ts) on PostgreSQL, each test in a fresh schema dropped
 * afterwards. Skipped with the reason when PostgreSQL is unreachable, except on CI (helpers/postgres.ts).
 */
import { openPostgresStoresInFreshSchema, postgresSchemaUrl } from '../helpers/postgres.js';
import { describeOrSkip } from '../helpers/skip.js';
import { eventBehaviour } from './event-behaviour.js';

const probe = await postgresSchemaUrl();
const skip = 'skip' in probe ? probe.skip : false;

describeOrSkip('PostgreSQL', { skip }, () => eventBehaviour('PostgreSQL', openPostgresStoresInFreshSchema));
