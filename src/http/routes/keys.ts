/**
 * The admin API for keys (docs/api.md, docs/keys-and-tiers.md), for keys with the `admin` scope. Thin: schema,
 * the key service (the same one the CLI uses), and a view with RFC 3339 times. A new key is in the
 * answer of create and rotate, once; no other answer carries a key or a hash: the response schemas
 * below serialise only the fields they name.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LIMIT_NAME, MAX_LIMIT, MAX_LIMITS, MAX_WINDOW_SECONDS } from '../../domain/limits/key-limits.js';
import { MAX_ALLOWED_ADDRESSES } from '../../domain/net/allowed-addresses.js';
import { parseTimestamp } from '../../domain/time/timestamp.js';
import {
  type KeyFieldProblem,
  type KeyService,
  type KeyView,
  MAX_GRACE_MS,
  MAX_OWNER_FIELD,
} from '../../services/key-service.js';
import { SCOPES, type Scope } from '../../stores/types.js';
import { jsonAnswer, keyedErrors, RATE_LIMIT_HEADERS } from '../contract/schemas.js';
import type { KeyGuard } from '../pipeline/admit.js';

const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339 timestamp, UTC.' });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** One limit of a key's own, as a tier's limits are written in the config file. */
const LimitSchema = Type.Object(
  {
    name: Type.String({ pattern: LIMIT_NAME.source }),
    limit: Type.Integer({ minimum: 1, maximum: MAX_LIMIT }),
    windowSeconds: Type.Integer({ minimum: 1, maximum: MAX_WINDOW_SECONDS }),
  },
  { additionalProperties: false },
);
const KeyLimits = Nullable(
  Type.Array(LimitSchema, {
    minItems: 1,
    maxItems: MAX_LIMITS,
    description: "The key's own limits, replacing its tier's whole; null: the tier's.",
  }),
);
const AllowedAddresses = Nullable(
  Type.Array(Type.String({ description: 'An IPv4 or IPv6 CIDR; a bare address is its own /32 or /128.' }), {
    minItems: 1,
    maxItems: MAX_ALLOWED_ADDRESSES,
    description: 'Client addresses the key may be used from (403 address_not_allowed elsewhere); null: any.',
  }),
);
const OwnerField = (description: string) =>
  Nullable(Type.String({ minLength: 1, maxLength: MAX_OWNER_FIELD, description }));
const CustomerRef = OwnerField("The operator's customer reference; shown to admin keys only.");
const Contact = OwnerField('Who to contact about the key; shown to admin keys only.');
// A plain `enum` (not a union of literals) so a wrong value is reported as "must be one of ...".
const ScopeSchema = Type.Unsafe<Scope>({ type: 'string', enum: [...SCOPES] });

/**
 * A key as the API shows it. Registered once by its `$id` (app.ts) and referenced by the key
 * operations: one named schema in the OpenAPI document.
 */
export const KeyViewSchema = Type.Object(
  {
    id: Type.String(),
    last4: Type.String({ description: 'The last four characters of the key, for recognising it.' }),
    name: Type.String(),
    tier: Type.String(),
    scopes: Type.Array(ScopeSchema),
    createdAt: Timestamp,
    expiresAt: Nullable(Timestamp),
    revokedAt: Nullable(Timestamp),
    lastUsedAt: Nullable(
      Type.String({ format: 'date-time', description: 'Written in batches every few seconds.' }),
    ),
    limits: KeyLimits,
    allowedAddresses: AllowedAddresses,
    customerRef: CustomerRef,
    contact: Contact,
  },
  { $id: 'KeyView' },
);
const KeyViewRef = Type.Ref(KeyViewSchema);
type HttpKeyView = Static<typeof KeyViewSchema>;

const CreatedSchema = Type.Composite([
  KeyViewSchema,
  Type.Object({ key: Type.String({ description: 'The key itself: shown in this answer only.' }) }),
]);
export const RotatedSchema = Type.Composite([
  CreatedSchema,
  Type.Object({ previous: KeyViewRef }, { description: 'The old key, with its new expiry.' }),
]);

const CreateBody = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        'Who or what the key is for: plain text, without control characters, line or paragraph separators or bidirectional overrides.',
    }),
    tier: Type.String({ minLength: 1, maxLength: 100 }),
    scopes: Type.Optional(Type.Array(ScopeSchema, { minItems: 1, maxItems: SCOPES.length })),
    expiresAt: Type.Optional(Nullable(Type.String({ maxLength: 40, description: 'RFC 3339 timestamp.' }))),
    limits: Type.Optional(KeyLimits),
    allowedAddresses: Type.Optional(AllowedAddresses),
    customerRef: Type.Optional(CustomerRef),
    contact: Type.Optional(Contact),
  },
  { additionalProperties: false },
);
/** The shapes of the fields create and update share, loosely: the key service checks the values. */
const LOOSE_EXTRAS = {
  limits: Type.Optional(Nullable(Type.Array(Type.Unknown(), { maxItems: 100 }))),
  allowedAddresses: Type.Optional(
    Nullable(Type.Array(Type.String({ maxLength: 100 }), { maxItems: MAX_ALLOWED_ADDRESSES * 2 })),
  ),
  customerRef: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  contact: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
};

/**
 * What the create route validates: only shapes, every field optional, so that the key service
 * checks every value and names every bad field in one 400 (a schema error would name the first).
 * The document shows CreateBody, the rules the service applies.
 */
const CreateBodyShape = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 1000 })),
    tier: Type.Optional(Type.String({ maxLength: 100 })),
    scopes: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 10 })),
    expiresAt: Type.Optional(Nullable(Type.String({ maxLength: 40 }))),
    ...LOOSE_EXTRAS,
  },
  { additionalProperties: false },
);
/** What PATCH documents: every field optional, `null` clears; a field left out stays as it is. */
const UpdateBody = Type.Object(
  {
    name: Type.Optional(CreateBody.properties.name),
    tier: Type.Optional(CreateBody.properties.tier),
    expiresAt: Type.Optional(
      Nullable(Type.String({ maxLength: 40, description: 'RFC 3339 timestamp in the future; null: never.' })),
    ),
    limits: Type.Optional(KeyLimits),
    allowedAddresses: Type.Optional(AllowedAddresses),
    customerRef: Type.Optional(CustomerRef),
    contact: Type.Optional(Contact),
  },
  { additionalProperties: false, minProperties: 1 },
);
/** What PATCH validates: shapes only, so the key service names every bad value in one 400. */
const UpdateBodyShape = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 1000 })),
    tier: Type.Optional(Type.String({ maxLength: 100 })),
    expiresAt: Type.Optional(Nullable(Type.String({ maxLength: 40 }))),
    ...LOOSE_EXTRAS,
  },
  { additionalProperties: false, minProperties: 1 },
);
export const RotateBody = Type.Object(
  {
    graceSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_GRACE_MS / 1000,
        description: 'How long the old key keeps working; 86400 (24 h) by default.',
      }),
    ),
  },
  { additionalProperties: false },
);
const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) }, { additionalProperties: false });
// No query parameters: an unknown one is a 400 like everywhere else.
const NoQuery = Type.Object({}, { additionalProperties: false });

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function httpKeyView(view: KeyView): HttpKeyView {
  return {
    id: view.id,
    last4: view.last4,
    name: view.name,
    tier: view.tier,
    scopes: [...view.scopes],
    createdAt: new Date(view.createdAt).toISOString(),
    expiresAt: iso(view.expiresAt),
    revokedAt: iso(view.revokedAt),
    lastUsedAt: iso(view.lastUsedAt),
    limits: view.limits == null ? null : view.limits.map((l) => ({ ...l })),
    allowedAddresses: view.allowedAddresses == null ? null : [...view.allowedAddresses],
    customerRef: view.customerRef ?? null,
    contact: view.contact ?? null,
  };
}

/** `expiresAt` of a body: epoch ms, `null` (never), `undefined` (left out), or a problem pushed to `known`. */
function expiryOf(
  expiresAt: string | null | undefined,
  now: number,
  known: KeyFieldProblem[],
): number | null | undefined {
  if (expiresAt == null) return expiresAt;
  const parsed = parseTimestamp(expiresAt);
  if (parsed !== undefined && parsed > now) return parsed;
  known.push({
    field: 'expiresAt',
    detail:
      parsed === undefined
        ? 'The field "expiresAt" must be an RFC 3339 timestamp such as 2030-01-01T00:00:00Z'
        : 'The field "expiresAt" must lie in the future',
  });
  return undefined;
}

/**
 * Rotates key `id` and answers 201 with the new key, shown this once, and the old one: the admin
 * rotation and a key's own (./own-key.ts).
 */
export async function rotated(
  reply: FastifyReply,
  deps: Pick<KeyRoutesDeps, 'keys' | 'changed'>,
  id: string,
  { graceSeconds }: Static<typeof RotateBody>,
) {
  const rotation = await deps.keys.rotate(id, graceSeconds === undefined ? undefined : graceSeconds * 1000);
  deps.changed(id);
  return reply
    .code(201)
    .header('cache-control', 'no-store')
    .send({ ...httpKeyView(rotation.record), key: rotation.key, previous: httpKeyView(rotation.previous) });
}

export interface KeyRoutesDeps {
  readonly keys: KeyService;
  readonly keyGuard: KeyGuard;
  readonly clock: () => number;
  /** Called after a key changed, so every instance stops answering it from its key cache. */
  readonly changed: (keyId: string) => void;
}

/** The audit target of the routes of one key: its id, as the path names it. */
const idParam = (request: FastifyRequest) => (request.params as { id?: string }).id;

export function keyRoutes(app: FastifyInstance, deps: KeyRoutesDeps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const admin = deps.keyGuard({ scope: 'admin' });

  api.post(
    '/api/v1/keys',
    {
      onRequest: admin,
      schema: {
        operationId: 'createKey',
        summary: 'Create a key',
        description:
          'Issues a new key in a tier, with scopes (default `read`) and an optional expiry. The key itself is in this answer only: it is stored as a hash.',
        tags: ['keys'],
        querystring: NoQuery,
        body: CreateBodyShape,
        response: {
          201: jsonAnswer('The new key, with `key` shown this once.', CreatedSchema, RATE_LIMIT_HEADERS),
          ...keyedErrors(413, 415),
        },
      },
      config: {
        swaggerTransform: ({ schema, url }) => ({ url, schema: { ...schema, body: CreateBody } }),
        audit: { action: 'keys.create' },
      },
    },
    async (request, reply) => {
      const { expiresAt, ...spec } = request.body;
      const known: KeyFieldProblem[] = [];
      const expiry = expiryOf(expiresAt, deps.clock(), known) ?? null;
      const { key, record } = await deps.keys.create({ ...spec, expiresAt: expiry }, known);
      request.auditTarget = record.id;
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({ ...httpKeyView(record), key });
    },
  );

  api.get(
    '/api/v1/keys',
    {
      onRequest: admin,
      schema: {
        operationId: 'listKeys',
        summary: 'List keys',
        description: 'Every key, revoked and expired ones included; never a key itself or its hash.',
        tags: ['keys'],
        querystring: NoQuery,
        response: {
          200: jsonAnswer('Every key.', Type.Array(KeyViewRef), RATE_LIMIT_HEADERS),
          ...keyedErrors(),
        },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return (await deps.keys.list()).map(httpKeyView);
    },
  );

  api.get(
    '/api/v1/keys/:id',
    {
      onRequest: admin,
      schema: {
        operationId: 'getKey',
        summary: 'Show a key',
        description:
          'One key by its id: tier, scopes, state and when it was last used; never the key itself.',
        tags: ['keys'],
        params: IdParams,
        querystring: NoQuery,
        response: { 200: jsonAnswer('The key.', KeyViewRef, RATE_LIMIT_HEADERS), ...keyedErrors(404) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return httpKeyView(await deps.keys.get(request.params.id));
    },
  );

  api.delete(
    '/api/v1/keys/:id',
    {
      onRequest: admin,
      config: { audit: { action: 'keys.revoke', target: idParam } },
      schema: {
        operationId: 'revokeKey',
        summary: 'Revoke a key',
        description: 'The key stops working at once on this instance and within 5 seconds on every other.',
        tags: ['keys'],
        params: IdParams,
        querystring: NoQuery,
        response: {
          200: jsonAnswer('The revoked key.', KeyViewRef, RATE_LIMIT_HEADERS),
          ...keyedErrors(404),
        },
      },
    },
    async (request, reply) => {
      const revoked = await deps.keys.revoke(request.params.id);
      deps.changed(request.params.id);
      reply.header('cache-control', 'no-store');
      return httpKeyView(revoked);
    },
  );

  api.post(
    '/api/v1/keys/:id/rotate',
    {
      onRequest: admin,
      config: { audit: { action: 'keys.rotate', target: idParam } },
      // No body at all means "the defaults", like an empty object.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        operationId: 'rotateKey',
        summary: 'Rotate a key',
        description:
          'Issues a new key with the same name, tier and scopes; the old one keeps working for `graceSeconds`. The body may be left out.',
        tags: ['keys'],
        params: IdParams,
        querystring: NoQuery,
        body: RotateBody,
        response: {
          201: jsonAnswer(
            'The new key, with `key` shown this once, and the old one with its new expiry.',
            RotatedSchema,
            RATE_LIMIT_HEADERS,
          ),
          ...keyedErrors(404, 413, 415),
        },
      },
    },
    async (request, reply) => rotated(reply, deps, request.params.id, request.body),
  );
  api.patch(
    '/api/v1/keys/:id',
    {
      onRequest: admin,
      schema: {
        operationId: 'updateKey',
        summary: 'Change a key',
        description:
          "Changes the fields the body names: name, tier, expiry, the key's own limits, the addresses it may be used from, and the owner fields; `null` clears one. Every instance applies it within 5 seconds.",
        tags: ['keys'],
        params: IdParams,
        querystring: NoQuery,
        body: UpdateBodyShape,
        response: {
          200: jsonAnswer('The key as changed.', KeyViewRef, RATE_LIMIT_HEADERS),
          ...keyedErrors(404, 413, 415),
        },
      },
      config: {
        swaggerTransform: ({ schema, url }) => ({ url, schema: { ...schema, body: UpdateBody } }),
        audit: { action: 'keys.update', target: idParam },
      },
    },
    async (request, reply) => {
      const { expiresAt, ...patch } = request.body;
      const known: KeyFieldProblem[] = [];
      const expiry = expiryOf(expiresAt, deps.clock(), known);
      const updated = await deps.keys.update(
        request.params.id,
        { ...patch, ...(expiry !== undefined && { expiresAt: expiry }) },
        known,
      );
      deps.changed(request.params.id);
      reply.header('cache-control', 'no-store');
      return httpKeyView(updated);
    },
  );
}
