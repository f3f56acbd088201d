/**
 * Invitations and open sign-up (docs/invitations.md). Admin keys make, list and revoke invitations;
 * `claim` and `signup` need no key: the token (or, for sign-up, the operator's `signup:` rules)
 * is the credential. The token is in the answer to `create` once and in the claim link's fragment,
 * which browsers never send to a server, so it reaches no server log.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type TSchema, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parseTimestamp } from '../../domain/time/timestamp.js';
import {
  type InvitationService,
  type InvitationView,
  MAX_NOTE,
  MAX_USES,
} from '../../services/invitation-service.js';
import type { KeyFieldProblem, KeyView } from '../../services/key-service.js';
import { SCOPES, type Scope } from '../../stores/types.js';
import { jsonAnswer, keyedErrors, openErrors, RATE_LIMIT_HEADERS } from '../contract/schemas.js';
import type { KeyGuard } from '../pipeline/admit.js';

const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339 timestamp, UTC.' });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const ScopeSchema = Type.Unsafe<Scope>({ type: 'string', enum: [...SCOPES] });

const InvitationViewSchema = Type.Object(
  {
    id: Type.String(),
    tier: Type.String(),
    scopes: Type.Array(ScopeSchema),
    expiresAt: Type.String({ format: 'date-time', description: 'When the invitation stops working.' }),
    uses: Type.Integer({ description: 'How many keys it may make.' }),
    claimed: Type.Integer({ description: 'How many keys it made.' }),
    keyExpiresAt: Nullable(
      Type.String({ format: 'date-time', description: 'The expiry of each key it makes; null: none.' }),
    ),
    note: Nullable(Type.String({ description: "The operator's note; never shown to the customer." })),
    createdAt: Timestamp,
    revokedAt: Nullable(Timestamp),
    state: Type.Unsafe<string>({ type: 'string', enum: ['active', 'expired', 'used_up', 'revoked'] }),
  },
  { $id: 'InvitationView' },
);
const InvitationRef = Type.Ref(InvitationViewSchema);

export { InvitationViewSchema };

const CreatedSchema = Type.Composite([
  InvitationViewSchema,
  Type.Object({
    token: Type.String({ description: 'The token itself: shown in this answer only.' }),
    claimUrl: Type.String({
      description: 'The link to send the customer: the portal claim page with the token in its fragment.',
    }),
  }),
]);

/** What the document shows: the rules the service applies. */
const CreateBody = Type.Object(
  {
    tier: Type.String({ minLength: 1, maxLength: 100 }),
    scopes: Type.Optional(Type.Array(ScopeSchema, { minItems: 1, maxItems: SCOPES.length })),
    expiresAt: Type.Optional(
      Type.String({
        maxLength: 40,
        description:
          'RFC 3339 timestamp: when the invitation stops working; 7 days from now by default, at most 90.',
      }),
    ),
    uses: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_USES, description: 'Keys it may make; 1 by default.' }),
    ),
    keyExpiresAt: Type.Optional(
      Nullable(
        Type.String({ maxLength: 40, description: 'RFC 3339 expiry of each key it makes; null: none.' }),
      ),
    ),
    note: Type.Optional(
      Type.String({ minLength: 1, maxLength: MAX_NOTE, description: "The operator's note, plain text." }),
    ),
  },
  { additionalProperties: false },
);
/** What the route validates: shapes only, so the service names every bad value in one 400. */
const CreateBodyShape = Type.Object(
  {
    tier: Type.Optional(Type.String({ maxLength: 100 })),
    scopes: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 10 })),
    expiresAt: Type.Optional(Type.String({ maxLength: 40 })),
    uses: Type.Optional(Type.Number()),
    keyExpiresAt: Type.Optional(Nullable(Type.String({ maxLength: 40 }))),
    note: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  },
  { additionalProperties: false },
);

const NewKeySchema = Type.Object({
  key: Type.String({ description: 'The key itself: shown in this answer only.' }),
  id: Type.String(),
  name: Type.String(),
  tier: Type.String(),
  scopes: Type.Array(ScopeSchema),
  expiresAt: Nullable(Timestamp),
  createdAt: Timestamp,
});
const KeyName = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'What the key is for, as a key is named: plain text, 1 to 200 characters.',
});
const ClaimBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 200, description: 'The token from the claim link.' }),
    name: KeyName,
  },
  { additionalProperties: false },
);
const SignupBody = Type.Object({ name: KeyName }, { additionalProperties: false });
const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) }, { additionalProperties: false });
const NoQuery = Type.Object({}, { additionalProperties: false });

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function httpView(view: InvitationView) {
  return {
    id: view.id,
    tier: view.tier,
    scopes: [...view.scopes],
    expiresAt: new Date(view.expiresAt).toISOString(),
    uses: view.uses,
    claimed: view.claimed,
    keyExpiresAt: iso(view.keyExpiresAt),
    note: view.note,
    createdAt: new Date(view.createdAt).toISOString(),
    revokedAt: iso(view.revokedAt),
    state: view.state,
  };
}

function newKeyView(key: string, view: KeyView) {
  return {
    key,
    id: view.id,
    name: view.name,
    tier: view.tier,
    scopes: [...view.scopes],
    expiresAt: iso(view.expiresAt),
    createdAt: new Date(view.createdAt).toISOString(),
  };
}

/** A timestamp field of the body: epoch ms, `null`, `undefined` (left out), or a problem pushed to `known`. */
function timeOf(
  field: string,
  value: string | null | undefined,
  known: KeyFieldProblem[],
): number | null | undefined {
  if (value == null) return value;
  const parsed = parseTimestamp(value);
  if (parsed !== undefined) return parsed;
  known.push({ field, detail: `${field} must be an RFC 3339 timestamp such as 2030-01-01T00:00:00Z` });
  return undefined;
}

/** Where a claim link points: the configured public address, else the address this request came to. */
function claimUrl(request: FastifyRequest, publicUrl: string | undefined, token: string): string {
  return `${publicBase(request, publicUrl)}/portal/claim#${token}`;
}

function publicBase(request: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl !== undefined) return publicUrl.replace(/\/+$/, '');
  try {
    // The scheme and host as the server worked them out (a trusted proxy's included).
    return new URL(`${request.protocol}://${request.host}`).origin;
  } catch {
    return `${request.protocol}://localhost`;
  }
}

export interface InvitationRoutesDeps {
  readonly invitations: InvitationService;
  readonly keyGuard: KeyGuard;
  readonly publicUrl: string | undefined;
}

const idParam = (request: FastifyRequest) => (request.params as { id?: string }).id;

export function invitationRoutes(app: FastifyInstance, deps: InvitationRoutesDeps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const admin = deps.keyGuard({ scope: 'admin' });
  const { invitations } = deps;

  api.post(
    '/api/v1/invitations',
    {
      onRequest: admin,
      schema: {
        operationId: 'createInvitation',
        summary: 'Make an invitation',
        description:
          'An invitation to claim a key of a tier, with scopes, an expiry and a number of uses. The token and the claim link are in this answer only: the token is stored as a hash.',
        tags: ['invitations'],
        querystring: NoQuery,
        body: CreateBodyShape,
        response: {
          201: jsonAnswer(
            'The invitation, with `token` and `claimUrl` shown this once.',
            CreatedSchema,
            RATE_LIMIT_HEADERS,
          ),
          ...keyedErrors(413, 415),
        },
      },
      config: {
        swaggerTransform: ({ schema, url }) => ({ url, schema: { ...schema, body: CreateBody } }),
        audit: { action: 'invitations.create' },
      },
    },
    async (request, reply) => {
      const { expiresAt, keyExpiresAt, ...rest } = request.body;
      const known: KeyFieldProblem[] = [];
      const expiry = timeOf('expiresAt', expiresAt, known) ?? undefined;
      const keyExpiry = timeOf('keyExpiresAt', keyExpiresAt, known);
      const { token, record } = await invitations.create(
        {
          ...rest,
          ...(expiry !== undefined && { expiresAt: expiry }),
          ...(keyExpiry !== undefined && { keyExpiresAt: keyExpiry }),
        },
        known,
      );
      request.auditTarget = record.id;
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({ ...httpView(record), token, claimUrl: claimUrl(request, deps.publicUrl, token) });
    },
  );

  api.get(
    '/api/v1/invitations',
    {
      onRequest: admin,
      schema: {
        operationId: 'listInvitations',
        summary: 'List invitations',
        description: 'Every invitation, newest first, with its state; never a token.',
        tags: ['invitations'],
        querystring: NoQuery,
        response: {
          200: jsonAnswer('Every invitation.', Type.Array(InvitationRef), RATE_LIMIT_HEADERS),
          ...keyedErrors(),
        },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return (await invitations.list()).map(httpView);
    },
  );

  api.get(
    '/api/v1/invitations/:id',
    {
      onRequest: admin,
      schema: {
        operationId: 'getInvitation',
        summary: 'Show an invitation',
        description: 'One invitation by its id, with its state and how many keys it made; never its token.',
        tags: ['invitations'],
        params: IdParams,
        querystring: NoQuery,
        response: {
          200: jsonAnswer('The invitation.', InvitationRef, RATE_LIMIT_HEADERS),
          ...keyedErrors(404),
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return httpView(await invitations.get(request.params.id));
    },
  );

  api.delete(
    '/api/v1/invitations/:id',
    {
      onRequest: admin,
      config: { audit: { action: 'invitations.revoke', target: idParam } },
      schema: {
        operationId: 'revokeInvitation',
        summary: 'Revoke an invitation',
        description: 'It can no longer be claimed; keys it made already keep working.',
        tags: ['invitations'],
        params: IdParams,
        querystring: NoQuery,
        response: {
          204: jsonAnswer(
            'Revoked (revoking twice keeps the first time); no body.',
            Type.Null(),
            RATE_LIMIT_HEADERS,
          ),
          ...keyedErrors(404),
        },
      },
    },
    async (request, reply) => {
      await invitations.revoke(request.params.id);
      return reply.code(204).header('cache-control', 'no-store').send(null);
    },
  );

  api.post(
    '/api/v1/invitations/claim',
    {
      config: {
        // Successes and refusals of a token; each refusal costs the address a unit of its
        // failed-login budget, so no client can add entries without bound.
        audit: {
          action: 'invitations.claim',
          open: (status) => status === 201 || status === 404 || status === 410,
        },
      },
      schema: {
        operationId: 'claimInvitation',
        summary: 'Claim a key with an invitation',
        description:
          "No key needed: the token from the claim link makes a new key in the invitation's tier, named `name`, shown in this answer only. A token no invitation has counts against the address' failed-login budget.",
        tags: ['invitations'],
        security: [],
        querystring: NoQuery,
        body: ClaimBody,
        response: {
          201: jsonAnswer('The new key, with `key` shown this once.', NewKeySchema),
          ...openErrors(400, 404, 410, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { key, record } = await invitations.claim(
        request.body.token,
        request.body.name,
        request.ip,
        (id) => {
          request.auditTarget = id;
        },
      );
      request.auditKeyId = record.id;
      return reply.code(201).header('cache-control', 'no-store').send(newKeyView(key, record));
    },
  );

  api.post(
    '/api/v1/signup',
    {
      // Only keys made: a refusal is no change, and closed or limited sign-ups could be repeated without bound.
      config: { audit: { action: 'signup', open: (status) => status === 201 } },
      schema: {
        operationId: 'signUp',
        summary: 'Sign up for a key',
        description:
          'No key needed, and off unless the operator turned it on for one tier (403 `signup_closed`): makes a key named `name` in that tier, shown in this answer only. Each client address may make only so many (429 `rate_limited`).',
        tags: ['invitations'],
        security: [],
        querystring: NoQuery,
        body: SignupBody,
        response: {
          201: jsonAnswer('The new key, with `key` shown this once.', NewKeySchema),
          ...openErrors(400, 403, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { key, record } = await invitations.signup(request.body.name, request.ip);
      request.auditTarget = record.id;
      request.auditKeyId = record.id;
      return reply.code(201).header('cache-control', 'no-store').send(newKeyView(key, record));
    },
  );
}
