/**
 * The tables both SQL engines share, as Kysely sees them (docs/data-model.md): prices as the decimal
 * text they arrived as, starts and times as epoch milliseconds. Each engine's `database.ts` declares
 * its own column types and migrations (SQLite `integer`, PostgreSQL `bigint` and the "C" collation);
 * the shapes here are what the shared queries (./price-store.ts, ./key-store.ts) read and write.
 */
import type { Generated } from 'kysely';

export interface SeriesTable {
  id: Generated<number>;
  symbol: string;
  name: string;
  kind: string;
  currency: string;
  unit: string;
  timezone: string;
  resolution: string;
  updated_at: number;
}

export interface PricesTable {
  series_id: number;
  start_ms: number;
  price: string;
}

/** One stored day of a series (docs/sources.md, "Provenance and completeness"). */
export interface DayProvenanceTable {
  series_id: number;
  /** The local date in the series' zone, YYYY-MM-DD. */
  date: string;
  source: string;
  fetched_at: number;
  /** 1 when every interval of the day is stored, else 0. */
  complete: number;
}

export interface ApiKeysTable {
  id: string;
  hash: string;
  last4: string;
  name: string;
  tier: string;
  scopes: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
  /** The key's own limits as JSON (`[{ name, limit, windowSeconds }]`), or NULL for its tier's. */
  limits: string | null;
  /** The CIDRs it may be used from as JSON, or NULL for any address. */
  allowed_addresses: string | null;
  customer_ref: string | null;
  contact: string | null;
}

/** The audit log (docs/audit.md): appended to, read and pruned by time, never updated. */
export interface AuditLogTable {
  id: Generated<number>;
  time: number;
  actor: string;
  address: string | null;
  action: string;
  target: string | null;
  status: number | null;
  code: string | null;
  /** The key a claim or sign-up made (docs/invitations.md); NULL for every other action. */
  key_id: string | null;
}

/** Invitations to claim a key (docs/invitations.md): the token's hash only, as with keys. */
export interface InvitationsTable {
  id: string;
  hash: string;
  tier: string;
  scopes: string;
  created_at: number;
  expires_at: number;
  uses: number;
  claimed: number;
  key_expires_at: number | null;
  note: string | null;
  revoked_at: number | null;
}

/** The tables every SQL engine has; an engine may add its own (SQLite's `key_changes`). */
export interface SqlTables {
  series: SeriesTable;
  prices: PricesTable;
  day_provenance: DayProvenanceTable;
  api_keys: ApiKeysTable;
  audit_log: AuditLogTable;
  invitations: InvitationsTable;
}
