/**
 * The price read endpoints (DESIGN section 2): today, any day, a range of days and the latest
 * price. Thin: parse, ask the price service, render, and let a client cache what it got.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors/api-error.js';
import type { Tier } from '../../domain/limits/tiers.js';
import { isCalendarDate } from '../../domain/time/days.js';
import type { DayAnswer, DayName, DayQuery, PriceService } from '../../services/price-service.js';
import { type AnswerCache, type AnswerContent, answerKey } from '../answer-cache.js';
import { entityTag, LONG_MAX_AGE, SHORT_MAX_AGE, sendAnswer } from '../caching.js';
import type { KeyGuard } from '../key-guard.js';
import {
  answerFormat,
  parseReadQuery,
  ReadHeadersSchema,
  ReadQueryFields,
  SeriesMetaFields,
} from '../read-query.js';
import { renderDayCsv, renderDayJson, renderSeriesDaysJson } from '../render/day-answer.js';
import { CACHE_HEADERS, keyedErrors, RATE_LIMIT_HEADERS, REQUEST_ID_HEADER } from '../schemas.js';

const PricePointSchema = Type.Object({
  start: Type.String({ format: 'date-time', description: 'RFC 3339, with the offset in force then.' }),
  end: Type.String({ format: 'date-time', description: 'RFC 3339; the interval is [start, end).' }),
  price: Type.Number({
    description: 'Exactly as ingested; a mean is rounded to the most decimals of its inputs.',
  }),
});

export const DayAnswerSchema = Type.Object({
  generatedAt: Type.String({ format: 'date-time' }),
  series: Type.Array(
    Type.Object({
      ...SeriesMetaFields,
      date: Type.String({ format: 'date', description: 'The local date of this day in the zone read in.' }),
      prices: Type.Array(PricePointSchema, {
        description: 'Empty when nothing is published for the day yet.',
      }),
    }),
  ),
});

/** The 200 and 304 answers of every day endpoint, and every error they can give. */
function dayResponses(description: string) {
  const headers = { ...CACHE_HEADERS, ...RATE_LIMIT_HEADERS, ...REQUEST_ID_HEADER };
  return {
    200: {
      description,
      headers,
      content: {
        'application/json': { schema: DayAnswerSchema },
        'text/csv': {
          schema: {
            type: 'string',
            description: 'Header row symbol,date,start,end,price,currency,unit, then one row per interval.',
          },
        },
      },
    },
    304: { type: 'null', description: 'The answer named by If-None-Match is still current.', headers },
    ...keyedErrors(404, 406),
  };
}

const DayQuerySchema = Type.Object(ReadQueryFields, { additionalProperties: false });
const DateParams = Type.Object(
  {
    date: Type.String({
      description: 'YYYY-MM-DD, or today, tomorrow or yesterday (each in the zone the day is read in).',
    }),
  },
  { additionalProperties: false },
);
const RangeQuerySchema = Type.Object(
  {
    from: Type.String({ description: 'First day, inclusive: YYYY-MM-DD, today, tomorrow or yesterday.' }),
    to: Type.String({ description: 'Last day, inclusive; at most 366 days after from.' }),
    ...ReadQueryFields,
  },
  { additionalProperties: false },
);

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
  throw new ApiError(
    'invalid_parameter',
    `The ${where} "${parameter}" must be a date YYYY-MM-DD between 1900 and 2199, or today, tomorrow or yesterday.`,
    { extra: { parameter } },
  );
}

/** The answer's bytes, validators and lifetime, for the answer cache. */
function content(answer: DayAnswer, format: 'json' | 'csv', until: number, route: string): AnswerContent {
  const seriesJson = format === 'json' ? renderSeriesDaysJson(answer.series) : '';
  const text = format === 'csv' ? renderDayCsv(answer) : renderDayJson(answer, seriesJson);
  return {
    // generatedAt is left out of the tag: the same content built again keeps its ETag.
    etag: entityTag(format, format === 'csv' ? text : seriesJson),
    maxAge: answer.settled ? LONG_MAX_AGE : SHORT_MAX_AGE,
    type: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
    body: Buffer.from(text),
    tags: answer.series.map((s) => s.symbol),
    validUntil: Math.min(answer.changesAt, until),
    route,
  };
}

const routeOf = (request: FastifyRequest) => request.routeOptions.url ?? 'unmatched';

export interface PriceRouteDeps {
  readonly prices: PriceService;
  readonly keyGuard: KeyGuard;
  /** Finished day answers; `freshMs` bounds how long one is reused without a change notice. */
  readonly answers: AnswerCache;
  readonly freshMs: number;
  readonly clock: () => number;
}

export function priceRoutes(app: FastifyInstance, deps: PriceRouteDeps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const read = deps.keyGuard();

  /**
   * Answers from the cache when it holds this request's answer, else builds it with `build`, keeps
   * it and answers. The URL names the day and every parameter; the tier decides which series and
   * days may be read, and the format may come from `Accept`, so all three make the cache key.
   */
  async function cachedDays(
    request: FastifyRequest,
    reply: FastifyReply,
    format: 'json' | 'csv' | undefined,
    build: (tier: Tier, query: DayQuery) => Promise<DayAnswer>,
    query: Static<typeof DayQuerySchema>,
  ) {
    const tier = request.caller!.tier;
    const key = answerKey(tier.name, request.headers.accept, request.url);
    const now = deps.clock();
    let answer = deps.answers.get(key, now);
    if (answer === undefined) {
      const chosen = answerFormat(request, format);
      const built = await build(tier, parseReadQuery(query));
      const until = deps.freshMs > 0 ? now + deps.freshMs : now;
      answer = deps.answers.keep(key, content(built, chosen, until, routeOf(request)), now);
    }
    return sendAnswer(request, reply, deps.answers, answer);
  }

  api.get(
    '/api/v1/prices/today',
    {
      onRequest: read,
      schema: {
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
        (tier, q) => deps.prices.day(tier, q, { offset: 0 }),
        request.query,
      ),
  );

  api.get(
    '/api/v1/prices/latest',
    {
      onRequest: read,
      schema: {
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
        deps.answers.keep(undefined, content(answer, format, now, routeOf(request)), now),
      );
    },
  );

  api.get(
    '/api/v1/prices/:date',
    {
      onRequest: read,
      schema: {
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
        (tier, q) => deps.prices.day(tier, q, day),
        request.query,
      );
    },
  );

  api.get(
    '/api/v1/prices',
    {
      onRequest: read,
      schema: {
        summary: 'Prices of a range of days',
        description:
          'Days from `from` to `to`, inclusive, at most 366: one entry in `series` per series and day, ordered by series, then date.',
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
        (tier, q) => deps.prices.range(tier, q, first, last),
        rest,
      );
    },
  );
}
