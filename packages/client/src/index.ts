/**
 * `@pricepoint/client`: a typed client for the Pricepoint price data API, version 1.
 *
 * @example
 * import { PricepointClient, PricepointError } from '@pricepoint/client';
 * const client = new PricepointClient({ baseUrl: 'https://localhost:8443', apiKey: 'pp_demo_...' });
 * const { series } = await client.today({ symbols: ['NO1'] });
 */
export {
  type FetchInit,
  type FetchLike,
  type FetchResponseLike,
  PricepointClient,
  type PricepointClientOptions,
  type RetryEvent,
} from './client.js';
export { PROBLEM_CODES, PricepointError, type Problem, type ProblemCode } from './errors.js';
export type {
  CalendarDate,
  CallOptions,
  Catalogue,
  CsvReadOptions,
  DayAnswer,
  DayInput,
  JsonReadOptions,
  OneSeriesOptions,
  PricePoint,
  RateLimitInfo,
  ReadOptions,
  RelativeDay,
  Resolution,
  SeriesDay,
  SeriesInfo,
  SeriesMeta,
  Usage,
  UsageLimit,
} from './types.js';
