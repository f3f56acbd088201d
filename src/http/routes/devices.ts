/**
 * Answers shaped for devices and home-energy tools (docs/integrations.md): `GET /api/v1/prices/now`
 * (the price now, as a bare number or a few bytes of JSON), `GET /api/v1/prices/cheapest-now` (is
 * now among today's cheapest hours: `1`/`0` or JSON) and `GET /api/v1/prices/forecast` (now to the
 * end of tomorrow, as evcc's custom tariff, EMHASS and Home Assistant read it). Counted and weighed
 * like the day reads; never reusable past the interval they describe.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Negotiator from 'negotiator';
import { ApiError } from '../../domain/errors/api-error.js';
import {
  createDevicePrices,
  type DeviceRate,
  type DeviceSeries,
  oneSymbol,
} from '../../services/device-prices.js';
import type { DayName, DayQuery, PriceService } from '../../services/price-service.js';
import {
  ConversionFields,
  parseReadQuery,
  ReadHeadersSchema,
  ReadQueryFields,
  stringEnum,
  TariffField,
} from '../contract/read-query.js';
import { CACHE_HEADERS, keyedErrors, RATE_LIMIT_HEADERS, REQUEST_ID_HEADER } from '../contract/schemas.js';
import type { KeyGuard } from '../pipeline/admit.js';
import { entityTag, SHORT_MAX_AGE, sendAnswer } from '../pipeline/answer.js';
import type { AnswerCache } from '../pipeline/answer-cache.js';

const TODAY: DayName = { offset: 0 };
const TOMORROW: DayName = { offset: 1 };

const SymbolField = {
  symbols: Type.String({
    description: 'The one series to answer for (case-insensitive): a device shows one price.',
    examples: ['NO1'],
  }),
};
const DeviceFields = {
  ...SymbolField,
  resolution: ReadQueryFields.resolution,
  ...ConversionFields,
  ...TariffField,
};
const TextFormat = {
  format: Type.Optional(
    stringEnum(
      ['json', 'text'],
      'json (default) or text (text/plain, just the value); Accept: text/plain works the same.',
    ),
  ),
};

const NowQuerySchema = Type.Object({ ...DeviceFields, ...TextFormat }, { additionalProperties: false });
const CheapNowQuerySchema = Type.Object(
  {
    ...DeviceFields,
    hours: Type.String({
      pattern: '^[1-9][0-9]?$',
      description:
        'How many hours of today count as cheap, 1 to 24, in elapsed time (a 23-hour day has 23, a 25-hour day 25): 4 on a quarter-hour series is its 16 cheapest intervals.',
      examples: ['4'],
    }),
    ...TextFormat,
  },
  { additionalProperties: false },
);
const ForecastQuerySchema = Type.Object(
  {
    ...DeviceFields,
    format: Type.Optional(
      stringEnum(
        ['json', 'evcc'],
        "json (default): the object below; evcc: only its `prices` list, the shape of evcc's custom tariff forecast (per kWh: unit=kWh is implied, and a tariff must be per kWh).",
      ),
    ),
  },
  { additionalProperties: false },
);

const Value = (description: string) => Type.Number({ description, examples: [0.4781] });
const Span = {
  start: Type.String({ format: 'date-time', description: 'RFC 3339, with the offset in force then.' }),
  end: Type.String({ format: 'date-time', description: 'Exclusive.' }),
};
const Unit = {
  currency: Type.String({
    description: 'The currency of the value (the tariff currency under a tariff).',
    examples: ['NOK'],
  }),
  unit: Type.String({ description: 'What one value buys.', examples: ['kWh'] }),
  tariff: Type.Optional(Type.String({ description: 'With tariff: its name; the value is the total.' })),
};

const NowAnswerSchema = Type.Object({
  symbol: Type.String({ examples: ['NO1'] }),
  price: Value('The price of the interval holding now; with tariff its total (docs/tariffs.md).'),
  ...Unit,
  ...Span,
});
const CheapNowAnswerSchema = Type.Object({
  symbol: Type.String({ examples: ['NO1'] }),
  cheap: Type.Boolean({ description: "The interval holding now is among today's `hours` cheapest." }),
  hours: Type.Integer({ examples: [4] }),
  intervals: Type.Integer({
    description:
      "How many of today's intervals count as cheap: `hours` of them, or every published one where fewer are.",
    examples: [16],
  }),
  date: Type.String({ format: 'date', description: "Today in the series' zone." }),
  complete: Type.Boolean({ description: 'Every interval of today is published.' }),
  price: Value('The price (with tariff, the total) of the interval holding now.'),
  ...Unit,
  ...Span,
});
const RateSchema = Type.Object({ ...Span, value: Value('The price; with tariff the total.') });
const ForecastAnswerSchema = Type.Object({
  generatedAt: Type.String({ format: 'date-time' }),
  symbol: Type.String({ examples: ['NO1'] }),
  ...Unit,
  resolution: Type.String({ description: 'The length of each interval, as served.', examples: ['PT15M'] }),
  price: Type.Union([Type.Number(), Type.Null()], {
    description: 'The value of the interval holding now; null when it is not published.',
    examples: [0.4781],
  }),
  prices: Type.Array(RateSchema, {
    description: 'From the interval holding now to the end of tomorrow, as far as published, in order.',
  }),
  values: Type.Array(Type.Number(), {
    description: 'The same values alone: a list per optimisation step, as EMHASS takes it.',
  }),
});

function responses(json: TSchema, other: Record<string, unknown>) {
  const headers = { ...CACHE_HEADERS, ...RATE_LIMIT_HEADERS, ...REQUEST_ID_HEADER };
  return {
    200: {
      description: 'The answer, reusable until the interval holding now ends (at most 60 s).',
      headers,
      content: { 'application/json': { schema: json }, ...other },
    },
    304: { type: 'null', description: 'The answer named by If-None-Match is still current.', headers },
    ...keyedErrors(404, 406),
  };
}
const textContent = (description: string) => ({
  'text/plain': { schema: { type: 'string', description, examples: ['0.4781'] } },
});

/** json or text, from `format` or `Accept`. */
function textOrJson(request: FastifyRequest, format: 'json' | 'text' | undefined): 'json' | 'text' {
  if (format !== undefined) return format;
  if (request.headers.accept === undefined) return 'json';
  const best = new Negotiator(request).mediaType(['application/json', 'text/plain']);
  if (best === 'text/plain') return 'text';
  if (best === 'application/json') return 'json';
  throw new ApiError('not_acceptable', 'This endpoint answers application/json or text/plain.');
}

function unitJson(s: DeviceSeries): string {
  return `"currency":${JSON.stringify(s.currency)},"unit":${JSON.stringify(s.unit)}${
    s.tariff === undefined ? '' : `,"tariff":${JSON.stringify(s.tariff)}`
  }`;
}
const spanJson = (r: DeviceRate) => `"start":"${r.start}","end":"${r.end}"`;
const rateJson = (r: DeviceRate) => `{${spanJson(r)},"value":${r.value}}`;

export interface DeviceRouteDeps {
  readonly prices: PriceService;
  readonly keyGuard: KeyGuard;
  /** Where answers are finished (compressed, tagged); none is kept for a later request. */
  readonly answers: AnswerCache;
  readonly clock: () => number;
}

export function deviceRoutes(app: FastifyInstance, deps: DeviceRouteDeps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const devices = createDevicePrices({ prices: deps.prices, clock: deps.clock });

  /** Counted by the weight of the days read (docs/using-the-api.md "Rate limits"); one unit when refused. */
  function weighedBy(to: DayName) {
    return deps.keyGuard({
      weigh: async (request) => {
        try {
          const query = oneSymbol(parseReadQuery(request.query as Static<typeof NowQuerySchema>));
          return (await deps.prices.plan(request.caller!.tier, query, TODAY, to)).weight;
        } catch {
          return 1;
        }
      },
    });
  }

  /**
   * Sends `body`, reusable by the client until `until` (the end of the interval it describes), at
   * most SHORT_MAX_AGE: a revision of today's prices reaches a device within a minute.
   */
  function send(
    request: FastifyRequest,
    reply: FastifyReply,
    body: string,
    tagged: string,
    text: boolean,
    symbol: string,
    until: number,
  ) {
    const now = deps.clock();
    const left = Math.ceil((until - now) / 1_000);
    const type = text ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8';
    const answer = deps.answers.keep(
      undefined,
      {
        etag: entityTag(type, tagged),
        maxAge: Math.max(1, Math.min(SHORT_MAX_AGE, left)),
        type,
        body: Buffer.from(body),
        tags: [symbol],
        validUntil: now,
        route: request.routeOptions.url ?? 'unmatched',
      },
      now,
    );
    return sendAnswer(request, reply, deps.answers, answer);
  }

  const query = (raw: Static<typeof NowQuerySchema> | Static<typeof ForecastQuerySchema>): DayQuery =>
    parseReadQuery(raw);

  api.get(
    '/api/v1/prices/now',
    {
      onRequest: weighedBy(TODAY),
      schema: {
        operationId: 'getPriceNow',
        summary: 'The price now, for a device',
        description:
          'The price of one series in the interval holding now: a bare number with `format=text` (or `Accept: text/plain`), else a few bytes of JSON. With `tariff`, the total (docs/tariffs.md). 404 when no price is published for now. Takes the rate-limit units of reading today.',
        tags: ['devices'],
        querystring: NowQuerySchema,
        headers: ReadHeadersSchema,
        response: responses(NowAnswerSchema, textContent('The value alone, then a line feed.')),
      },
    },
    async (request, reply) => {
      const q = request.query;
      const format = textOrJson(request, q.format);
      const { series, rate } = await devices.now(request.caller!.tier, query(q));
      const json = `{"symbol":"${series.symbol}","price":${rate.value},${unitJson(series)},${spanJson(rate)}}`;
      const body = format === 'text' ? `${rate.value}\n` : json;
      return send(request, reply, body, body, format === 'text', series.symbol, rate.endMs);
    },
  );

  api.get(
    '/api/v1/prices/cheapest-now',
    {
      onRequest: weighedBy(TODAY),
      schema: {
        operationId: 'getCheapestNow',
        summary: 'Is now among the cheapest hours of today',
        description:
          "Whether the interval holding now is among the `hours` cheapest of today's published intervals of one series (in elapsed time, so DST days too; on totals with `tariff`; ties go to the earlier, as /prices/cheapest). `format=text` (or `Accept: text/plain`) answers `1` or `0`, for a relay. 404 when no price is published for now. Takes the rate-limit units of reading today.",
        tags: ['devices'],
        querystring: CheapNowQuerySchema,
        headers: ReadHeadersSchema,
        response: responses(
          CheapNowAnswerSchema,
          textContent('1 when now is cheap, else 0, then a line feed.'),
        ),
      },
    },
    async (request, reply) => {
      const q = request.query;
      const format = textOrJson(request, q.format);
      const hours = Number(q.hours);
      if (hours > 24) {
        throw new ApiError('invalid_parameter', 'The parameter "hours" is at most 24.', {
          extra: { parameter: 'hours' },
        });
      }
      const a = await devices.cheapNow(request.caller!.tier, query(q), hours);
      const json = `{"symbol":"${a.series.symbol}","cheap":${a.cheap},"hours":${a.hours},"intervals":${a.intervals},"date":"${a.date}","complete":${a.complete},"price":${a.rate.value},${unitJson(a.series)},${spanJson(a.rate)}}`;
      const body = format === 'text' ? (a.cheap ? '1\n' : '0\n') : json;
      return send(request, reply, body, body, format === 'text', a.series.symbol, a.rate.endMs);
    },
  );

  api.get(
    '/api/v1/prices/forecast',
    {
      onRequest: weighedBy(TOMORROW),
      schema: {
        operationId: 'getPriceForecast',
        summary: 'Prices from now to the end of tomorrow, for evcc, EMHASS and Home Assistant',
        description:
          "One series' prices from the interval holding now to the end of tomorrow, as far as published: `prices` as `{start, end, value}` (evcc's custom tariff reads exactly that list, `format=evcc`), `values` as a plain list per step (EMHASS's `load_cost_forecast`), and `price` now (a Home Assistant REST sensor's state, with `prices` as an attribute). With `tariff` each value is the total. `resolution=PT30M` or `PT1H` matches a tool's step. Takes the rate-limit units of reading today and tomorrow.",
        tags: ['devices'],
        querystring: ForecastQuerySchema,
        headers: ReadHeadersSchema,
        response: responses(
          Type.Union([
            ForecastAnswerSchema,
            Type.Array(RateSchema, {
              description: "With format=evcc: `prices` alone, per kWh, evcc's api.Rates.",
            }),
          ]),
          {},
        ),
      },
    },
    async (request, reply) => {
      const q = request.query;
      const accept = request.headers.accept;
      if (accept !== undefined && new Negotiator(request).mediaType(['application/json']) === undefined) {
        throw new ApiError('not_acceptable', 'This endpoint answers application/json.');
      }
      const evcc = q.format === 'evcc';
      if (evcc && q.unit !== undefined && q.unit !== 'kWh') {
        throw new ApiError(
          'invalid_parameter',
          'With format=evcc the prices are per kWh: leave "unit" out.',
          {
            extra: { parameter: 'unit' },
          },
        );
      }
      const asked = query(q);
      const read = evcc && q.tariff === undefined ? { ...asked, unit: 'kWh' as const } : asked;
      const { series, rates, current } = await devices.forecast(request.caller!.tier, read);
      if (evcc && series.unit !== 'kWh') {
        throw new ApiError(
          'invalid_parameter',
          `With format=evcc the prices are per kWh, and tariff ${series.tariff} is per ${series.unit}.`,
          { extra: { parameter: 'tariff' } },
        );
      }
      const list = `[${rates.map(rateJson).join(',')}]`;
      const head = `"symbol":"${series.symbol}",${unitJson(series)},"resolution":"${series.resolution}"`;
      const rest = `"price":${current?.value ?? 'null'},"prices":${list},"values":[${rates.map((r) => r.value).join(',')}]`;
      const body = evcc ? list : `{"generatedAt":"${new Date(deps.clock()).toISOString()}",${head},${rest}}`;
      // Until the interval holding now ends the list starts with it; with none, a short while.
      const until = current?.endMs ?? deps.clock() + SHORT_MAX_AGE * 1_000;
      return send(request, reply, body, evcc ? list : `${head}${rest}`, false, series.symbol, until);
    },
  );
}
