/**
 * What a delivery is (docs/webhooks.md, "What a receiver gets"): which events an endpoint wants, the
 * body it gets, and the signed POST that carries it (Standard Webhooks headers).
 */
import { Webhook } from 'standardwebhooks';
import type { DeliveryRow, EndpointRow, PriceEvent } from '../stores/event-types.js';
import { type SendOptions, type SendOutcome, send } from './send.js';

/** The body a receiver gets: the event as DESIGN's contract and docs/events.md show it. */
export function payloadOf(event: Pick<PriceEvent, 'id' | 'type' | 'time' | 'data'>): string {
  return JSON.stringify({ id: event.id, type: event.type, time: event.time, data: event.data });
}

/** Signs and sends one body; the headers are the Standard Webhooks ones. */
export async function sendSigned(
  url: string,
  secret: string,
  id: string,
  body: string,
  at: Date,
  options: SendOptions,
): Promise<SendOutcome> {
  const signature = new Webhook(secret).sign(id, at, body);
  const headers = {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
    'user-agent': 'pricepoint-webhooks',
  };
  return send(url, headers, body, options);
}

export function wants(endpoint: EndpointRow, event: PriceEvent): boolean {
  const types = JSON.parse(endpoint.events) as string[];
  const symbols = endpoint.symbols === null ? null : (JSON.parse(endpoint.symbols) as string[]);
  return types.includes(event.type) && (symbols === null || symbols.includes(event.data.symbol));
}

/** A delivery of `event` to the endpoint, due at `now`. */
export function newDelivery(endpointId: string, event: PriceEvent, now: number): DeliveryRow {
  return {
    endpoint_id: endpointId,
    event_id: event.id,
    event_seq: event.seq,
    payload: payloadOf(event),
    state: 'pending',
    attempts: 0,
    next_attempt_at: now,
    last_attempt_at: null,
    last_status: null,
    last_latency_ms: null,
    last_error: null,
  };
}
