/**
 * The admin API for webhooks (docs/webhooks.md), for keys with the `admin` scope: register, list,
 * show, remove, enable and disable endpoints, read an endpoint's delivery log and redeliver. A new
 * endpoint's signing secret is in the answer of create, once; the response schemas below serialise
 * only the fields they name, so no other answer carries it.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors/api-error.js';
import type { EventLog } from '../../stores/event-types.js';
import { EVENT_TYPES, type WebhookService } from '../../webhooks/service.js';
import { jsonAnswer, keyedErrors, RATE_LIMIT_HEADERS } from '../contract/schemas.js';
import type { KeyGuard } from '../pipeline/admit.js';

const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339 timestamp, UTC.' });
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);
const EventType = Type.Union([Type.Literal('day.published'), Type.Literal('day.revised')]);
const Symbols = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 1000 });

export const WebhookViewSchema = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    events: Type.Array(EventType),
    symbols: Type.Union([Symbols, Type.Null()], { description: 'The symbols it wants; null: every symbol.' }),
    enabled: Type.Boolean(),
    disabledReason: Nullable(Type.String({ description: 'Why it was disabled: by an admin, or failing.' })),
    createdAt: Timestamp,
  },
  { $id: 'WebhookView' },
);
const WebhookViewRef = Type.Ref(WebhookViewSchema);
const CreatedSchema = Type.Composite([
  WebhookViewSchema,
  Type.Object({
    secret: Type.String({ description: 'The signing secret (`whsec_...`): shown in this answer only.' }),
  }),
]);
const DeliverySchema = Type.Object({
  eventId: Type.String({ description: 'The event, also sent as `webhook-id`.' }),
  state: Type.Unsafe<string>({ type: 'string', enum: ['pending', 'delivered', 'failed'] }),
  attempts: Type.Integer(),
  lastAttemptAt: Nullable(Timestamp),
  nextAttemptAt: Nullable(Timestamp),
  status: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's last HTTP status." }),
  latencyMs: Type.Union([Type.Integer(), Type.Null()]),
  error: Nullable(Type.String()),
});

const CreateBody = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2000,
      description: 'https (or http where allowed); no private address.',
    }),
    events: Type.Array(EventType, { minItems: 1, maxItems: EVENT_TYPES.length }),
    symbols: Type.Optional(Type.Union([Symbols, Type.Null()])),
  },
  { additionalProperties: false },
);
const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) }, { additionalProperties: false });
const DeliveryParams = Type.Object(
  { id: Type.String({ maxLength: 100 }), eventId: Type.String({ maxLength: 100 }) },
  { additionalProperties: false },
);
const NoQuery = Type.Object({}, { additionalProperties: false });

export interface WebhookRoutesDeps {
  readonly webhooks: WebhookService;
  /** New endpoints start at its newest event; without one, at the start. */
  readonly events: EventLog | undefined;
  readonly keyGuard: KeyGuard;
}

const notFound = (id: string) => new ApiError('not_found', `There is no webhook with id ${id}.`);

export function webhookRoutes(app: FastifyInstance, deps: WebhookRoutesDeps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const admin = deps.keyGuard({ scope: 'admin' });
  const { webhooks } = deps;
  const common = { onRequest: admin };
  // The audit target of the routes of one endpoint: its id, as the path names it.
  const idParam = (request: FastifyRequest) => (request.params as { id: string }).id;
  const tags = ['webhooks'];

  api.post(
    '/api/v1/webhooks',
    {
      ...common,
      config: { audit: { action: 'webhooks.create' } },
      schema: {
        operationId: 'createWebhook',
        summary: 'Register a webhook',
        description:
          'Events of the listed types (and symbols) committed from now on are delivered to `url`, signed per the Standard Webhooks specification with `secret`, which is in this answer only.',
        tags,
        querystring: NoQuery,
        body: CreateBody,
        response: {
          201: jsonAnswer('The endpoint, with `secret` shown this once.', CreatedSchema, RATE_LIMIT_HEADERS),
          ...keyedErrors(413, 415),
        },
      },
    },
    async (request, reply) => {
      const latest = (await deps.events?.latestSeq()) ?? 0;
      const { endpoint, secret } = await webhooks.create(request.body, latest);
      request.auditTarget = endpoint.id;
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({ ...endpoint, secret });
    },
  );

  api.get(
    '/api/v1/webhooks',
    {
      ...common,
      schema: {
        operationId: 'listWebhooks',
        summary: 'List webhooks',
        description: 'Every endpoint, enabled or not; never a secret.',
        tags,
        querystring: NoQuery,
        response: {
          200: jsonAnswer('Every endpoint.', Type.Array(WebhookViewRef), RATE_LIMIT_HEADERS),
          ...keyedErrors(),
        },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return webhooks.list();
    },
  );

  api.get(
    '/api/v1/webhooks/:id',
    {
      ...common,
      schema: {
        operationId: 'getWebhook',
        summary: 'Show a webhook',
        description: 'One endpoint by its id: its URL, filters and state; never its secret.',
        tags,
        params: IdParams,
        querystring: NoQuery,
        response: {
          200: jsonAnswer('The endpoint.', WebhookViewRef, RATE_LIMIT_HEADERS),
          ...keyedErrors(404),
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return (await webhooks.get(request.params.id)) ?? Promise.reject(notFound(request.params.id));
    },
  );

  api.delete(
    '/api/v1/webhooks/:id',
    {
      ...common,
      config: { audit: { action: 'webhooks.delete', target: idParam } },
      schema: {
        operationId: 'deleteWebhook',
        summary: 'Remove a webhook',
        description: 'The endpoint and its delivery log are removed; nothing more is sent to it.',
        tags,
        params: IdParams,
        querystring: NoQuery,
        response: {
          200: jsonAnswer('The removed endpoint.', WebhookViewRef, RATE_LIMIT_HEADERS),
          ...keyedErrors(404),
        },
      },
    },
    async (request, reply) => {
      const view = await webhooks.get(request.params.id);
      if (view === undefined || !(await webhooks.remove(request.params.id)))
        throw notFound(request.params.id);
      reply.header('cache-control', 'no-store');
      return view;
    },
  );

  for (const [action, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    api.post(
      `/api/v1/webhooks/:id/${action}`,
      {
        ...common,
        config: { audit: { action: `webhooks.${action}`, target: idParam } },
        schema: {
          operationId: `${action}Webhook`,
          summary: enabled ? 'Enable a webhook' : 'Disable a webhook',
          description: enabled
            ? 'Deliveries resume where they stopped: pending ones are retried and events committed meanwhile (within the event history) are delivered.'
            : 'Nothing is sent until it is enabled again; its place in the event log is kept.',
          tags,
          params: IdParams,
          querystring: NoQuery,
          response: {
            200: jsonAnswer('The endpoint.', WebhookViewRef, RATE_LIMIT_HEADERS),
            ...keyedErrors(404),
          },
        },
      },
      async (request, reply) => {
        const view = await webhooks.setEnabled(request.params.id, enabled);
        if (view === undefined) throw notFound(request.params.id);
        reply.header('cache-control', 'no-store');
        return view;
      },
    );
  }

  api.get(
    '/api/v1/webhooks/:id/deliveries',
    {
      ...common,
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: "A webhook's delivery log",
        description:
          "The newest 100 deliveries, newest event first: state, attempts and the last attempt's status, latency and error.",
        tags,
        params: IdParams,
        querystring: NoQuery,
        response: {
          200: jsonAnswer('The deliveries.', Type.Array(DeliverySchema), RATE_LIMIT_HEADERS),
          ...keyedErrors(404),
        },
      },
    },
    async (request, reply) => {
      const log = await webhooks.deliveries(request.params.id);
      if (log === undefined) throw notFound(request.params.id);
      reply.header('cache-control', 'no-store');
      return log;
    },
  );

  api.post(
    '/api/v1/webhooks/:id/deliveries/:eventId/redeliver',
    {
      ...common,
      config: {
        audit: {
          action: 'webhooks.redeliver',
          target: (r) => {
            const { id, eventId } = r.params as { id: string; eventId: string };
            return `${id}/${eventId}`;
          },
        },
      },
      schema: {
        operationId: 'redeliverWebhook',
        summary: 'Redeliver an event',
        description:
          'Sends a delivery of the log again, from its first attempt, whatever its state; the receiver gets the same `webhook-id`.',
        tags,
        params: DeliveryParams,
        querystring: NoQuery,
        response: {
          202: jsonAnswer('The delivery, queued.', DeliverySchema, RATE_LIMIT_HEADERS),
          ...keyedErrors(404),
        },
      },
    },
    async (request, reply) => {
      const { id, eventId } = request.params;
      const delivery = await webhooks.redeliver(id, eventId);
      if (delivery === undefined) {
        throw new ApiError('not_found', `The webhook ${id} has no delivery of event ${eventId}.`);
      }
      return reply.code(202).header('cache-control', 'no-store').send(delivery);
    },
  );
}
