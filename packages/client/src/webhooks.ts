/**
 * `verifyWebhook()`: checks a webhook delivery the way the Standard Webhooks specification says
 * (docs/webhooks.md): the `v1` HMAC-SHA256 over `webhook-id.webhook-timestamp.body` with the
 * secret's bytes (`whsec_` + base64), any of several space-separated signatures, and a timestamp
 * within 5 minutes of now. Web Crypto only (`crypto.subtle`, in Node 20 and browsers), so the
 * package keeps no dependencies; its HMAC `verify` compares in constant time.
 */
import type { WebhookEvent } from './types.js';

/**
 * Why a delivery was refused.
 *
 * @example
 * const reason: WebhookErrorReason = 'invalid_signature';
 */
export type WebhookErrorReason =
  | 'missing_header'
  | 'invalid_timestamp'
  | 'timestamp_out_of_tolerance'
  | 'invalid_signature'
  | 'invalid_payload';

/**
 * A webhook delivery that did not verify: answer it with a 4xx and do not act on it.
 *
 * @example
 * try {
 *   await verifyWebhook(body, headers, secret);
 * } catch (error) {
 *   if (error instanceof WebhookVerificationError) console.warn('refused:', error.reason);
 *   else throw error;
 * }
 */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  readonly reason: WebhookErrorReason;

  constructor(reason: WebhookErrorReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * The headers of a delivery: a fetch `Headers` (`request.headers` of a `Request`), or a plain object
 * such as Node's `IncomingMessage.headers` (names in any letter case).
 *
 * @example
 * const headers: WebhookHeaders = { 'webhook-id': 'evt_1', 'webhook-timestamp': '1795000000', 'webhook-signature': 'v1,...' };
 */
export type WebhookHeaders =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * How `verifyWebhook` checks the timestamp.
 *
 * @example
 * const options: VerifyWebhookOptions = { toleranceSeconds: 120 };
 */
export interface VerifyWebhookOptions {
  /** How far the `webhook-timestamp` may be from now, either way, in seconds; default 300. */
  toleranceSeconds?: number;
  /** The current time in milliseconds; default `Date.now`. */
  now?: () => number;
}

const DEFAULT_TOLERANCE_S = 5 * 60;
const encoder = new TextEncoder();

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof headers.get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  for (const [key, value] of Object.entries(record)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    // Node gives a header sent twice as an array; several signatures may come that way.
    return typeof value === 'string' ? value : value.join(' ');
  }
  return undefined;
}

function base64Bytes(text: string) {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** The secret's key bytes: `whsec_` + base64 (the prefix may be left out, as the reference libraries allow). */
function secretBytes(secret: string) {
  const bytes = base64Bytes(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  if (bytes === undefined || bytes.length === 0) {
    throw new TypeError(
      'verifyWebhook: the secret must be whsec_ followed by base64, as the server showed it',
    );
  }
  return bytes;
}

/**
 * Verifies a webhook delivery and answers its event; throws a `WebhookVerificationError` when any
 * check fails. `payload` must be the body exactly as received (the raw text or bytes: JSON parsed
 * and written again would not verify). Answer `2xx` only after this resolves, and drop an event id
 * you have handled already: deliveries are at least once.
 *
 * @example
 * import { verifyWebhook } from '@pricepoint/client';
 * const event = await verifyWebhook(rawBody, request.headers, process.env.PRICEPOINT_WEBHOOK_SECRET!);
 * if (event.type === 'day.published') console.log(event.data.symbol, event.data.date);
 */
export async function verifyWebhook(
  payload: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent> {
  const key = secretBytes(secret);
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (id === undefined || timestamp === undefined || signatures === undefined) {
    throw new WebhookVerificationError(
      'missing_header',
      'The delivery lacks webhook-id, webhook-timestamp or webhook-signature.',
    );
  }
  if (!/^\d{1,15}$/.test(timestamp.trim())) {
    throw new WebhookVerificationError('invalid_timestamp', 'webhook-timestamp is no Unix time in seconds.');
  }
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_S;
  const now = Math.floor((options.now ?? Date.now)() / 1000);
  if (Math.abs(now - Number(timestamp.trim())) > tolerance) {
    throw new WebhookVerificationError(
      'timestamp_out_of_tolerance',
      `webhook-timestamp is more than ${tolerance} s from now: a replayed or delayed delivery.`,
    );
  }

  const body = typeof payload === 'string' ? encoder.encode(payload) : payload;
  const prefix = encoder.encode(`${id}.${timestamp.trim()}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);
  const hmac = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'verify',
  ]);
  let verified = false;
  // `v1,<base64>` entries separated by spaces; other versions are for other schemes.
  for (const entry of signatures.split(' ')) {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || value === undefined) continue;
    const signature = base64Bytes(value);
    if (signature === undefined) continue;
    if (await crypto.subtle.verify('HMAC', hmac, signature, signed)) verified = true;
  }
  if (!verified) {
    throw new WebhookVerificationError(
      'invalid_signature',
      'No v1 signature matches: a wrong secret or a changed body.',
    );
  }

  let event: unknown;
  try {
    event = JSON.parse(typeof payload === 'string' ? payload : new TextDecoder().decode(payload));
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'The signed body is no JSON.');
  }
  const fields = event as Partial<WebhookEvent> | null;
  if (
    typeof fields !== 'object' ||
    fields === null ||
    typeof fields.id !== 'string' ||
    typeof fields.type !== 'string' ||
    typeof fields.time !== 'string' ||
    typeof fields.data !== 'object'
  ) {
    throw new WebhookVerificationError('invalid_payload', 'The signed body is no Pricepoint event.');
  }
  return event as WebhookEvent;
}
