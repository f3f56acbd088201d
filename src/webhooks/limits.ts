/**
 * How much the delivery worker does at once, for whom, and how long it retries (docs/webhooks.md,
 * "Delivery guarantees" and "Endpoints that do not answer").
 */

/** Endpoints a server keeps; registering one more is refused. */
export const MAX_ENDPOINTS = 100;
/**
 * Sends under way at once to one endpoint, per instance: its share. The shares of every endpoint
 * fit in `MAX_IN_FLIGHT`, so receivers that hold their requests never take another endpoint's share.
 */
export const SENDS_PER_ENDPOINT = 4;
/** Sends under way at once over every endpoint (a bound should more endpoints exist than allowed). */
export const MAX_IN_FLIGHT = MAX_ENDPOINTS * SENDS_PER_ENDPOINT;
/** Due deliveries fetched for an endpoint at a time; more are fetched as they are sent. */
export const FETCH_PER_ENDPOINT = 16;
/** Sends in a row without an answer within the timeout after which an endpoint is held as a whole. */
export const HOLD_AFTER_TIMEOUTS = 3;

/**
 * Seconds before each retry: growing about fourfold, capped at 6 hours. With the first attempt, 11
 * attempts over about 20 hours (16 to 24 with the jitter).
 */
export const RETRY_DELAYS_S = [5, 30, 120, 600, 1800, 3600, 7200, 14_400, 21_600, 21_600] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_S.length + 1;

/** The retry delay after `attempts` failed attempts, ±20% so that many endpoints do not retry in step. */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const base = RETRY_DELAYS_S[Math.min(attempts, RETRY_DELAYS_S.length) - 1] ?? RETRY_DELAYS_S[0];
  return Math.round(base * 1000 * (0.8 + 0.4 * random()));
}
