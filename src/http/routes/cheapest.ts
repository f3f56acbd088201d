/**
 * `GET /api/v1/prices/cheapest` (docs/api.md, "The cheapest hours"): the cheapest window of a
 * given length, or the N cheapest intervals, of each series asked within a range. Thin: parse, ask
 * the cheapest-hours service, render exactly (each price its decimal text), cache like the days.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors/api-error.js';
import { formatInstant, localDate } from '../../domain/time/days.js';
import { parseTimestamp } from '../../domain/time/timestamp.js';
import {
  type CheapestAnswer,
  type CheapestSeries,
  type CheapestService,
  type CheapPoint,
  type Pick,
  parseIsoDuration,
  type RangeEnd,
} from '../../services/cheapest.js';
import {
  answerFormat,
  ConversionFields,
  parseReadQuery,
  ReadHeadersSchema,
  ReadQueryFields,
  SeriesMetaFields,
  stringEnum,
  TariffField,
} from '../contract/read-query.js';
import { CACHE_HEADERS, keyedErrors, RATE_LIMIT_HEADERS, REQUEST_ID_HEADER } from '../contract/schemas.js';
import type { KeyGuard } from '../pipeline/admit.js';
import { csvAttachment, entityTag, LONG_MAX_AGE, SHORT_MAX_AGE, sendAnswer } from '../pipeline/answer.js';
import { type AnswerCache, answerKey } from '../pipeline/answer-cache.js';
import { csvField, FX_COLUMNS, fxJson, TARIFF_COLUMNS } from '../render/day-answer.js';
import { parseDayName } from './prices.js';

/** At most this many intervals in `count` (a month of quarter hours is 2,976). */
const MAX_COUNT = 3_000;

export const CheapestQuerySchema = Type.Object(
  {
    symbols: Type.String({
      description: 'Comma-separated series symbols (case-insensitive); the range is read for each.',
      examples: ['NO1'],
    }),
    from: Type.String({
      description:
        'Start of the range: a day YYYY-MM-DD, today, tomorrow or yesterday (its first instant in the zone read in), an RFC 3339 instant with its offset, or now.',
      examples: ['today'],
    }),
    to: Type.String({
      description:
        'End of the range: a day (inclusive: up to its last instant), an RFC 3339 instant (exclusive) or now. At most 3,000 intervals on the series own grids in all (31 days of one quarter-hour series).',
      examples: ['tomorrow'],
    }),
    duration: Type.Optional(
      Type.String({
        description:
          'ISO 8601 duration of the window (PT3H, PT90M, P1D): a whole multiple of each series resolution, counted in elapsed time. Required unless contiguous=false and count is given.',
        examples: ['PT3H'],
      }),
    ),
    contiguous: Type.Optional(
      stringEnum(
        ['true', 'false'],
        'true (default): one window of consecutive intervals; false: the cheapest intervals wherever they lie.',
      ),
    ),
    count: Type.Optional(
      Type.String({
        pattern: '^[1-9][0-9]{0,3}$',
        description: `With contiguous=false: how many intervals, 1 to ${MAX_COUNT}.`,
      }),
    ),
    tz: ReadQueryFields.tz,
    format: ReadQueryFields.format,
    ...ConversionFields,
    ...TariffField,
  },
  { additionalProperties: false },
);
type CheapestRaw = Static<typeof CheapestQuerySchema>;

const SpanSchema = Type.Object({
  start: Type.String({ format: 'date-time' }),
  end: Type.String({ format: 'date-time' }),
});
const FxSchema = Type.Object({
  symbol: Type.String({ examples: ['EURNOK'] }),
  date: Type.String({ format: 'date' }),
  rate: Type.Number({ examples: [11.5847] }),
});

/** With `tariff`: each interval's parts, and the total the choice and the mean are of. */
const TARIFF_PARTS = Object.fromEntries(
  (['spot', 'fees', 'vat', 'total'] as const).map((name) => [
    name,
    Type.Optional(Type.Number({ description: `With tariff: ${name} (docs/tariffs.md).` })),
  ]),
);

const CheapestAnswerSchema = Type.Object({
  generatedAt: Type.String({ format: 'date-time' }),
  contiguous: Type.Boolean(),
  duration: Type.Optional(
    Type.String({ description: 'The duration asked, upper case.', examples: ['PT3H'] }),
  ),
  count: Type.Optional(Type.Integer({ description: 'With contiguous=false: the intervals asked.' })),
  series: Type.Array(
    Type.Object({
      ...SeriesMetaFields,
      tariff: Type.Optional(
        Type.String({
          description: 'With tariff: its name; windows are chosen on totals, mean is of totals.',
        }),
      ),
      from: Type.String({ format: 'date-time', description: 'The range as read, in the zone read in.' }),
      to: Type.String({ format: 'date-time', description: 'Its end, exclusive.' }),
      complete: Type.Boolean({
        description:
          'Every interval of the series grid in the range is published (and, with currency, has a rate). When false, the cheapest was chosen among the published ones only.',
      }),
      missing: Type.Array(SpanSchema, {
        description: 'The parts of the range without a published price, consecutive intervals joined.',
      }),
      cheapest: Type.Union(
        [
          Type.Object({
            start: Type.String({ format: 'date-time' }),
            end: Type.String({ format: 'date-time' }),
            mean: Type.Number({
              description:
                'The exact mean of the prices, rounded half away from zero to the most decimals among them.',
            }),
            prices: Type.Array(
              Type.Object({
                start: Type.String({ format: 'date-time' }),
                end: Type.String({ format: 'date-time' }),
                price: Type.Number({ description: 'With tariff: the spot price in its currency and unit.' }),
                fx: Type.Optional(FxSchema),
                ...TARIFF_PARTS,
              }),
              { description: 'The intervals chosen, in order of time.' },
            ),
          }),
          Type.Null(),
        ],
        { description: 'null when no window (or not count intervals) of the range is published.' },
      ),
    }),
  ),
});

function cheapestResponses() {
  const headers = { ...CACHE_HEADERS, ...RATE_LIMIT_HEADERS, ...REQUEST_ID_HEADER };
  return {
    200: {
      description: 'Per series, the cheapest window or intervals, and what of the range is not published.',
      headers,
      content: {
        'application/json': { schema: CheapestAnswerSchema },
        'text/csv': {
          schema: {
            type: 'string',
            description: `Header row ${CSV_HEADER} (with currency or tariff also ${FX_COLUMNS}; with tariff also ${TARIFF_COLUMNS}), then one row per interval chosen; a series with none chosen has one row with only symbol, currency, unit and complete.`,
          },
        },
      },
    },
    304: { type: 'null', description: 'The answer named by If-None-Match is still current.', headers },
    ...keyedErrors(404, 406),
  };
}

const CSV_HEADER = 'symbol,cheapest_start,cheapest_end,mean,start,end,price,currency,unit,complete';

function invalid(parameter: string, detail: string): ApiError {
  return new ApiError('invalid_parameter', detail, { extra: { parameter } });
}

/** `from` or `to`: a day name, `now`, or an RFC 3339 instant with its offset. */
function parseRangeEnd(value: string, parameter: 'from' | 'to'): RangeEnd {
  if (value.toLowerCase() === 'now') return { now: true };
  if (!/^\d{4}-\d{2}-\d{2}[Tt]/.test(value)) return { day: parseDayName(value, parameter) };
  const instant = parseTimestamp(value);
  if (instant === undefined || value < '1900' || value >= '2200') {
    throw invalid(
      parameter,
      `The parameter "${parameter}" must be a date YYYY-MM-DD, today, tomorrow, yesterday, now, or an RFC 3339 instant with its offset (2026-11-24T18:00:00+01:00).`,
    );
  }
  return { instant };
}

/** What to pick, from `duration`, `contiguous` and `count`. */
function parsePick(raw: CheapestRaw): Pick {
  const duration = raw.duration === undefined ? undefined : parseIsoDuration(raw.duration);
  if (raw.duration !== undefined && duration === undefined) {
    throw invalid(
      'duration',
      'The parameter "duration" must be an ISO 8601 duration of days, hours, minutes or seconds, such as PT3H.',
    );
  }
  if (raw.contiguous !== 'false') {
    if (raw.count !== undefined)
      throw invalid('count', 'The parameter "count" applies with contiguous=false.');
    if (duration === undefined) throw invalid('duration', 'The parameter "duration" is required.');
    return { contiguous: true, duration };
  }
  if ((duration === undefined) === (raw.count === undefined)) {
    throw invalid('count', 'With contiguous=false, give either "count" or "duration".');
  }
  if (duration !== undefined) return { contiguous: false, duration };
  const count = Number(raw.count);
  if (count > MAX_COUNT) throw invalid('count', `The parameter "count" is at most ${MAX_COUNT}.`);
  return { contiguous: false, count };
}

/** One series as JSON, each price and the mean their exact decimal text. */
function seriesJson(s: CheapestSeries): string {
  const meta = JSON.stringify({
    symbol: s.symbol,
    name: s.name,
    kind: s.kind,
    currency: s.currency,
    unit: s.unit,
    timezone: s.timezone,
    resolution: s.resolution,
    ...(s.tariff !== undefined && { tariff: s.tariff }),
    from: s.from,
    to: s.to,
    complete: s.complete,
    missing: s.missing.map((m) => ({
      start: formatInstant(m.start, s.zone),
      end: formatInstant(m.end, s.zone),
    })),
  });
  const c = s.cheapest;
  const cheapest =
    c === undefined
      ? 'null'
      : `{"start":"${c.start}","end":"${c.end}","mean":${c.mean},"prices":[${c.prices
          .map(
            (p) =>
              `{"start":"${p.start}","end":"${p.end}","price":${p.price}${p.fx === undefined ? '' : `,"fx":${fxJson(p.fx)}`}${partsJson(p)}}`,
          )
          .join(',')}]}`;
  return `${meta.slice(0, -1)},"cheapest":${cheapest}}`;
}

/** A tariff's parts of an interval as JSON members after its price; empty without a tariff. */
function partsJson(p: CheapPoint): string {
  return p.total === undefined ? '' : `,"spot":${p.spot},"fees":${p.fees},"vat":${p.vat},"total":${p.total}`;
}

function answerCsv(answer: CheapestAnswer, fx: boolean, tariff: boolean): string {
  const header = `${CSV_HEADER}${fx ? `,${FX_COLUMNS}` : ''}${tariff ? `,${TARIFF_COLUMNS}` : ''}`;
  const rows = [header];
  for (const s of answer.series) {
    const tail = (p: CheapPoint | undefined) => {
      const fxUsed = p?.fx;
      const fxColumns =
        fxUsed === undefined ? ',,,' : `,${csvField(fxUsed.symbol)},${fxUsed.date},${fxUsed.rate}`;
      const parts =
        p?.total === undefined
          ? `,${csvField(s.tariff ?? '')},,,,`
          : `,${csvField(s.tariff ?? '')},${p.spot},${p.fees},${p.vat},${p.total}`;
      return `${csvField(s.currency)},${csvField(s.unit)},${s.complete}${fx ? fxColumns : ''}${tariff ? parts : ''}`;
    };
    const c = s.cheapest;
    if (c === undefined) rows.push(`${csvField(s.symbol)},,,,,,,${tail(undefined)}`);
    else {
      for (const p of c.prices) {
        rows.push(
          `${csvField(s.symbol)},${c.start},${c.end},${c.mean},${p.start},${p.end},${p.price},${tail(p)}`,
        );
      }
    }
  }
  return `${rows.join('\r\n')}\r\n`;
}

export interface CheapestRouteDeps {
  readonly cheapest: CheapestService;
  readonly keyGuard: KeyGuard;
  /** Finished answers, shared with the day endpoints; `freshMs` bounds how long one is reused. */
  readonly answers: AnswerCache;
  readonly freshMs: number;
  readonly clock: () => number;
}

export function cheapestRoutes(app: FastifyInstance, deps: CheapestRouteDeps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { cheapest } = deps;

  api.get(
    '/api/v1/prices/cheapest',
    {
      // One rate-limit unit: the range is bounded to what one unit of a range read pays for.
      onRequest: deps.keyGuard(),
      schema: {
        operationId: 'getCheapestPrices',
        summary: 'The cheapest hours',
        description:
          'Per series, the cheapest window of `duration` (consecutive intervals, in elapsed time: a 3-hour window across the repeated autumn hour holds 3 hours of intervals) or, with `contiguous=false`, the `count` cheapest intervals, among the published prices from `from` to `to`. With `tariff`, intervals are compared on their `total` (docs/tariffs.md). Ties go to the earliest. `complete: false` and `missing` say which part of the range is not published yet. Takes one rate-limit unit.',
        tags: ['prices'],
        querystring: CheapestQuerySchema,
        headers: ReadHeadersSchema,
        response: cheapestResponses(),
      },
    },
    async (request, reply) => {
      const tier = request.caller!.tier;
      // The URL names every parameter, the tier which series may be read, Accept the format.
      const key = answerKey(tier.name, request.headers.accept, request.url);
      const now = deps.clock();
      let kept = deps.answers.get(key, now);
      if (kept === undefined) {
        const q = request.query;
        const format = answerFormat(request, q.format);
        const from = parseRangeEnd(q.from, 'from');
        const to = parseRangeEnd(q.to, 'to');
        const pick = parsePick(q);
        const answer = await cheapest.find(tier, { ...parseReadQuery(q), from, to, pick });
        const series = `[${answer.series.map(seriesJson).join(',')}]`;
        const asked = `"contiguous":${pick.contiguous},${'count' in pick ? `"count":${pick.count}` : `"duration":"${pick.duration.text}"`}`;
        const text =
          format === 'csv'
            ? answerCsv(answer, q.currency !== undefined || q.tariff !== undefined, q.tariff !== undefined)
            : `{"generatedAt":"${answer.generatedAt}",${asked},"series":${series}}`;
        const dates = answer.series.flatMap((s) => [
          localDate(s.span.start, s.zone),
          localDate(s.span.end - 1, s.zone),
        ]);
        const until = deps.freshMs > 0 ? now + deps.freshMs : now;
        kept = deps.answers.keep(
          // A range relative to now means another range a moment later: not kept.
          answer.momentary ? undefined : key,
          {
            // generatedAt is left out of the tag: the same content built again keeps its ETag.
            etag: entityTag(format, format === 'csv' ? text : `${asked}${series}`),
            maxAge: answer.settled ? LONG_MAX_AGE : SHORT_MAX_AGE,
            type: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
            ...(format === 'csv' && { disposition: csvAttachment('cheapest', dates) }),
            body: Buffer.from(text),
            tags: [...answer.series.map((s) => s.symbol), ...(answer.fxSymbols ?? [])],
            validUntil: Math.min(answer.changesAt, until),
            route: request.routeOptions.url ?? 'unmatched',
          },
          now,
        );
      }
      return sendAnswer(request, reply, deps.answers, kept);
    },
  );
}
