/**
 * The price read endpoints (docs/api.md): today, any day, a range of days and the latest
 * price. Thin: parse, ask the price service, render, and let a client cache what it got.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors/api-error.js';
import type { Tier } from '../../domain/limits/tiers.js';
import { addressGroup } from '../../domain/net/client-address.js';
import { isCalendarDate, missingDate } from '../../domain/time/days.js';
import type { DayName, DayPlan, DayQuery, PriceService } from '../../services/price-service.js';
import { LEVELS } from '../../services/ranking.js';
import {
  answerFormat,
  ConversionFields,
  IncludeField,
  parseReadQuery,
  ReadHeadersSchema,
  ReadQueryFields,
  SeriesMetaFields,
  stringEnum,
  TariffField,
  TermsFields,
} from '../contract/read-query.js';
import { CACHE_HEADERS, keyedErrors, RATE_LIMIT_HEADERS, REQUEST_ID_HEADER } from '../contract/schemas.js';
import type { KeyGuard } from '../pipeline/admit.js';
import { sendAnswer } from '../pipeline/answer.js';
import { type AnswerCache, answerKey } from '../pipeline/answer-cache.js';
import type { HeavyReads } from '../pipeline/heavy-reads.js';
import { buildOnLoop, type DayBuilder, dayContent } from '../render/day-content.js';

const FxSchema = Type.Object(
  {
    symbol: Type.String({ description: 'The FX series configured for the pair.', examples: ['EURNOK'] }),
    date: Type.String({ format: 'date', description: "The local date of the rate's interval." }),
    rate: Type.Number({ description: 'The rate as stored.', examples: [11.5847] }),
  },
  { description: 'The FX rate a converted price was computed with.' },
);

/** A tariff's parts of an interval (docs/tariffs.md); absent where the tariff has no version in force yet. */
const TariffPartsFields = {
  total: Type.Optional(
    Type.Number({
      description: 'With tariff: spot + fees + vat, exactly, in the tariff currency per its unit.',
      examples: [1.141750711],
    }),
  ),
  spot: Type.Optional(
    Type.Number({
      description: 'With tariff: the price converted into the tariff currency and unit.',
      examples: [0.478100569],
    }),
  ),
  fees: Type.Optional(
    Type.Number({
      description: "With tariff: fixed amounts plus the time-of-use fee at the interval's local start.",
      examples: [0.4353],
    }),
  ),
  vat: Type.Optional(
    Type.Number({
      description:
        'With tariff: VAT percent of spot + fees, rounded half away from zero to 6 decimals per MWh (9 per kWh).',
      examples: [0.228350142],
    }),
  ),
};

const PricePointSchema = Type.Object({
  start: Type.String({ format: 'date-time', description: 'RFC 3339, with the offset in force then.' }),
  end: Type.String({ format: 'date-time', description: 'RFC 3339; the interval is [start, end).' }),
  price: Type.Number({
    description:
      'Exactly as ingested; a mean is rounded to the most decimals of its inputs. Converted (currency, unit): computed exactly, see docs/data-model.md "Converted prices".',
  }),
  fx: Type.Optional({
    ...FxSchema,
    description: "Only when a converted day's intervals used different rates: this interval's rate.",
  }),
  ...TariffPartsFields,
  rank: Type.Optional(
    Type.Integer({
      minimum: 1,
      description:
        'With include=rank: 1 = cheapest interval of its day (on total with a tariff); equal values share a rank and the next is skipped (1, 2, 2, 4).',
    }),
  ),
  level: Type.Optional(
    Type.Union([stringEnum(LEVELS, 'The level against the reference.'), Type.Null()], {
      description:
        'With include=rank: very_cheap, cheap, normal, expensive or very_expensive, against the mean of the 7 local days before (docs/tariffs.md, "Rank and level"); null when those hold no price.',
      examples: ['cheap'],
    }),
  ),
});

/**
 * The JSON answer of every day endpoint. Registered once by its `$id` (app.ts) and referenced
 * from each: one named schema in the OpenAPI document, one type in a generated client.
 */
export const DayAnswerSchema = Type.Object(
  {
    generatedAt: Type.String({ format: 'date-time' }),
    series: Type.Array(
      Type.Object({
        ...SeriesMetaFields,
        date: Type.String({ format: 'date', description: 'The local date of this day in the zone read in.' }),
        complete: Type.Boolean({
          description:
            "Every interval of the day is stored. Read in another zone (tz), every day of the series' own zone it overlaps is complete. False for a day nothing was stored for, or stored before provenance was recorded.",
        }),
        source: Type.Union([Type.String(), Type.Null()], {
          description:
            'The source that wrote the day (its configured name, e.g. entsoe), or import for files and the upload API; null when unknown.',
          examples: ['entsoe'],
        }),
        ...TermsFields,
        tariff: Type.Optional(
          Type.String({ description: 'With tariff: its name; the prices are in its currency and unit.' }),
        ),
        fx: Type.Optional(
          Type.Union([FxSchema, Type.Null()], {
            description:
              'With currency, on entries converted into it: the rate of the first interval (each interval names its own when they differ); null when no rate was published by any interval, whose prices are then left out.',
          }),
        ),
        unconverted: Type.Optional(
          Type.Object(
            {
              intervals: Type.Integer({ minimum: 1, description: 'Stored intervals left out.' }),
              reason: Type.String({
                description: 'Which FX series lacks what, in a sentence.',
                examples: [
                  'EURNOK has no rate published by 2026-11-28T00:00:00+01:00, so 96 intervals are left out.',
                ],
              }),
            },
            {
              description:
                'With currency, when intervals were left out for want of a rate published by their start: how many and why. Absent when every stored interval was converted.',
            },
          ),
        ),
        prices: Type.Array(PricePointSchema, {
          description: 'Empty when nothing is published for the day yet.',
        }),
      }),
    ),
  },
  { $id: 'DayAnswer' },
);

/** The 200 and 304 answers of every day endpoint, and every error they can give. */
function dayResponses(description: string) {
  const headers = { ...CACHE_HEADERS, ...RATE_LIMIT_HEADERS, ...REQUEST_ID_HEADER };
  return {
    200: {
      description,
      headers,
      content: {
        'application/json': { schema: Type.Ref(DayAnswerSchema) },
        'text/csv': {
          schema: {
            type: 'string',
            description:
              'Header row symbol,date,start,end,price,currency,unit (with include=provenance also complete,source; with currency or tariff also fx_symbol,fx_date,fx_rate, empty where no conversion was needed; with tariff also tariff,spot,fees,vat,total; with include=rank also rank,level), then one row per interval.',
          },
        },
      },
    },
    304: { type: 'null', description: 'The answer named by If-None-Match is still current.', headers },
    ...keyedErrors(404, 406),
  };
}

export const DayQuerySchema = Type.Object(
  { ...ReadQueryFields, ...ConversionFields, ...TariffField, ...IncludeField },
  { additionalProperties: false },
);
export const DateParams = Type.Object(
  {
    date: Type.String({
      description: 'YYYY-MM-DD, or today, tomorrow or yesterday (each in the zone the day is read in).',
    }),
  },
  { additionalProperties: false },
);
export const RangeQuerySchema = Type.Object(
  {
    from: Type.String({ description: 'First day, inclusive: YYYY-MM-DD, today, tomorrow or yesterday.' }),
    to: Type.String({ description: 'Last day, inclusive; at most 366 days after from.' }),
    ...ReadQueryFields,
    ...ConversionFields,
    ...TariffField,
    ...IncludeField,
  },
  { additionalProperties: false },
);

const TODAY: DayName = { offset: 0 };

const RELATIVE_DAYS = new Map([
  ['today', 0],
  ['tomorrow', 1],
  ['yesterday', -1],
]);

/** `YYYY-MM-DD` (1900 to 2199) or a relative day, naming the parameter when it is neither. */
export function parseDayName(value: string, parameter: string, where = 'parameter'): DayName {
  const offset = RELATIVE_DAYS.get(value.toLowerCase());
  if (offset !== undefined) return { offset };
  if (isCalendarDate(value) && value >= '1900-01-01' && value <= '2199-12-31') return { date: value };
  const missing = missingDate(value);
  if (missing !== undefined) {
    throw new ApiError('invalid_parameter', `The ${where} "${parameter}" names ${missing}.`, {
      extra: { parameter },
    });
  }
  throw new ApiError(
    'invalid_parameter',
    `The ${where} "${parameter}" must be a date YYYY-MM-DD between 1900 and 2199, or today, tomorrow or yesterday.`,
    { extra: { parameter } },
  );
}

const routeOf = (request: FastifyRequest) => request.routeOptions.url ?? 'unmatched';

/**
 * A read that computes more than it reads and writes (converted, tariffed, ranked) or weighs more
 * than one unit: one key builds only so many at once (../heavy-reads.ts).
 */
function isHeavy({ query, weight }: DayPlan): boolean {
  return (
    weight > 1 ||
    query.currency !== undefined ||
    query.unit !== undefined ||
    query.tariff !== undefined ||
    query.rank === true
  );
}

/** Whose heavy reads a request's are: its key's, and its address group's too where the tier counts so. */
function clientOf(request: FastifyRequest) {
  const { key, tier } = request.caller!;
  return tier.countPer === 'key+ip'
    ? ([`${key.id}|${addressGroup(request.ip)}`, 'this key from this address'] as const)
    : ([key.id, 'this key'] as const);
}

export interface PriceRouteDeps {
  readonly prices: PriceService;
  readonly keyGuard: KeyGuard;
  /** Finished day answers; `freshMs` bounds how long one is reused without a change notice. */
  readonly answers: AnswerCache;
  readonly freshMs: number;
  readonly clock: () => number;
  /** The heavy reads each client has built at once (../heavy-reads.ts). */
  readonly heavyReads: HeavyReads;
  /**
   * Where heavy reads of more than one unit are built: build threads
   * (../../server/build-threads.ts), so the event loop only admits, counts and sends them; absent,
   * on the event loop like every other read.
   */
  readonly buildHeavy?: DayBuilder;
}

export function priceRoutes(app: FastifyInstance, deps: PriceRouteDeps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const read = deps.keyGuard();
  const buildLight = buildOnLoop(deps.prices);
  const buildHeavy = deps.buildHeavy ?? buildLight;

  /**
   * A key guard that counts a request for days by its weight (docs/using-the-api.md "Rate limits"), planned from
   * the URL before anything is read. A request the plan refuses (a bad parameter, an unknown
   * series) weighs one unit: the handler then answers it with the plan's error. A kept answer
   * weighs one unit (only those are kept), so a repeated request asks no store.
   */
  function weighedBy(days: (request: FastifyRequest) => readonly [DayName, DayName]) {
    return deps.keyGuard({
      weigh: async (request) => {
        const tier = request.caller!.tier;
        const key = answerKey(tier.name, request.headers.accept, request.url);
        if (deps.answers.get(key, deps.clock()) !== undefined) return 1;
        try {
          const [from, to] = days(request);
          const query = request.query as Static<typeof DayQuerySchema>;
          return (await deps.prices.plan(tier, parseReadQuery(query), from, to)).weight;
        } catch {
          return 1;
        }
      },
    });
  }

  /**
   * Answers from the cache when it holds this request's answer, else plans it with `plan`, reads it
   * and answers. The URL names the day and every parameter; the tier decides which series and days
   * may be read, and the format may come from `Accept`, so all three make the cache key. Only
   * answers of one unit are kept: the fast entry serves kept answers and counts one unit for each,
   * and a heavier answer is paid for by its weight each time it is built.
   */
  async function cachedDays(
    request: FastifyRequest,
    reply: FastifyReply,
    format: 'json' | 'csv' | undefined,
    plan: (tier: Tier, query: DayQuery) => Promise<DayPlan>,
    query: Static<typeof DayQuerySchema>,
  ) {
    const tier = request.caller!.tier;
    const key = answerKey(tier.name, request.headers.accept, request.url);
    const now = deps.clock();
    let answer = deps.answers.get(key, now);
    if (answer === undefined) {
      const chosen = answerFormat(request, format);
      const planned = await plan(tier, parseReadQuery(query));
      const job = {
        plan: planned,
        format: chosen,
        until: deps.freshMs > 0 ? now + deps.freshMs : now,
        route: routeOf(request),
        csv: { include: query.include, currency: query.currency, tariff: query.tariff },
      };
      const build = async (builder: DayBuilder) => {
        // A read that waited its turn may find the answer kept meanwhile by the same request.
        const done = deps.answers.get(key, deps.clock());
        if (done !== undefined) return done;
        return deps.answers.keep(planned.weight === 1 ? key : undefined, await builder(job), now);
      };
      const [client, who] = clientOf(request);
      // A read of one unit builds in about a millisecond: handing it to a thread would cost more
      // than it saves. Heavier ones go there (docs/using-the-api.md "Heavy reads in flight").
      answer = isHeavy(planned)
        ? await deps.heavyReads.run(client, () => build(planned.weight > 1 ? buildHeavy : buildLight), who)
        : await build(buildLight);
    }
    return sendAnswer(request, reply, deps.answers, answer);
  }

  api.get(
    '/api/v1/prices/today',
    {
      onRequest: weighedBy(() => [TODAY, TODAY]),
      schema: {
        operationId: 'getPricesToday',
        summary: "Today's prices",
        description: 'Every interval of today of every series the key may read, or of `symbols`.',
        tags: ['prices'],
        querystring: DayQuerySchema,
        headers: ReadHeadersSchema,
        response: dayResponses("Today's prices, in each series' zone or in `tz`."),
      },
    },
    (request, reply) =>
      cachedDays(
        request,
        reply,
        request.query.format,
        (tier, q) => deps.prices.plan(tier, q, TODAY, TODAY),
        request.query,
      ),
  );

  api.get(
    '/api/v1/prices/latest',
    {
      onRequest: read,
      schema: {
        operationId: 'getLatestPrices',
        summary: 'The current price',
        description:
          'Per series, the interval that contains now, or else the last one before now (within the tier history). A series with none has `prices: []`.',
        tags: ['prices'],
        querystring: DayQuerySchema,
        headers: ReadHeadersSchema,
        response: dayResponses('One interval per series, or none.'),
      },
    },
    async (request, reply) => {
      // The current interval moves on within minutes: built for every request, never kept.
      const format = answerFormat(request, request.query.format);
      const answer = await deps.prices.latest(request.caller!.tier, parseReadQuery(request.query));
      const now = deps.clock();
      return sendAnswer(
        request,
        reply,
        deps.answers,
        deps.answers.keep(
          undefined,
          await dayContent(answer, {
            format,
            until: now,
            route: routeOf(request),
            csv: request.query,
          }),
          now,
        ),
      );
    },
  );

  api.get(
    '/api/v1/prices/:date',
    {
      onRequest: weighedBy((request) => {
        const day = parseDayName((request.params as { date: string }).date, 'date', 'path segment');
        return [day, day];
      }),
      schema: {
        operationId: 'getPricesForDate',
        summary: 'Prices of one day',
        description:
          'A day that has not been published yet (tomorrow before the auction) has `prices: []`; that is no error. Days before the tier history are refused with 403.',
        tags: ['prices'],
        params: DateParams,
        querystring: DayQuerySchema,
        headers: ReadHeadersSchema,
        response: dayResponses('The prices of the day.'),
      },
    },
    (request, reply) => {
      const day = parseDayName(request.params.date, 'date', 'path segment');
      return cachedDays(
        request,
        reply,
        request.query.format,
        (tier, q) => deps.prices.plan(tier, q, day, day),
        request.query,
      );
    },
  );

  api.get(
    '/api/v1/prices',
    {
      onRequest: weighedBy((request) => {
        const { from, to } = request.query as { from: string; to: string };
        return [parseDayName(from, 'from'), parseDayName(to, 'to')];
      }),
      schema: {
        operationId: 'getPriceRange',
        summary: 'Prices of a range of days',
        description:
          'Days from `from` to `to`, inclusive, at most 366: one entry in `series` per series and day, ordered by series, then date. Takes one rate-limit unit per started 3,000 intervals on the series own grids (a year of one 15-minute series: 12); each interval answered counts 1 more when converted, 2 more under a tariff and 1 more with include=rank, whose 7 days before count too (docs/using-the-api.md "Rate limits"). Stated in `RateLimit-Policy` as `pricepoint-cost`.',
        tags: ['prices'],
        querystring: RangeQuerySchema,
        headers: ReadHeadersSchema,
        response: dayResponses('One entry per series and day.'),
      },
    },
    (request, reply) => {
      const { from, to, ...rest } = request.query;
      const first = parseDayName(from, 'from');
      const last = parseDayName(to, 'to');
      return cachedDays(
        request,
        reply,
        rest.format,
        (tier, q) => deps.prices.plan(tier, q, first, last),
        rest,
      );
    },
  );
}
