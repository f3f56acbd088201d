/**
 * Managing webhook endpoints, for the admin API and the CLI alike (docs/webhooks.md). A new
 * endpoint's secret is returned once, by `create`; no view carries it.
 */
import { randomBytes } from 'node:crypto';
import { ApiError } from '../domain/errors/api-error.js';
import type {
  DeliveryRow,
  DeliveryState,
  EndpointRow,
  PriceEventType,
  WebhookStore,
} from '../stores/event-types.js';
import { MAX_ENDPOINTS } from './limits.js';
import { urlProblem } from './safe-target.js';
import { newSecret, openSecret, sealSecret } from './secrets.js';
import type { SendOptions, SendOutcome } from './send.js';
import { payloadOf, sendSigned } from './signed-delivery.js';

export const EVENT_TYPES: readonly PriceEventType[] = ['day.published', 'day.revised'];
export { MAX_ENDPOINTS };

export interface EndpointView {
  readonly id: string;
  readonly url: string;
  readonly events: PriceEventType[];
  /** Null: every symbol. */
  readonly symbols: string[] | null;
  readonly enabled: boolean;
  readonly disabledReason: string | null;
  readonly createdAt: string;
}

export interface DeliveryView {
  readonly eventId: string;
  readonly state: DeliveryState;
  readonly attempts: number;
  readonly lastAttemptAt: string | null;
  readonly nextAttemptAt: string | null;
  readonly status: number | null;
  readonly latencyMs: number | null;
  readonly error: string | null;
}

const invalid = (parameter: string, detail: string) =>
  new ApiError('invalid_parameter', detail, { extra: { parameter } });

export interface WebhookServiceDeps {
  readonly store: WebhookStore;
  readonly keySecret: string | undefined;
  readonly send: SendOptions;
  readonly clock?: () => number;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function endpointView(row: EndpointRow): EndpointView {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as PriceEventType[],
    symbols: row.symbols === null ? null : (JSON.parse(row.symbols) as string[]),
    enabled: row.enabled === 1,
    disabledReason: row.disabled_reason,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

export function deliveryView(row: DeliveryRow): DeliveryView {
  return {
    eventId: row.event_id,
    state: row.state,
    attempts: row.attempts,
    lastAttemptAt: iso(row.last_attempt_at),
    nextAttemptAt: row.state === 'pending' ? iso(row.next_attempt_at) : null,
    status: row.last_status,
    latencyMs: row.last_latency_ms,
    error: row.last_error,
  };
}

/** Webhook endpoints for the admin API and the CLI alike (docs/webhooks.md). */
export interface WebhookService {
  /**
   * Registers an endpoint; it receives events committed after `latestSeq` (the log's newest). The
   * secret is in this answer only. A bad url or event type, or a full list, throws `invalid_parameter`.
   */
  create(
    spec: { url: string; events: readonly string[]; symbols?: readonly string[] | null | undefined },
    latestSeq: number,
  ): Promise<{ endpoint: EndpointView; secret: string }>;
  /** Every endpoint, oldest first, never a secret. */
  list(): Promise<EndpointView[]>;
  /** One endpoint; undefined when there is none. */
  get(id: string): Promise<EndpointView | undefined>;
  /** False when there was no such endpoint; its delivery log goes with it. */
  remove(id: string): Promise<boolean>;
  /** Enabling resumes from where the endpoint stopped: pending deliveries are retried now. */
  setEnabled(id: string, enabled: boolean): Promise<EndpointView | undefined>;
  /** The endpoint's deliveries, newest event first; undefined when there is no such endpoint. */
  deliveries(id: string, limit?: number): Promise<DeliveryView[] | undefined>;
  /** The delivery, queued again from its first attempt; undefined when there is none. */
  redeliver(id: string, eventId: string): Promise<DeliveryView | undefined>;
  /** Sends a signed `webhook.test` event now, outside the log and the retries, and says how it went. */
  test(id: string): Promise<SendOutcome | undefined>;
}

export function createWebhookService(deps: WebhookServiceDeps): WebhookService {
  const { store } = deps;
  const clock = deps.clock ?? Date.now;
  return {
    async create(
      spec: { url: string; events: readonly string[]; symbols?: readonly string[] | null | undefined },
      latestSeq: number,
    ): Promise<{ endpoint: EndpointView; secret: string }> {
      const problem = urlProblem(spec.url, deps.send);
      if (problem) throw invalid('url', `The field "url" ${problem}.`);
      const unknown = spec.events.find((type) => !(EVENT_TYPES as readonly string[]).includes(type));
      if (unknown !== undefined || spec.events.length === 0) {
        throw invalid('events', `The field "events" must list one or more of ${EVENT_TYPES.join(', ')}.`);
      }
      if ((await store.endpoints()).length >= MAX_ENDPOINTS) {
        throw invalid('url', `There are already ${MAX_ENDPOINTS} webhook endpoints: remove one first.`);
      }
      const secret = newSecret();
      const row: EndpointRow = {
        id: `wh_${randomBytes(9).toString('base64url')}`,
        url: spec.url,
        events: JSON.stringify([...new Set(spec.events)]),
        symbols: spec.symbols == null ? null : JSON.stringify([...new Set(spec.symbols)]),
        secret: sealSecret(secret, deps.keySecret),
        enabled: 1,
        disabled_reason: null,
        cursor: latestSeq,
        created_at: clock(),
      };
      await store.insertEndpoint(row);
      return { endpoint: endpointView(row), secret };
    },
    async list(): Promise<EndpointView[]> {
      return (await store.endpoints()).map(endpointView);
    },
    async get(id: string): Promise<EndpointView | undefined> {
      const row = await store.endpoint(id);
      return row && endpointView(row);
    },
    remove: (id: string) => store.deleteEndpoint(id),
    async setEnabled(id: string, enabled: boolean): Promise<EndpointView | undefined> {
      if (!(await store.setEnabled(id, enabled, enabled ? null : 'disabled by an admin'))) return undefined;
      return this.get(id);
    },
    async deliveries(id: string, limit = 100): Promise<DeliveryView[] | undefined> {
      if ((await store.endpoint(id)) === undefined) return undefined;
      return (await store.deliveries(id, limit)).map(deliveryView);
    },
    async redeliver(id: string, eventId: string): Promise<DeliveryView | undefined> {
      if (!(await store.redeliver(id, eventId, clock()))) return undefined;
      const row = await store.delivery(id, eventId);
      return row && deliveryView(row);
    },
    async test(id: string): Promise<SendOutcome | undefined> {
      const row = await store.endpoint(id);
      if (row === undefined) return undefined;
      const now = new Date();
      const eventId = `test_${randomBytes(9).toString('base64url')}`;
      const body = payloadOf({
        id: eventId,
        type: 'webhook.test' as PriceEventType,
        time: now.toISOString(),
        data: {
          symbol: 'TEST',
          date: now.toISOString().slice(0, 10),
          timezone: 'UTC',
          intervals: 0,
          etag: '""',
        },
      });
      return sendSigned(row.url, openSecret(row.secret, deps.keySecret), eventId, body, now, deps.send);
    },
  };
}

/** Where and how deliveries may go, as the settings say (docs/settings.md, docs/webhooks.md). */
export function sendOptionsOf(config: {
  readonly webhookAllowPrivate: boolean;
  readonly webhookAllowHttp: boolean;
  readonly webhookTimeoutMs: number;
}): SendOptions {
  return {
    allowPrivate: config.webhookAllowPrivate,
    allowHttp: config.webhookAllowHttp,
    timeoutMs: config.webhookTimeoutMs,
  };
}
