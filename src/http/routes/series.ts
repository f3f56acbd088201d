/**
 * The catalogue (docs/api.md): `GET /api/v1/series` and `GET /api/v1/series/{symbol}`, each
 * series the key may read with its metadata and coverage, as JSON or CSV, cacheable like the days.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors/api-error.js';
import { normaliseSymbol } from '../../domain/series/series-rules.js';
import type { CatalogueEntry, PriceService } from '../../services/price-service.js';
import {
  answerFormat,
  parseReadQuery,
  ReadHeadersSchema,
  ReadQueryFields,
  SeriesMetaFields,
  TermsFields,
} from '../contract/read-query.js';
import { CACHE_HEADERS, keyedErrors, RATE_LIMIT_HEADERS, REQUEST_ID_HEADER } from '../contract/schemas.js';
import type { KeyGuard } from '../pipeline/admit.js';
import { csvAttachment, entityTag, SHORT_MAX_AGE, sendCacheable } from '../pipeline/answer.js';
import { csvField } from '../render/day-answer.js';

/**
 * One series of the catalogue. Registered once by its `$id` (app.ts) and referenced by both
 * catalogue reads: one named schema in the OpenAPI document.
 */
export const SeriesInfoSchema = Type.Object(
  {
    ...SeriesMetaFields,
    coverage: Type.Union([
      Type.Object({
        first: Type.String({ format: 'date', description: 'First local date with prices.' }),
        last: Type.String({ format: 'date', description: 'Last local date with prices.' }),
      }),
      Type.Null(),
    ]),
    ...TermsFields,
  },
  { $id: 'SeriesInfo' },
);
const SeriesInfoRef = Type.Ref(SeriesInfoSchema);
const CatalogueSchema = Type.Object({ series: Type.Array(SeriesInfoRef) });

const CSV_HEADER = 'symbol,name,kind,currency,unit,timezone,resolution,first,last,license,attribution';

function catalogueCsv(series: readonly CatalogueEntry[]): string {
  const rows = series.map((s) =>
    [s.symbol, s.name, s.kind, s.currency, s.unit, s.timezone, s.resolution]
      .map(csvField)
      .concat(s.coverage ? [s.coverage.first, s.coverage.last] : ['', ''])
      .concat([csvField(s.license ?? ''), csvField(s.attribution ?? '')])
      .join(','),
  );
  return `${[CSV_HEADER, ...rows].join('\r\n')}\r\n`;
}

function catalogueResponses(description: string, schema: typeof CatalogueSchema | typeof SeriesInfoRef) {
  const headers = { ...CACHE_HEADERS, ...RATE_LIMIT_HEADERS, ...REQUEST_ID_HEADER };
  return {
    200: {
      description,
      headers,
      content: {
        'application/json': { schema },
        'text/csv': {
          schema: { type: 'string', description: `Header row ${CSV_HEADER}, then one row per series.` },
        },
      },
    },
    304: { type: 'null', description: 'The answer named by If-None-Match is still current.', headers },
    ...keyedErrors(404, 406),
  };
}

function sendCatalogue(
  request: FastifyRequest,
  reply: FastifyReply,
  format: 'json' | 'csv',
  json: () => string,
  series: readonly CatalogueEntry[],
  name = 'series',
): FastifyReply {
  const body = format === 'csv' ? catalogueCsv(series) : json();
  return sendCacheable(request, reply, {
    etag: entityTag(format, body),
    maxAge: SHORT_MAX_AGE,
    type: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
    ...(format === 'csv' && { disposition: csvAttachment(name) }),
    body: () => body,
  });
}

const { symbols: _symbols, ...OneSeriesFields } = ReadQueryFields;

export function seriesRoutes(app: FastifyInstance, deps: { prices: PriceService; keyGuard: KeyGuard }): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.get(
    '/api/v1/series',
    {
      onRequest: deps.keyGuard(),
      schema: {
        operationId: 'listSeries',
        summary: 'The catalogue',
        description:
          'Every series the key may read (or `symbols`), with its metadata and the first and last local date it has prices for, in its zone or `tz`. With `resolution`, each series shows the resolution it would be served at.',
        tags: ['series'],
        querystring: Type.Object(ReadQueryFields, { additionalProperties: false }),
        headers: ReadHeadersSchema,
        response: catalogueResponses('The series.', CatalogueSchema),
      },
    },
    async (request, reply) => {
      const format = answerFormat(request, request.query.format);
      const series = await deps.prices.catalogue(request.caller!.tier, parseReadQuery(request.query));
      return sendCatalogue(request, reply, format, () => JSON.stringify({ series }), series);
    },
  );

  api.get(
    '/api/v1/series/:symbol',
    {
      onRequest: deps.keyGuard(),
      schema: {
        operationId: 'getSeries',
        summary: 'One series',
        description: 'One series with its metadata and coverage, as in the catalogue.',
        tags: ['series'],
        params: Type.Object(
          { symbol: Type.String({ maxLength: 100, description: 'The symbol, in any letter case.' }) },
          { additionalProperties: false },
        ),
        querystring: Type.Object(OneSeriesFields, { additionalProperties: false }),
        headers: ReadHeadersSchema,
        response: catalogueResponses('The series.', SeriesInfoRef),
      },
    },
    async (request, reply) => {
      const format = answerFormat(request, request.query.format);
      const symbol = normaliseSymbol(request.params.symbol);
      if (symbol === undefined) {
        throw new ApiError('unknown_series', `Unknown series: ${request.params.symbol.slice(0, 40)}.`, {
          extra: { symbols: [request.params.symbol.slice(0, 40)] },
        });
      }
      const [one] = await deps.prices.catalogue(request.caller!.tier, {
        ...parseReadQuery(request.query),
        symbols: [symbol],
      });
      const name = `series-${symbol}`;
      return sendCatalogue(request, reply, format, () => JSON.stringify(one), one ? [one] : [], name);
    },
  );
}
