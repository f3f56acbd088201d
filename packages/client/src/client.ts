/**
 * `PricepointClient`: one typed method per endpoint of the API (docs/using-the-api.md "The API"): the reads, the price
 * upload and the admin calls for keys and series. The key goes in the `x-api-key` header only,
 * retries honour `Retry-After`, and errors are typed (transport.ts). No dependencies: the global
 * `fetch`, or one the caller passes in.
 */
import { type EventsOptions, streamEvents } from './events.js';
import { CSV_ACCEPT, JSON_ACCEPT, type PricepointClientOptions, parseJson, Transport } from './transport.js';
import type {
  CallOptions,
  Catalogue,
  CheapestAnswer,
  CheapestOptions,
  CreatedKey,
  CsvPriceOptions,
  CsvReadOptions,
  DayAnswer,
  DayInput,
  JsonPriceOptions,
  JsonReadOptions,
  KeyInfo,
  LatestReadOptions,
  NewKey,
  OneSeriesOptions,
  PriceInput,
  PricepointEvent,
  PriceReadOptions,
  RateLimitInfo,
  ReadOptions,
  RotatedKey,
  RotateKeyOptions,
  SeriesFields,
  SeriesInfo,
  TariffList,
  UploadResult,
  Usage,
} from './types.js';
import { pricesBody } from './upload-body.js';

/**
 * A client for the Pricepoint API, version 1. A read answers parsed JSON, or the CSV text when
 * called with `format: 'csv'`; every call throws a `PricepointError` for an error answer. Uploads
 * need a key with the `write` scope, the key and series calls one with `admin`.
 *
 * @example
 * import { PricepointClient } from '@pricepoint/client';
 * const client = new PricepointClient({ baseUrl: 'https://localhost:8443', apiKey: 'pp_demo_...' });
 * const { series } = await client.today({ symbols: ['NO1'], tz: 'Europe/Oslo' });
 * console.log(series[0]?.prices[0]?.price);
 */
export class PricepointClient {
  readonly #transport: Transport;

  constructor(options: PricepointClientOptions) {
    this.#transport = new Transport(options);
  }

  /** The rate-limit headers of the last answer that had them, error answers included. */
  get lastRateLimit(): RateLimitInfo | undefined {
    return this.#transport.lastRateLimit;
  }

  /**
   * `GET /api/v1/prices/today`: today's prices of every series the key may read, or of `symbols`.
   *
   * @example
   * const { series } = await client.today({ symbols: ['NO1', 'DE-LU'], tz: 'Europe/Oslo' });
   * const csv = await client.today({ symbols: ['NO1'], format: 'csv' });
   * // What a household pays, ranked: each interval's total, spot, fees, vat, rank and level.
   * const paid = await client.today({ symbols: ['NO1'], tariff: 'no1-household', include: ['rank'] });
   */
  today(options: CsvPriceOptions): Promise<string>;
  today(options?: JsonPriceOptions): Promise<DayAnswer>;
  today(options: PriceReadOptions): Promise<DayAnswer | string>;
  today(options: PriceReadOptions = {}): Promise<DayAnswer | string> {
    return this.#read<DayAnswer>('/api/v1/prices/today', options);
  }

  /**
   * `GET /api/v1/prices/{date}`: one day, `YYYY-MM-DD` or `today`, `tomorrow`, `yesterday`.
   *
   * @example
   * const tomorrow = await client.day('tomorrow', { symbols: ['NO1'] });
   * const csv = await client.day('2026-11-20', { format: 'csv' });
   * const inNok = await client.day('tomorrow', { symbols: ['NO1'], currency: 'NOK', unit: 'kWh' });
   */
  day(date: DayInput, options: CsvPriceOptions): Promise<string>;
  day(date: DayInput, options?: JsonPriceOptions): Promise<DayAnswer>;
  day(date: DayInput, options: PriceReadOptions): Promise<DayAnswer | string>;
  day(date: DayInput, options: PriceReadOptions = {}): Promise<DayAnswer | string> {
    return this.#read<DayAnswer>(`/api/v1/prices/${encodeURIComponent(date)}`, options);
  }

  /**
   * `GET /api/v1/prices?from&to`: a range of days, both inclusive, at most 366. `series` holds one
   * entry per series per day, ordered by series, then date.
   *
   * @example
   * const week = await client.range('2026-11-16', '2026-11-22', { symbols: ['NO1'], resolution: 'P1D' });
   */
  range(from: DayInput, to: DayInput, options: CsvPriceOptions): Promise<string>;
  range(from: DayInput, to: DayInput, options?: JsonPriceOptions): Promise<DayAnswer>;
  range(from: DayInput, to: DayInput, options: PriceReadOptions): Promise<DayAnswer | string>;
  range(from: DayInput, to: DayInput, options: PriceReadOptions = {}): Promise<DayAnswer | string> {
    return this.#read<DayAnswer>('/api/v1/prices', options, { from, to });
  }

  /**
   * `GET /api/v1/prices/latest`: per series, the interval that contains now (or the last one
   * before it); each entry's `prices` holds 0 or 1 points. Takes `currency`, `unit` and `tariff`;
   * not `include: ['rank']` (a rank is of a whole day: ask the day).
   *
   * @example
   * const { series } = await client.latest({ symbols: ['BTC-USD'] });
   * console.log(series[0]?.prices[0]?.price);
   */
  latest(options: LatestReadOptions & { format: 'csv' }): Promise<string>;
  latest(options?: LatestReadOptions & { format?: 'json' }): Promise<DayAnswer>;
  latest(options: LatestReadOptions): Promise<DayAnswer | string>;
  latest(options: LatestReadOptions = {}): Promise<DayAnswer | string> {
    return this.#read<DayAnswer>('/api/v1/prices/latest', options);
  }

  /**
   * `GET /api/v1/prices/cheapest`: per series, the cheapest window of `duration` in the range `from`
   * to `to`, in elapsed time (across the repeated autumn hour a `PT3H` window is three hours), or with
   * `contiguous: false` the `count` cheapest intervals (docs/api.md, "The cheapest hours"). With a
   * `tariff`, chosen on the totals. Only published prices count: `complete` and `missing` say what is
   * not published yet, and `cheapest` is `null` when nothing fits. Counted as one request.
   *
   * @example
   * const { series } = await client.cheapest({
   *   symbols: ['NO1'], duration: 'PT3H', tariff: 'no1-household',
   *   from: '2026-11-24T18:00:00+01:00', to: '2026-11-25T07:00:00+01:00',
   * });
   * console.log(series[0]?.cheapest?.start, series[0]?.cheapest?.mean);
   */
  cheapest(options: CheapestOptions & { format: 'csv' }): Promise<string>;
  cheapest(options: CheapestOptions & { format?: 'json' }): Promise<CheapestAnswer>;
  cheapest(options: CheapestOptions): Promise<CheapestAnswer | string>;
  cheapest(options: CheapestOptions): Promise<CheapestAnswer | string> {
    const end = (value: CheapestOptions['from']) => (value instanceof Date ? value.toISOString() : value);
    const query: Record<string, string> = { from: end(options.from), to: end(options.to) };
    if (options.duration !== undefined) query.duration = options.duration;
    if (options.contiguous !== undefined) query.contiguous = String(options.contiguous);
    if (options.count !== undefined) query.count = String(options.count);
    return this.#read<CheapestAnswer>('/api/v1/prices/cheapest', options, query);
  }

  /**
   * `GET /api/v1/tariffs`: the tariffs the server was configured with, which `tariff` names: VAT,
   * fixed amounts and time-of-use fees, each by valid-from date (docs/tariffs.md). Counted as one
   * request.
   *
   * @example
   * const { tariffs } = await client.tariffs();
   * console.log(tariffs.map((t) => `${t.name}: ${t.currency}/${t.unit}`));
   */
  tariffs(options: CallOptions = {}): Promise<TariffList> {
    return this.#transport.json<TariffList>('GET', '/api/v1/tariffs', undefined, options.signal);
  }

  /**
   * `GET /api/v1/series`: the catalogue of the series the key may read, with their coverage.
   *
   * @example
   * const { series } = await client.series();
   * const electricity = series.filter((s) => s.kind === 'electricity');
   */
  series(options: CsvReadOptions): Promise<string>;
  series(options?: JsonReadOptions): Promise<Catalogue>;
  series(options: ReadOptions): Promise<Catalogue | string>;
  series(options: ReadOptions = {}): Promise<Catalogue | string> {
    return this.#read<Catalogue>('/api/v1/series', options);
  }

  /**
   * `GET /api/v1/series/{symbol}`: one series' metadata and coverage (symbol in any letter case).
   *
   * @example
   * const info = await client.seriesInfo('no1');
   * console.log(info.timezone, info.coverage?.last);
   */
  seriesInfo(symbol: string, options: OneSeriesOptions & { format: 'csv' }): Promise<string>;
  seriesInfo(symbol: string, options?: OneSeriesOptions & { format?: 'json' }): Promise<SeriesInfo>;
  seriesInfo(symbol: string, options: OneSeriesOptions): Promise<SeriesInfo | string>;
  seriesInfo(symbol: string, options: OneSeriesOptions = {}): Promise<SeriesInfo | string> {
    return this.#read<SeriesInfo>(`/api/v1/series/${encodeURIComponent(symbol)}`, options);
  }

  /**
   * `GET /api/v1/usage`: the key's tier, its limits and what is left. Not counted against any limit.
   *
   * @example
   * const { tier, limits } = await client.usage();
   * console.log(tier, limits.map((l) => `${l.name}: ${l.remaining}/${l.limit}`));
   */
  async usage(options: CallOptions = {}): Promise<Usage> {
    return this.#transport.json<Usage>('GET', '/api/v1/usage', undefined, options.signal);
  }

  /**
   * `PUT /api/v1/series/{symbol}/prices`: inserts or replaces the points of one series, all or
   * nothing (needs the `write` scope). A bad point fails the whole upload with a 422
   * `invalid_prices` whose `problem.errors` names each bad point by its line: the body is a JSON
   * array with point `i` on line `i + 2`. At most 16 MiB; import larger loads with `pricepoint import`.
   *
   * @example
   * const { written } = await writer.uploadPrices('NO1', [
   *   { start: '2026-11-22T00:00:00+01:00', price: 41.27 },
   *   { start: '2026-11-22T00:15:00+01:00', price: '40.930' }, // kept as written
   * ]);
   */
  async uploadPrices(
    symbol: string,
    points: readonly PriceInput[],
    options: CallOptions = {},
  ): Promise<UploadResult> {
    const body = pricesBody(points);
    return this.#transport.json<UploadResult>(
      'PUT',
      `/api/v1/series/${encodeURIComponent(symbol)}/prices`,
      body,
      options.signal,
    );
  }

  /**
   * `PUT /api/v1/series/{symbol}`: creates a series (every field needed) or updates one (the
   * fields left out are kept); needs the `admin` scope. A 400 names every bad field.
   *
   * @example
   * await admin.upsertSeries('SE3', { name: 'Stockholm day-ahead', kind: 'electricity', currency: 'EUR',
   *   unit: 'MWh', timezone: 'Europe/Stockholm', resolution: 'PT15M' });
   * await admin.upsertSeries('SE3', { name: 'Stockholm (SE3) day-ahead' });
   */
  upsertSeries(symbol: string, fields: SeriesFields, options: CallOptions = {}): Promise<SeriesInfo> {
    const path = `/api/v1/series/${encodeURIComponent(symbol)}`;
    return this.#transport.json<SeriesInfo>('PUT', path, JSON.stringify(fields), options.signal);
  }

  /**
   * `POST /api/v1/keys`: issues a key (needs the `admin` scope). The answer's `key` is the key
   * itself, shown this once: store it now. Retried after a 429 only.
   *
   * @example
   * const { id, key } = await admin.createKey({ name: 'dashboard', tier: 'free', scopes: ['read'] });
   */
  createKey(spec: NewKey, options: CallOptions = {}): Promise<CreatedKey> {
    const { expiresAt, ...rest } = spec;
    const body = {
      ...rest,
      ...(expiresAt !== undefined && {
        expiresAt: expiresAt instanceof Date ? expiresAt.toISOString() : expiresAt,
      }),
    };
    return this.#transport.json<CreatedKey>(
      'POST',
      '/api/v1/keys',
      JSON.stringify(body),
      options.signal,
      false,
    );
  }

  /**
   * `GET /api/v1/keys`: every key, revoked and expired ones included (needs the `admin` scope).
   *
   * @example
   * const keys = await admin.listKeys();
   * console.log(keys.map((k) => `${k.name} …${k.last4} ${k.revokedAt ?? 'active'}`));
   */
  listKeys(options: CallOptions = {}): Promise<KeyInfo[]> {
    return this.#transport.json<KeyInfo[]>('GET', '/api/v1/keys', undefined, options.signal);
  }

  /**
   * `GET /api/v1/keys/{id}`: one key (needs the `admin` scope); 404 `not_found` for an unknown id.
   *
   * @example
   * const { lastUsedAt } = await admin.getKey(id);
   */
  getKey(id: string, options: CallOptions = {}): Promise<KeyInfo> {
    return this.#transport.json<KeyInfo>(
      'GET',
      `/api/v1/keys/${encodeURIComponent(id)}`,
      undefined,
      options.signal,
    );
  }

  /**
   * `DELETE /api/v1/keys/{id}`: revokes a key (needs the `admin` scope). It stops working at once
   * on the server that answered and within 5 seconds on every other.
   *
   * @example
   * const { revokedAt } = await admin.revokeKey(id);
   */
  revokeKey(id: string, options: CallOptions = {}): Promise<KeyInfo> {
    return this.#transport.json<KeyInfo>(
      'DELETE',
      `/api/v1/keys/${encodeURIComponent(id)}`,
      undefined,
      options.signal,
    );
  }

  /**
   * `POST /api/v1/keys/{id}/rotate`: issues a new key with the same name, tier and scopes; the old
   * one keeps working for `graceSeconds` (default a day). Needs the `admin` scope; retried after a
   * 429 only.
   *
   * @example
   * const { key, previous } = await admin.rotateKey(id, { graceSeconds: 3600 });
   * console.log(`new key …${key.slice(-4)}; the old one works until ${previous.expiresAt}`);
   */
  rotateKey(id: string, options: RotateKeyOptions = {}): Promise<RotatedKey> {
    const body = JSON.stringify(
      options.graceSeconds === undefined ? {} : { graceSeconds: options.graceSeconds },
    );
    const path = `/api/v1/keys/${encodeURIComponent(id)}/rotate`;
    return this.#transport.json<RotatedKey>('POST', path, body, options.signal, false);
  }

  /**
   * `GET /api/v1/events`: the price events (`day.published`, `day.revised`) the key may read, as
   * they are committed, as an async iterator (docs/events.md). It reconnects by itself with
   * `Last-Event-ID` after a dropped or silent connection, so no event is lost or repeated within
   * the server's 24 hours; it waits the server's `retry:` hint, with backoff and jitter while the
   * server cannot be reached. A 400, 401, 403 or 404 throws a `PricepointError`. Leaving the loop
   * or aborting `signal` ends it and closes the connection. Needs a fetch whose `response.body` is
   * a stream (Node's, undici's, browsers').
   *
   * @example
   * for await (const event of client.events({ symbols: ['NO1'] })) {
   *   console.log(event.type, event.data.symbol, event.data.date); // day.published NO1 2026-11-25
   * }
   */
  events(options: EventsOptions = {}): AsyncGenerator<PricepointEvent, void, undefined> {
    return streamEvents(this.#transport, options);
  }

  async #read<T>(
    path: string,
    options: ReadOptions & Omit<PriceReadOptions, 'include'> & { include?: readonly string[] },
    first: Record<string, string> = {},
  ): Promise<T | string> {
    const query = new URLSearchParams(first);
    if (options.symbols !== undefined) query.set('symbols', options.symbols.join(','));
    if (options.tz !== undefined) query.set('tz', options.tz);
    if (options.resolution !== undefined) query.set('resolution', options.resolution);
    if (options.currency !== undefined) query.set('currency', options.currency);
    if (options.unit !== undefined) query.set('unit', options.unit);
    if (options.tariff !== undefined) query.set('tariff', options.tariff);
    if (options.include !== undefined && options.include.length > 0) {
      query.set('include', options.include.join(','));
    }
    const csv = options.format === 'csv';
    if (csv) query.set('format', 'csv');
    const accept = csv ? CSV_ACCEPT : JSON_ACCEPT;
    const answer = await this.#transport.request(
      path,
      { method: 'GET', query, accept, body: undefined, idempotent: true },
      options.signal,
    );
    return csv ? answer.text : parseJson<T>(answer);
  }
}
