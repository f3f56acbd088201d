/**
 * `GET /api/v1/audit` (docs/audit.md): the audit log of admin actions, newest first, for admin keys.
 * Paged by entry id: each page names the next in `next` and a `Link: <…>; rel="next"` header.
 * Reading the log is not itself an entry (only actions that change something are).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors/api-error.js';
import { parseTimestamp } from '../../domain/time/timestamp.js';
import { AUDIT_ACTIONS, type AuditService } from '../../services/audit-service.js';
import type { AuditEntry } from '../../stores/types.js';
import { jsonAnswer, keyedErrors, RATE_LIMIT_HEADERS } from '../contract/schemas.js';
import type { KeyGuard } from '../pipeline/admit.js';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

const When = (description: string) =>
  Type.String({
    maxLength: 40,
    description: `${description}: an RFC 3339 timestamp, or YYYY-MM-DD for 00:00 UTC that day.`,
  });
const AuditQuerySchema = Type.Object(
  {
    from: Type.Optional(When('Entries at or after this time')),
    to: Type.Optional(When('Entries before this time')),
    action: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: [...AUDIT_ACTIONS] })),
    // Not `key`: a parameter of that name is refused as a key in the URL (docs/keys-and-tiers.md).
    actor: Type.Optional(
      Type.String({
        pattern: '^(?:key_[0-9A-Za-z]{1,64}|cli|anonymous)$',
        description:
          'Entries of one acting key, by its id, `cli` for the command line, or `anonymous` for claims, sign-ups and refused console sign-ins with an unknown key.',
      }),
    ),
    limit: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,4}$',
        description: `Entries per page, 1 to ${MAX_LIMIT}; ${DEFAULT_LIMIT} by default.`,
      }),
    ),
    cursor: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,15}$',
        description: 'Where a page begins: the `next` of the page before.',
      }),
    ),
  },
  { additionalProperties: false },
);

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);
const AuditEntrySchema = Type.Object({
  id: Type.Integer({ description: 'Rises with every entry.' }),
  time: Type.String({ format: 'date-time' }),
  actor: Type.String({
    description:
      'The acting key id, `cli` for the `pricepoint` command, or `anonymous` for claims, sign-ups and refused console sign-ins with an unknown key.',
  }),
  address: Nullable(Type.String({ description: 'The client address; null for the command line.' })),
  action: Type.String({ description: `One of ${AUDIT_ACTIONS.join(', ')}.` }),
  target: Nullable(
    Type.String({ description: 'A key id, symbol, webhook id, source name or invitation id.' }),
  ),
  keyId: Nullable(
    Type.String({ description: 'The key a claim or sign-up made; null for every other action.' }),
  ),
  outcome: Type.Object({
    status: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The HTTP status answered; null for the command line.',
    }),
    code: Type.Union([Type.String(), Type.Null()], {
      description: 'The problem code of a refusal or failure; null when it succeeded.',
    }),
  }),
});
const AuditPageSchema = Type.Object({
  entries: Type.Array(AuditEntrySchema),
  next: Nullable(Type.String({ description: 'The URL of the next (older) page; null on the last.' })),
});

function entryView(entry: AuditEntry) {
  return {
    id: entry.id,
    time: new Date(entry.time).toISOString(),
    actor: entry.actor,
    address: entry.address,
    action: entry.action,
    target: entry.target,
    keyId: entry.keyId ?? null,
    outcome: { status: entry.status, code: entry.code },
  };
}

function timeOf(name: 'from' | 'to', value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseTimestamp(value);
  if (ms === undefined) {
    throw new ApiError(
      'invalid_parameter',
      `${name} must be an RFC 3339 timestamp or a date (YYYY-MM-DD), not "${value.slice(0, 40)}".`,
      { extra: { parameter: name } },
    );
  }
  return ms;
}

export function auditRoutes(app: FastifyInstance, deps: { audit: AuditService; keyGuard: KeyGuard }): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  api.get(
    '/api/v1/audit',
    {
      onRequest: deps.keyGuard({ scope: 'admin' }),
      schema: {
        operationId: 'listAudit',
        summary: 'The audit log',
        description:
          'Admin actions (keys, series, price uploads, webhooks, source runs), newest first: who, when, from which address, what, to what, and how it ended. Never a key or a secret.',
        tags: ['audit'],
        querystring: AuditQuerySchema,
        response: {
          200: jsonAnswer('One page of entries, newest first.', AuditPageSchema, {
            ...RATE_LIMIT_HEADERS,
            link: {
              type: 'string',
              description:
                '<URL of the next page>; rel="next" while older entries follow (the same URL as `next`).',
              component: 'LinkNextAudit',
            },
          }),
          ...keyedErrors(),
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const from = timeOf('from', q.from);
      const to = timeOf('to', q.to);
      const limit = q.limit === undefined ? DEFAULT_LIMIT : Number(q.limit);
      if (limit < 1 || limit > MAX_LIMIT) {
        throw new ApiError('invalid_parameter', `limit must be 1 to ${MAX_LIMIT}.`, {
          extra: { parameter: 'limit' },
        });
      }
      // One more than the page, to know whether another page follows.
      const found = await deps.audit.list({
        ...(from !== undefined && { from }),
        ...(to !== undefined && { to }),
        ...(q.action !== undefined && { action: String(q.action) }),
        ...(q.actor !== undefined && { actor: q.actor }),
        ...(q.cursor !== undefined && { before: Number(q.cursor) }),
        limit: limit + 1,
      });
      const entries = found.slice(0, limit);
      const last = entries[entries.length - 1];
      let next: string | null = null;
      if (found.length > limit && last !== undefined) {
        const params = new URLSearchParams(
          Object.entries(q).filter((e): e is [string, string] => e[0] !== 'cursor' && e[1] !== undefined),
        );
        params.set('cursor', String(last.id));
        next = `/api/v1/audit?${params}`;
        reply.header('link', `<${next}>; rel="next"`);
      }
      reply.header('cache-control', 'no-store');
      return { entries: entries.map(entryView), next };
    },
  );
}
