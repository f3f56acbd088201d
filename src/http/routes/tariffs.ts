/**
 * `GET /api/v1/tariffs` (docs/tariffs.md): the tariffs the operator configured, which `tariff=` on the
 * read endpoints names. Read with any key, counted as one request like the catalogue; the list
 * changes only with the config, so it is cacheable like the catalogue.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { WEEKDAYS } from '../../domain/money/tariff.js';
import { type Tariffs, tariffViews } from '../../services/tariffs.js';
import { ReadHeadersSchema, stringEnum } from '../contract/read-query.js';
import { CACHE_HEADERS, keyedErrors, RATE_LIMIT_HEADERS, REQUEST_ID_HEADER } from '../contract/schemas.js';
import type { KeyGuard } from '../pipeline/admit.js';
import { entityTag, SHORT_MAX_AGE, sendCacheable } from '../pipeline/answer.js';

const from = Type.String({ format: 'date', description: 'First local date the version applies on.' });

/** One tariff as listed. Registered once by its `$id` (app.ts): one named schema in the document. */
export const TariffSchema = Type.Object(
  {
    name: Type.String({ description: 'What tariff= takes.', examples: ['no1-household'] }),
    description: Type.Union([Type.String(), Type.Null()]),
    currency: Type.String({ examples: ['NOK'] }),
    unit: stringEnum(['Wh', 'kWh', 'MWh'], 'The energy unit every amount and answer is per.'),
    timezone: Type.Union([Type.String(), Type.Null()], {
      description: "Whose local time the fees follow; null: each series' own zone.",
      examples: ['Europe/Oslo'],
    }),
    vat: Type.Array(Type.Object({ from, percent: Type.Number({ examples: [25] }) }), {
      description: 'VAT in percent of spot plus fees, by valid-from date, oldest first.',
    }),
    fixed: Type.Array(Type.Object({ from, amount: Type.Number({ examples: [0.0713] }) }), {
      description: 'Fixed amounts per unit (taxes, margins), by valid-from date.',
    }),
    fees: Type.Array(
      Type.Object({
        from,
        rules: Type.Array(
          Type.Object({
            amount: Type.Number({ examples: [0.364] }),
            hours: Type.Optional(
              Type.String({
                description: 'Local time HH:MM-HH:MM, end exclusive; over midnight when the end is earlier.',
                examples: ['06:00-22:00'],
              }),
            ),
            weekdays: Type.Optional(Type.Array(stringEnum(WEEKDAYS, 'A day of the week.'))),
            months: Type.Optional(Type.Array(Type.Integer({ minimum: 1, maximum: 12 }))),
          }),
          { description: 'The first rule that holds at the local start of an interval applies; none: 0.' },
        ),
      }),
      { description: 'Time-of-use grid fees per unit, by valid-from date.' },
    ),
  },
  { $id: 'Tariff' },
);

const TariffListSchema = Type.Object({ tariffs: Type.Array(Type.Ref(TariffSchema)) });

/** Marks a decimal text so that it is written as the JSON number it spells, digit for digit. */
const NUMBER_MARK = '\u0000number:';

/** The list as JSON, every amount and percent the number it was configured as (`0.3640` stays exact). */
function listJson(tariffs: Tariffs): string {
  const numeric = new Set(['percent', 'amount']);
  const json = JSON.stringify({ tariffs: tariffViews(tariffs) }, (key, value) =>
    numeric.has(key) && typeof value === 'string' ? `${NUMBER_MARK}${value}` : value,
  );
  return json.replace(/"\\u0000number:(-?[0-9.]+)"/g, '$1');
}

export function tariffRoutes(app: FastifyInstance, deps: { tariffs: Tariffs; keyGuard: KeyGuard }): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  // Built once: the tariffs are the config's, fixed while the server runs.
  const body = listJson(deps.tariffs);
  const etag = entityTag('json', body);
  const headers = { ...CACHE_HEADERS, ...RATE_LIMIT_HEADERS, ...REQUEST_ID_HEADER };

  api.get(
    '/api/v1/tariffs',
    {
      onRequest: deps.keyGuard(),
      schema: {
        operationId: 'listTariffs',
        summary: 'The tariffs',
        description:
          'The tariffs this server was configured with, which `tariff` on the price endpoints names: VAT, fixed amounts and time-of-use fees, each by valid-from date (docs/tariffs.md). Counted as one request.',
        tags: ['prices'],
        querystring: Type.Object({}, { additionalProperties: false }),
        headers: ReadHeadersSchema,
        response: {
          200: {
            description: 'Every tariff, by name.',
            headers,
            content: { 'application/json': { schema: TariffListSchema } },
          },
          304: { type: 'null', description: 'The answer named by If-None-Match is still current.', headers },
          ...keyedErrors(),
        },
      },
    },
    async (request, reply) =>
      sendCacheable(request, reply, {
        etag,
        maxAge: SHORT_MAX_AGE,
        type: 'application/json; charset=utf-8',
        body: () => body,
      }),
  );
}
