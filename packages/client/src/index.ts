/**
 * `@pricepoint/client`: a typed client for the Pricepoint price data API, version 1.
 *
 * @example
 * import { PricepointClient, PricepointError } from '@pricepoint/client';
 * const client = new PricepointClient({ baseUrl: 'https://localhost:8443', apiKey: 'pp_demo_...' });
 * const { series } = await client.today({ symbols: ['NO1'] });
 */
export { PricepointClient } from './client.js';
export { PROBLEM_CODES, PricepointError, type Problem, type ProblemCode } from './errors.js';
export { type EventsOptions, type ReconnectEvent, type SseMessage, SseParser } from './events.js';
export type {
  FetchInit,
  FetchLike,
  FetchResponseLike,
  PricepointClientOptions,
  RetryEvent,
} from './transport.js';
export type {
  CalendarDate,
  CallOptions,
  Catalogue,
  CheapestAnswer,
  CheapestChoice,
  CheapestOptions,
  CheapestPoint,
  CheapestSeries,
  CreatedKey,
  CsvPriceOptions,
  CsvReadOptions,
  DayAnswer,
  DayInput,
  EnergyUnit,
  FxRate,
  Include,
  JsonPriceOptions,
  JsonReadOptions,
  KeyInfo,
  LatestReadOptions,
  Level,
  NewKey,
  OneSeriesOptions,
  PriceInput,
  PricePoint,
  PricepointEvent,
  PricepointEventData,
  PricepointEventType,
  PriceReadOptions,
  RangeEndInput,
  RateLimitInfo,
  ReadOptions,
  RelativeDay,
  Resolution,
  RotatedKey,
  RotateKeyOptions,
  Scope,
  SeriesDay,
  SeriesFields,
  SeriesInfo,
  SeriesMeta,
  Span,
  Tariff,
  TariffList,
  TariffRule,
  UploadResult,
  Usage,
  UsageLimit,
  WebhookEvent,
  Weekday,
} from './types.js';
export {
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookErrorReason,
  type WebhookHeaders,
  WebhookVerificationError,
} from './webhooks.js';
