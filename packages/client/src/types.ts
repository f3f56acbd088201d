/**
 * The answer and option types of the Pricepoint API, version 1 (docs/using-the-api.md "The API"). They mirror the
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
  /** With `currency` or `unit` (or `tariff`): converted exactly, as docs/data-model.md "Converted prices" says. */
  price: number;
  /**
   * With `currency`: this interval's FX rate, sent only when the intervals of a day used different
   * rates (else the day's `fx` names the one rate).
   */
  fx?: FxRate;
  /** With `tariff`: `spot + fees + vat`, exactly, in the tariff's currency per its unit. Absent where the tariff has no version in force yet. */
  total?: number;
  /** With `tariff`: the price converted into the tariff's currency and unit. */
  spot?: number;
  /** With `tariff`: the fixed amounts plus the time-of-use fee at the interval's local start. */
  fees?: number;
  /** With `tariff`: VAT on spot plus fees, rounded half away from zero to 6 decimals per MWh (9 per kWh). */
  vat?: number;
  /** With `include: ['rank']`: 1 = cheapest of its local day (on `total` with a tariff); ties share a rank (1, 2, 2, 4). */
  rank?: number;
  /** With `include: ['rank']`: against the mean of the 7 local days before; `null` when those hold no price. */
  level?: Level | null;
}

/**
 * The FX rate a converted price was computed with: the FX series configured for the pair, the local
 * date of the rate's interval and the rate as stored.
 *
 * @example
 * const fx: FxRate = { symbol: 'EURNOK', date: '2026-11-23', rate: 11.5847 };
 */
export interface FxRate {
  symbol: string;
  date: string;
  rate: number;
}

/**
 * How an interval compares with the 7 local days before it (docs/tariffs.md, "Rank and level").
 *
 * @example
 * const level: Level = 'very_cheap';
 */
export type Level = 'very_cheap' | 'cheap' | 'normal' | 'expensive' | 'very_expensive';

/**
 * An energy unit prices can be converted to (`unit`), and that a tariff is per.
 *
 * @example
 * const unit: EnergyUnit = 'kWh';
 */
export type EnergyUnit = 'Wh' | 'kWh' | 'MWh';

/**
 * What `include` may ask for: `provenance` (CSV rows also carry `complete` and `source`; JSON answers
 * always do) and `rank` (each interval's `rank` and `level`; not on `latest`).
 *
 * @example
 * const include: Include[] = ['provenance', 'rank'];
 */
export type Include = 'provenance' | 'rank';

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
  /**
   * Every interval of the day is stored (read in another zone: every overlapping day of the
   * series' own zone is complete). False for a day stored before the server recorded it.
   */
  complete: boolean;
  /** Who wrote the day: a configured source's name (`entsoe`), `import`, or null when unknown. */
  source: string | null;
  /** The licence of the upstream that source fetched from (`CC-BY-4.0`); null for imported data. */
  license: string | null;
  /** The credit that upstream asks for beside its data; null for imported data. */
  attribution: string | null;
  /** With `tariff`: its name; the prices are in its currency and unit. */
  tariff?: string;
  /**
   * With `currency` (or a tariff in another currency), on an entry converted into it: the rate of the
   * first interval (each interval names its own when they differ); `null` when no rate was published
   * by any interval, whose prices are then left out.
   */
  fx?: FxRate | null;
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
  /**
   * The licence of the upstream the source of the series' last day fetched from; null for imported
   * data. In the catalogue's answers; absent from `upsertSeries`'s.
   */
  license?: string | null;
  /** The credit that upstream asks for beside its data; null for imported data. As `license`. */
  attribution?: string | null;
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
  /**
   * Coarser output: each interval the exact mean of the series' own intervals inside it. Refused
   * (400 `invalid_parameter`, parameter `resolution`) where, in the zone read in, an interval would
   * begin inside one of a series' intervals: Asia/Kolkata half hours read with `tz: 'Asia/Kathmandu'`
   * at `PT1H`.
   */
  resolution?: Resolution;
  /** `'json'` (default) or `'csv'`. */
  format?: 'json' | 'csv';
}

/**
 * The query options of the price endpoints (`today`, `day`, `range`): the read options, plus
 * conversion, a tariff and extra fields (docs/tariffs.md).
 *
 * @example
 * await client.today({ symbols: ['NO1'], tariff: 'no1-household', include: ['rank'] });
 * await client.day('tomorrow', { symbols: ['NO1'], currency: 'NOK', unit: 'kWh' });
 */
export interface PriceReadOptions extends ReadOptions {
  /**
   * Prices converted into this currency (`NOK`, any letter case) with the FX series the operator
   * configured for each pair, at the newest rate published by each interval's start. 400
   * `invalid_parameter` (parameter `currency`) where a series' pair has none.
   */
  currency?: string;
  /** Energy prices per this unit, exactly; 400 (parameter `unit`) for a series not priced per energy unit. */
  unit?: EnergyUnit;
  /**
   * A tariff of the server (`tariffs()`, any letter case): each interval also has `total`, `spot`,
   * `fees` and `vat`, in the tariff's currency and unit.
   */
  tariff?: string;
  /** Extra fields: `provenance`, `rank`; sent comma-joined. */
  include?: readonly Include[];
}

/**
 * The options of `latest`: as `PriceReadOptions`, but a rank is of a whole day, so `include` takes
 * `provenance` only.
 *
 * @example
 * await client.latest({ symbols: ['NO1'], tariff: 'no1-household' });
 */
export type LatestReadOptions = Omit<PriceReadOptions, 'include'> & { include?: readonly 'provenance'[] };

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

/**
 * What a key may do: `read` the prices, also `write` them, or also `admin` (keys and series). Each
 * scope includes the ones before it.
 *
 * @example
 * const scopes: Scope[] = ['read', 'write'];
 */
export type Scope = 'read' | 'write' | 'admin';

/**
 * A key as the admin calls show it: never the key itself (only its last four characters) nor its hash.
 * Times are RFC 3339 UTC; `lastUsedAt` is written in batches every few seconds.
 *
 * @example
 * const keys: KeyInfo[] = await admin.listKeys();
 * const active = keys.filter((k) => k.revokedAt === null);
 */
export interface KeyInfo {
  id: string;
  last4: string;
  name: string;
  tier: string;
  scopes: Scope[];
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

/**
 * A key just created: `key` is the key itself, shown in this answer only (the server keeps a hash).
 *
 * @example
 * const { id, key }: CreatedKey = await admin.createKey({ name: 'dashboard', tier: 'free' });
 */
export interface CreatedKey extends KeyInfo {
  key: string;
}

/**
 * A rotated key: the new one, with `key` shown this once, and the old one with its new expiry.
 *
 * @example
 * const { key, previous }: RotatedKey = await admin.rotateKey(id, { graceSeconds: 3600 });
 */
export interface RotatedKey extends CreatedKey {
  previous: KeyInfo;
}

/**
 * What `createKey` takes: who the key is for, its tier, its scopes (default `['read']`) and an
 * optional expiry in the future (RFC 3339 or a `Date`).
 *
 * @example
 * const spec: NewKey = { name: 'importer', tier: 'pro', scopes: ['write'], expiresAt: '2030-01-01T00:00:00Z' };
 */
export interface NewKey {
  name: string;
  tier: string;
  scopes?: readonly Scope[];
  expiresAt?: string | Date | null;
}

/**
 * The options of `rotateKey`: how long the old key keeps working, in seconds (the server's default
 * is 86400, a day; 0 ends it at once).
 *
 * @example
 * await admin.rotateKey(id, { graceSeconds: 0 });
 */
export interface RotateKeyOptions extends CallOptions {
  graceSeconds?: number;
}

/**
 * A series' metadata for `upsertSeries`: a new series needs every field, an existing one keeps the
 * fields left out.
 *
 * @example
 * const fields: SeriesFields = { name: 'Oslo day-ahead', kind: 'electricity', currency: 'EUR',
 *   unit: 'MWh', timezone: 'Europe/Oslo', resolution: 'PT15M' };
 */
export interface SeriesFields {
  name?: string;
  kind?: string;
  currency?: string;
  unit?: string;
  timezone?: string;
  resolution?: Resolution;
}

/**
 * One point to upload. `price` is a number, or a decimal string (`'41.270'`) sent as that exact
 * number text so the server keeps it as written. `start` is RFC 3339 with an offset; `end`,
 * `symbol`, `currency` and `unit`, when given, must match the series (a point of a read answer fits).
 *
 * @example
 * const point: PriceInput = { start: '2026-11-22T00:00:00+01:00', price: '41.270' };
 */
export interface PriceInput {
  start: string;
  price: number | string;
  end?: string;
  date?: string;
  symbol?: string;
  currency?: string;
  unit?: string;
}

/**
 * The answer of `uploadPrices`: every point was written (inserted or replaced).
 *
 * @example
 * const { written }: UploadResult = await writer.uploadPrices('NO1', points);
 */
export interface UploadResult {
  symbol: string;
  written: number;
}

/**
 * The types of price event (docs/events.md): a day that became complete, a complete day that changed.
 *
 * @example
 * const type: PricepointEventType = 'day.published';
 */
export type PricepointEventType = 'day.published' | 'day.revised';

/**
 * A price event as the event stream and the webhooks send it (docs/events.md). `id` is opaque and
 * unique; `time` is when the prices were committed (RFC 3339, UTC); `data.etag` changes exactly when a
 * price of the day does (it is not the `ETag` header of a read answer).
 *
 * @example
 * const event: PricepointEvent = {
 *   id: 'evt_000000000042', type: 'day.published', time: '2026-11-24T12:58:03.120Z',
 *   data: { symbol: 'NO1', date: '2026-11-25', timezone: 'Europe/Oslo', intervals: 96, etag: '"nq2Qk3"' },
 * };
 */
export interface PricepointEvent {
  id: string;
  type: PricepointEventType;
  time: string;
  data: PricepointEventData;
}

/**
 * What a price event says about its day: the series, its local date and zone, how many intervals
 * the day has (92, 96 or 100 quarter hours on DST days) and the ETag of the day's stored prices.
 *
 * @example
 * const data: PricepointEventData = { symbol: 'NO1', date: '2026-11-25', timezone: 'Europe/Oslo', intervals: 96, etag: '"nq2Qk3"' };
 */
export interface PricepointEventData {
  symbol: string;
  date: CalendarDate;
  timezone: string;
  intervals: number;
  etag: string;
}

/**
 * What a webhook delivery carries: a price event, or the `webhook.test` event that `pricepoint
 * webhooks test` sends (symbol `TEST`, no intervals).
 *
 * @example
 * const event: WebhookEvent = await verifyWebhook(body, headers, secret);
 * if (event.type === 'webhook.test') console.log('test delivery', event.id);
 */
export type WebhookEvent = PricepointEvent | (Omit<PricepointEvent, 'type'> & { type: 'webhook.test' });

/**
 * Price options asking for JSON.
 *
 * @example
 * const options: JsonPriceOptions = { symbols: ['NO1'], currency: 'NOK', unit: 'kWh' };
 */
export type JsonPriceOptions = PriceReadOptions & { format?: 'json' };

/**
 * Price options asking for CSV: with `currency` or `tariff` the rows also have
 * `fx_symbol,fx_date,fx_rate`, with `tariff` also `tariff,spot,fees,vat,total`, with `include: ['rank']`
 * also `rank,level`.
 *
 * @example
 * const csv = await client.today({ format: 'csv', symbols: ['NO1'], tariff: 'no1-household' });
 */
export type CsvPriceOptions = PriceReadOptions & { format: 'csv' };

/**
 * An end of the range `cheapest` reads: a day (`from`: its first instant, `to`: inclusive, up to its
 * last), `now`, an RFC 3339 instant with its offset (`to` exclusive), or a `Date` (sent as UTC).
 *
 * @example
 * const tonight: RangeEndInput = '2026-11-24T18:00:00+01:00';
 * const end: RangeEndInput = 'tomorrow';
 */
export type RangeEndInput = DayInput | 'now' | `${CalendarDate}T${string}` | Date;

/**
 * The options of `cheapest` (docs/api.md, "The cheapest hours"): which series, the range, and either a
 * window of `duration` (the default, `contiguous` true) or, with `contiguous: false`, the `count`
 * (or `duration`'s worth of) cheapest intervals wherever they lie.
 *
 * @example
 * const window: CheapestOptions = { symbols: ['NO1'], duration: 'PT3H', from: 'today', to: 'tomorrow' };
 * const hours: CheapestOptions = { symbols: ['NO1'], contiguous: false, count: 4, from: 'today', to: 'today' };
 */
export interface CheapestOptions extends CallOptions {
  /** Series symbols (case-insensitive); the range is read for each. */
  symbols: readonly string[];
  from: RangeEndInput;
  to: RangeEndInput;
  /** ISO 8601 duration in elapsed time (`PT3H`, `PT90M`, `P1D`), a whole multiple of each series' resolution. */
  duration?: `P${string}`;
  /** `true` (default): one window of consecutive intervals; `false`: the cheapest intervals anywhere. */
  contiguous?: boolean;
  /** With `contiguous: false`: how many intervals, 1 to 3,000. */
  count?: number;
  /** IANA zone the day names of `from` and `to` are read in, and the times written in. */
  tz?: string;
  currency?: string;
  unit?: EnergyUnit;
  /** A tariff of the server: the window is chosen on the totals, and `mean` is of the totals. */
  tariff?: string;
  /** `'json'` (default) or `'csv'`. */
  format?: 'json' | 'csv';
}

/**
 * A stretch of time `[start, end)`, RFC 3339.
 *
 * @example
 * const span: Span = { start: '2026-11-25T00:00:00+01:00', end: '2026-11-26T00:00:00+01:00' };
 */
export interface Span {
  start: string;
  end: string;
}

/**
 * One interval `cheapest` chose: its price (with a tariff, the spot price in the tariff's currency and
 * unit), the FX rate when converted, and the tariff's parts.
 *
 * @example
 * const point: CheapestPoint = { start: '2026-11-25T02:00:00+01:00', end: '2026-11-25T03:00:00+01:00', price: 0.41 };
 */
export type CheapestPoint = Pick<
  PricePoint,
  'start' | 'end' | 'price' | 'fx' | 'total' | 'spot' | 'fees' | 'vat'
>;

/**
 * What `cheapest` chose in one series: the window (or the intervals, in order of time), and the exact
 * mean of their prices (of their totals with a tariff).
 *
 * @example
 * const { start, end, mean }: CheapestChoice = answer.series[0].cheapest!;
 */
export interface CheapestChoice extends Span {
  mean: number;
  prices: CheapestPoint[];
}

/**
 * One series of a `cheapest` answer: the range as read, whether every interval of it is published
 * (`complete`), the spans that are not (`missing`), and the choice, `null` when nothing fits.
 *
 * @example
 * const s: CheapestSeries = answer.series[0];
 * if (!s.complete) console.log('not yet published:', s.missing);
 */
export interface CheapestSeries extends SeriesMeta {
  /** With `tariff`: its name. */
  tariff?: string;
  from: string;
  to: string;
  complete: boolean;
  missing: Span[];
  cheapest: CheapestChoice | null;
}

/**
 * The JSON answer of `cheapest`: `duration` as asked (upper case), or with `contiguous: false` and
 * `count`, the count.
 *
 * @example
 * const answer: CheapestAnswer = await client.cheapest({ symbols: ['NO1'], duration: 'PT3H', from: 'today', to: 'tomorrow' });
 */
export interface CheapestAnswer {
  generatedAt: string;
  contiguous: boolean;
  duration?: string;
  count?: number;
  series: CheapestSeries[];
}

/**
 * A day of the week, as tariff rules name them.
 *
 * @example
 * const weekend: Weekday[] = ['sat', 'sun'];
 */
export type Weekday = 'sun' | 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat';

/**
 * One time-of-use fee rule: its `amount` holds when every condition given holds at an interval's local
 * start (none given: always).
 *
 * @example
 * const rule: TariffRule = { hours: '06:00-22:00', amount: 0.364 };
 */
export interface TariffRule {
  amount: number;
  /** Local time `HH:MM-HH:MM`, end exclusive; over midnight when the end is earlier. */
  hours?: string;
  weekdays?: Weekday[];
  months?: number[];
}

/**
 * A tariff as the server lists it (docs/tariffs.md): each part a list of versions by valid-from date,
 * oldest first.
 *
 * @example
 * const { tariffs } = await client.tariffs();
 * const household: Tariff | undefined = tariffs.find((t) => t.name === 'no1-household');
 */
export interface Tariff {
  /** What `tariff` takes. */
  name: string;
  description: string | null;
  currency: string;
  unit: EnergyUnit;
  /** Whose local time the fees follow; `null`: each series' own zone. */
  timezone: string | null;
  vat: { from: string; percent: number }[];
  fixed: { from: string; amount: number }[];
  fees: { from: string; rules: TariffRule[] }[];
}

/**
 * The answer of `GET /api/v1/tariffs`.
 *
 * @example
 * const { tariffs }: TariffList = await client.tariffs();
 */
export interface TariffList {
  tariffs: Tariff[];
}
