/**
 * `PUT /api/v1/series/{symbol}` (docs/api.md): create or update a series' metadata, for keys
 * with the `admin` scope. Thin: the schema checks only shapes; the series service (the same one the
 * CLI uses) checks every value and names each bad field.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { RESOLUTIONS } from '../../domain/time/days.js';
import type { SeriesService } from '../../services/series-service.js';
import { jsonAnswer, keyedErrors, RATE_LIMIT_HEADERS } from '../contract/schemas.js';
import type { KeyGuard } from '../pipeline/admit.js';

// Every field optional here: a new series needs all of them, an existing one keeps what is left out,
// and the service says which are missing by name (a schema `required` error would not).
const SeriesBody = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 1000, description: 'Human name, 1 to 200 characters.' })),
    kind: Type.Optional(
      Type.String({ maxLength: 100, description: 'Lower-case category, e.g. electricity.' }),
    ),
    currency: Type.Optional(
      Type.String({ maxLength: 100, description: 'ISO 4217 code (EUR) or a crypto code (BTC).' }),
    ),
    unit: Type.Optional(Type.String({ maxLength: 100, description: 'What one price buys: MWh, share, ...' })),
    timezone: Type.Optional(Type.String({ maxLength: 100, description: 'IANA zone, e.g. Europe/Oslo.' })),
    resolution: Type.Optional(
      Type.String({ maxLength: 100, description: `One of ${Object.keys(RESOLUTIONS).join(', ')}.` }),
    ),
  },
  { additionalProperties: false },
);

export const SeriesViewSchema = Type.Object({
  symbol: Type.String(),
  name: Type.String(),
  kind: Type.String(),
  currency: Type.String(),
  unit: Type.String(),
  timezone: Type.String(),
  resolution: Type.String(),
  coverage: Type.Union([
    Type.Object({
      first: Type.String({ description: 'First local date with prices, YYYY-MM-DD.' }),
      last: Type.String({ description: 'Last local date with prices, YYYY-MM-DD.' }),
    }),
    Type.Null(),
  ]),
});

const SymbolParams = Type.Object(
  { symbol: Type.String({ maxLength: 100 }) },
  { additionalProperties: false },
);
const NoQuery = Type.Object({}, { additionalProperties: false });

export function seriesAdminRoutes(
  app: FastifyInstance,
  deps: { series: SeriesService; keyGuard: KeyGuard },
): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  api.put(
    '/api/v1/series/:symbol',
    {
      onRequest: deps.keyGuard({ scope: 'admin' }),
      config: { audit: { action: 'series.upsert', target: (r) => (r.params as { symbol: string }).symbol } },
      schema: {
        operationId: 'upsertSeries',
        summary: 'Create or update a series',
        description:
          'A new series needs every field; an existing one keeps the fields left out. Every bad field is named in the 400.',
        tags: ['writes'],
        params: SymbolParams,
        querystring: NoQuery,
        body: SeriesBody,
        response: {
          200: jsonAnswer('The series was updated.', SeriesViewSchema, RATE_LIMIT_HEADERS),
          201: jsonAnswer('The series was created.', SeriesViewSchema, RATE_LIMIT_HEADERS),
          ...keyedErrors(413, 415),
        },
      },
    },
    async (request, reply) => {
      const { outcome, series } = await deps.series.upsert(request.params.symbol, request.body);
      return reply.code(outcome === 'created' ? 201 : 200).send(series);
    },
  );
}
