/**
 * The answer and option types of the Pricepoint API, version 1 (DESIGN section 2). They mirror the
 * server's response schemas; the server's OpenAPI document (`/api/v1/openapi.json`) is the reference.
 */

/**
 * ISO 8601 duration of one interval.
 *
 * @example
 * const resolution: Resolution = 'PT1H';
 */
export type Resolution = 'PT15M' | 'PT30M' | 'PT1H' | 'P1D';

/**
 * A day relative to today, in the zone the day is read in (`tz`, or each series' own zone).
 *
 * @example
 * const day: RelativeDay = 'tomorrow';
 */
export type RelativeDay = 'today' | 'tomorrow' | 'yesterday';

/**
 * A calendar date `YYYY-MM-DD`. The type only checks the dashes; the server checks the rest and
 * answers `invalid_parameter` for a date that does not exist.
 *
 * @example
 * const date: CalendarDate = '2026-11-22';
 * const fromString = new Date().toISOString().slice(0, 10) as CalendarDate;
 */
export type CalendarDate = `${number}-${number}-${number}`;

/**
 * What the day endpoints take as a day: a calendar date or a relative day.
 *
 * @example
 * await client.day('2026-11-22');
 * await client.day('yesterday');
 */
export type DayInput = CalendarDate | RelativeDay;

/**
 * One priced interval `[start, end)`. Timestamps are RFC 3339 with the offset in force at that
 * instant; `price` is exactly as ingested.
 *
 * @example
 * const point: PricePoint = { start: '2026-11-22T00:00:00+01:00', end: '2026-11-22T00:15:00+01:00', price: 41.27 };
 */
export interface PricePoint {
  start: string;
  end: string;
  price: number;
}

/**
 * The metadata every read answer writes for a series.
 *
 * @example
 * const meta: SeriesMeta = { symbol: 'NO1', name: 'Oslo day-ahead', kind: 'electricity', currency: 'EUR',
 *   unit: 'MWh', timezone: 'Europe/Oslo', resolution: 'PT15M' };
 */
export interface SeriesMeta {
  symbol: string;
  name: string;
  /** `electricity`, `fx`, `crypto`, `commodity`, `equity`, ... */
  kind: string;
  currency: string;
  unit: string;
  /** IANA zone of the series' market day. */
  timezone: string;
  /** The resolution as served (after a `resolution` option, the coarser one). */
  resolution: Resolution;
}

/**
 * One day of one series. `prices` is empty when nothing is published for the day yet (that is not
 * an error); for `latest` it holds at most one point.
 *
 * @example
 * const { series } = await client.today({ symbols: ['NO1'] });
 * const day: SeriesDay | undefined = series[0];
 * console.log(day?.date, day?.prices.length);
 */
export interface SeriesDay extends SeriesMeta {
  /** The local date of this day, `YYYY-MM-DD`, in the zone it was read in. */
  date: string;
  prices: PricePoint[];
}

/**
 * The JSON answer of the day endpoints (`today`, `day`, `range`, `latest`). For a range, `series`
 * holds one entry per series per day, ordered by series, then date.
 *
 * @example
 * const answer: DayAnswer = await client.today();
 * for (const day of answer.series) console.log(day.symbol, day.prices[0]?.price);
 */
export interface DayAnswer {
  /** When the server built the answer, RFC 3339 UTC. */
  generatedAt: string;
  series: SeriesDay[];
}

/**
 * A series in the catalogue, with the first and last local dates it has prices for (`null`: none).
 *
 * @example
 * const info: SeriesInfo = await client.seriesInfo('NO1');
 * console.log(info.coverage?.first, info.coverage?.last);
 */
export interface SeriesInfo extends SeriesMeta {
  coverage: { first: string; last: string } | null;
}

/**
 * The answer of `GET /api/v1/series`.
 *
 * @example
 * const { series }: Catalogue = await client.series();
 */
export interface Catalogue {
  series: SeriesInfo[];
}

/**
 * One limit of the calling key's tier, with what is left in the current window.
 *
 * @example
 * const usage = await client.usage();
 * const minute: UsageLimit | undefined = usage.limits.find((l) => l.name === 'minute');
 */
export interface UsageLimit {
  name: string;
  limit: number;
  windowSeconds: number;
  /** Requests left in the current window. */
  remaining: number;
  /** When the current window ends, RFC 3339. */
  resetAt: string;
}

/**
 * The answer of `GET /api/v1/usage`: the calling key's tier, limits and what is left.
 *
 * @example
 * const { tier, limits }: Usage = await client.usage();
 */
export interface Usage {
  keyId: string;
  tier: string;
  limits: UsageLimit[];
  /** Series kinds the tier may read; `null`: every kind. */
  kinds: string[] | null;
  /** How many days back the tier may read; `null`: unlimited. */
  historyDays: number | null;
}

/**
 * Options every call takes.
 *
 * @example
 * const controller = new AbortController();
 * await client.usage({ signal: controller.signal });
 */
export interface CallOptions {
  /** Aborts the request and any wait between retries. */
  signal?: AbortSignal;
}

/**
 * The query options of the read endpoints. Without `format` (or with `'json'`) a call answers
 * parsed JSON; with `format: 'csv'` it answers the CSV text.
 *
 * @example
 * await client.today({ symbols: ['NO1', 'DE-LU'], tz: 'Europe/Oslo', resolution: 'PT1H' });
 */
export interface ReadOptions extends CallOptions {
  /** Series symbols (case-insensitive), at most 100; sent comma-joined. Default: every series the key may read. */
  symbols?: readonly string[];
  /** IANA zone whose calendar day is meant for every series. Default: each series' own zone. */
  tz?: string;
  /** Coarser output: the mean of the finer intervals. */
  resolution?: Resolution;
  /** `'json'` (default) or `'csv'`. */
  format?: 'json' | 'csv';
}

/**
 * Read options asking for JSON.
 *
 * @example
 * const options: JsonReadOptions = { symbols: ['NO1'] };
 */
export type JsonReadOptions = ReadOptions & { format?: 'json' };

/**
 * Read options asking for CSV (header row `symbol,date,start,end,price,currency,unit` for days).
 *
 * @example
 * const csv = await client.today({ format: 'csv', symbols: ['NO1'] });
 */
export type CsvReadOptions = ReadOptions & { format: 'csv' };

/**
 * The options of `seriesInfo`: as `ReadOptions`, without `symbols` (the symbol is in the path).
 *
 * @example
 * await client.seriesInfo('NO1', { tz: 'UTC' });
 */
export type OneSeriesOptions = Omit<ReadOptions, 'symbols'>;

/**
 * The rate-limit headers of the last answer (`X-RateLimit-*`): the limit closest to running out.
 *
 * @example
 * await client.today();
 * console.log(client.lastRateLimit?.remaining);
 */
export interface RateLimitInfo {
  limit: number;
  remaining: number;
  /** Unix epoch seconds when the window resets. */
  reset: number;
  /** The raw `RateLimit-Policy` header, when sent. */
  policy?: string;
}
