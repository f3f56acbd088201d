/** The routes the hostile requests go to, the keys they may carry, and the odds of a hostile part. */
import fc from 'fast-check';

// ---------------------------------------------------------------------------------------------
// The routes, listed by hand from src/http/routes/*, docs.ts (and the swagger-ui plugin it
// registers) and the CORS preflight. The first test of hostile-requests.test.ts proves the list
// against the OpenAPI document and the router, so a route added later fails there until it is
// fuzzed too.
// ---------------------------------------------------------------------------------------------

type Access = 'open' | 'read' | 'write' | 'admin';
export type BodyKind =
  | 'none'
  | 'key'
  | 'keyPatch'
  | 'rotate'
  | 'series'
  | 'prices'
  | 'webhook'
  | 'mcp'
  | 'invitation'
  | 'claim'
  | 'signup';
export type QueryName =
  | 'symbols'
  | 'tz'
  | 'format'
  | 'resolution'
  | 'from'
  | 'to'
  | 'duration'
  | 'hours'
  | 'granularity'
  | 'action'
  | 'actor'
  | 'limit'
  | 'cursor';

export interface RouteSpec {
  readonly method: 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE' | 'OPTIONS';
  /** Fastify's spelling: `:name` for a path parameter, `*` for the rest of the path. */
  readonly url: string;
  readonly access: Access;
  /** The query parameters the route knows; `from`, `to`, `duration` and `hours` are required where listed. */
  readonly query: readonly QueryName[];
  readonly body: BodyKind;
}

export const READ: readonly QueryName[] = ['symbols', 'tz', 'format', 'resolution'];
export const open = (url: string, method: RouteSpec['method'] = 'GET'): RouteSpec => ({
  method,
  url,
  access: 'open',
  query: [],
  body: 'none',
});

export const ROUTES: readonly RouteSpec[] = [
  ...['/', '/api', '/api/', '/api/v1', '/api/v1/'].map((url) => open(url)),
  open('/favicon.ico'),
  open('/llms.txt'),
  open('/healthz'),
  open('/readyz'),
  open('/metrics'),
  open('/api/v1/openapi.json'),
  open('/docs'),
  open('/docs/'),
  open('/docs/static/index.html'),
  open('/docs/static/swagger-initializer.js'),
  open('/docs/json'),
  open('/docs/yaml'),
  open('/docs/static/*'),
  open('/*', 'OPTIONS'),
  open('/console'),
  open('/console/'),
  open('/portal'),
  open('/portal/'),
  open('/portal/claim'),
  open('/portal/signup'),
  open('/assets/:version/*'),
  { method: 'GET', url: '/api/v1/prices/today', access: 'read', query: READ, body: 'none' },
  { method: 'GET', url: '/api/v1/prices/latest', access: 'read', query: READ, body: 'none' },
  { method: 'GET', url: '/api/v1/prices/:date', access: 'read', query: READ, body: 'none' },
  { method: 'GET', url: '/api/v1/prices', access: 'read', query: ['from', 'to', ...READ], body: 'none' },
  {
    method: 'GET',
    url: '/api/v1/prices/cheapest',
    access: 'read',
    query: ['symbols', 'from', 'to', 'duration', 'tz', 'format'],
    body: 'none',
  },
  {
    method: 'GET',
    url: '/api/v1/prices/now',
    access: 'read',
    query: ['symbols', 'format', 'resolution'],
    body: 'none',
  },
  {
    method: 'GET',
    url: '/api/v1/prices/cheapest-now',
    access: 'read',
    query: ['symbols', 'hours', 'format', 'resolution'],
    body: 'none',
  },
  {
    method: 'GET',
    url: '/api/v1/prices/forecast',
    access: 'read',
    query: ['symbols', 'format', 'resolution'],
    body: 'none',
  },
  { method: 'GET', url: '/api/v1/series', access: 'read', query: READ, body: 'none' },
  {
    method: 'GET',
    url: '/api/v1/series/:symbol',
    access: 'read',
    query: ['tz', 'format', 'resolution'],
    body: 'none',
  },
  { method: 'GET', url: '/api/v1/tariffs', access: 'read', query: [], body: 'none' },
  { method: 'GET', url: '/api/v1/usage', access: 'read', query: [], body: 'none' },
  {
    method: 'GET',
    url: '/api/v1/usage/history',
    access: 'read',
    query: ['from', 'to', 'granularity', 'tz', 'format'],
    body: 'none',
  },
  {
    method: 'GET',
    url: '/api/v1/usage/overview',
    access: 'admin',
    query: ['from', 'to', 'granularity', 'tz', 'format'],
    body: 'none',
  },
  { method: 'POST', url: '/mcp', access: 'read', query: [], body: 'mcp' },
  { method: 'PUT', url: '/api/v1/series/:symbol', access: 'admin', query: [], body: 'series' },
  { method: 'PUT', url: '/api/v1/series/:symbol/prices', access: 'write', query: [], body: 'prices' },
  { method: 'POST', url: '/api/v1/keys', access: 'admin', query: [], body: 'key' },
  { method: 'GET', url: '/api/v1/keys', access: 'admin', query: [], body: 'none' },
  { method: 'GET', url: '/api/v1/keys/:id', access: 'admin', query: [], body: 'none' },
  { method: 'DELETE', url: '/api/v1/keys/:id', access: 'admin', query: [], body: 'none' },
  { method: 'POST', url: '/api/v1/keys/:id/rotate', access: 'admin', query: [], body: 'rotate' },
  {
    method: 'GET',
    url: '/api/v1/keys/:id/usage',
    access: 'admin',
    query: ['from', 'to', 'granularity', 'tz', 'format'],
    body: 'none',
  },
  { method: 'PATCH', url: '/api/v1/keys/:id', access: 'admin', query: [], body: 'keyPatch' },
  {
    method: 'GET',
    url: '/api/v1/audit',
    access: 'admin',
    query: ['action', 'actor', 'limit', 'cursor'],
    body: 'none',
  },
  { method: 'POST', url: '/api/v1/invitations', access: 'admin', query: [], body: 'invitation' },
  { method: 'GET', url: '/api/v1/invitations', access: 'admin', query: [], body: 'none' },
  { method: 'GET', url: '/api/v1/invitations/:id', access: 'admin', query: [], body: 'none' },
  { method: 'DELETE', url: '/api/v1/invitations/:id', access: 'admin', query: [], body: 'none' },
  { method: 'POST', url: '/api/v1/invitations/claim', access: 'open', query: [], body: 'claim' },
  { method: 'POST', url: '/api/v1/signup', access: 'open', query: [], body: 'signup' },
  { method: 'POST', url: '/api/v1/webhooks', access: 'admin', query: [], body: 'webhook' },
  { method: 'GET', url: '/api/v1/webhooks', access: 'admin', query: [], body: 'none' },
  { method: 'GET', url: '/api/v1/webhooks/:id', access: 'admin', query: [], body: 'none' },
  { method: 'DELETE', url: '/api/v1/webhooks/:id', access: 'admin', query: [], body: 'none' },
  { method: 'POST', url: '/api/v1/webhooks/:id/enable', access: 'admin', query: [], body: 'none' },
  { method: 'POST', url: '/api/v1/webhooks/:id/disable', access: 'admin', query: [], body: 'none' },
  { method: 'GET', url: '/api/v1/webhooks/:id/deliveries', access: 'admin', query: [], body: 'none' },
  {
    method: 'POST',
    url: '/api/v1/webhooks/:id/deliveries/:eventId/redeliver',
    access: 'admin',
    query: [],
    body: 'none',
  },
  { method: 'GET', url: '/api/v1/events', access: 'read', query: ['symbols'], body: 'none' },
  { method: 'POST', url: '/api/v1/console/sign-in', access: 'admin', query: [], body: 'none' },
  { method: 'POST', url: '/api/v1/key/rotate', access: 'read', query: [], body: 'rotate' },
  { method: 'GET', url: '/api/v1/sources', access: 'admin', query: [], body: 'none' },
  { method: 'GET', url: '/api/v1/sources/zones', access: 'admin', query: [], body: 'none' },
  { method: 'POST', url: '/api/v1/sources/:name/run', access: 'admin', query: [], body: 'none' },
];

export const routeName = (route: RouteSpec) => `${route.method} ${route.url}`;

/** Keys of every kind and standing, made in `before`. */
export interface KeyRing {
  readonly read: string;
  readonly write: string;
  readonly admin: string;
  readonly demo: string;
  readonly test: string;
  readonly revoked: string;
  readonly unknown: string;
  /**
   * Keys of a tier that lets them rotate themselves, for `POST /api/v1/key/rotate`: their own, so that
   * rotating one (a grace of 0 ends it at once) leaves the keys the other routes use alive.
   */
  readonly selfRotating: readonly string[];
  /**
   * Ids for the key routes, one set to revoke and one to rotate (a revoked key cannot be rotated);
   * never of a key the requests authenticate with, so that those stay alive.
   */
  readonly victims: { readonly revoke: readonly string[]; readonly rotate: readonly string[] };
  readonly revokedId: string;
  /** Webhook ids for the webhook routes, one set to remove and one kept, with one delivery each (`FUZZ_EVENT_ID`). */
  readonly webhooks: { readonly remove: readonly string[]; readonly keep: readonly string[] };
  /** The version in the pages' asset URLs (`/assets/<version>/...`, src/http/pages/pages.ts). */
  readonly assetsVersion: string;
  /** Invitations for the invitation routes: ids (some revoked by the fuzzing) and the tokens of others. */
  readonly invitations: { readonly ids: readonly string[]; readonly tokens: readonly string[] };
}

/** The event of the one delivery each kept webhook has, so that redelivering it can succeed. */
export const FUZZ_EVENT_ID = 'evt_000000000001';

/** The part of a key after `pp_<kind>_` (as in no-key-leaks.test.ts): masked or re-prefixed copies count too. */
export function secretOf(key: string): string {
  return key.replace(/^pp_[a-z]+_/, '');
}

/** Mostly `plausible`, sometimes `hostile`: `odds` plausible ones to each hostile one. */
export function mostly<T>(plausible: fc.Arbitrary<T>, hostile: fc.Arbitrary<T>, odds = 4): fc.Arbitrary<T> {
  return fc.oneof({ weight: odds, arbitrary: plausible }, { weight: 1, arbitrary: hostile });
}
