/**
 * `PUT /api/v1/series/{symbol}/prices` (issue 3): upsert the points of one series from a JSON or CSV
 * body, all or nothing. The body is streamed into the import, never buffered whole, and limited to
 * 16 MiB: larger loads go through `pricepoint import`.
 */
import { type Readable, Transform } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors/api-error.js';
import { normaliseSymbol } from '../../domain/series/series-rules.js';
import { type ImportFormat, readRows } from '../../services/import-formats.js';
import type { ImportService } from '../../services/import-service.js';
import type { PriceStore } from '../../stores/types.js';
import type { KeyGuard } from '../key-guard.js';
import { jsonAnswer, keyedErrors, RATE_LIMIT_HEADERS } from '../schemas.js';

const WrittenSchema = Type.Object({
  symbol: Type.String(),
  written: Type.Integer({ description: 'Points inserted or replaced.' }),
});

/**
 * The body as documented. The route takes the raw stream (its parser hands it over untouched), so
 * this schema is shown in the OpenAPI document only, through `swaggerTransform`, never validated.
 */
const PricesBodyDoc = {
  description:
    'All or nothing: one bad row and nothing is written. Each point lies on the series grid; `symbol`, `currency` and `unit`, when given, must match the series.',
  content: {
    'application/json': {
      schema: {
        type: 'string',
        description:
          'JSON Lines: one point per line, e.g. {"start":"2026-11-22T00:00:00+01:00","price":41.27}. The lines may be wrapped in [ and ] with commas.',
      },
    },
    'text/csv': {
      schema: {
        type: 'string',
        description:
          'A header row naming the columns (start and price needed; symbol, date, end, currency, unit optional), then one point per row. The CSV the read endpoints serve imports as is.',
      },
    },
  },
};

export const PRICE_BODY_LIMIT = 16 * 1024 * 1024;

function tooLarge(): ApiError {
  return new ApiError(
    'payload_too_large',
    `The body is larger than ${PRICE_BODY_LIMIT} bytes; import larger files with "pricepoint import".`,
  );
}

/** Passes the body through and fails it as soon as it grows past the limit. */
function limited(body: Readable): Readable {
  let seen = 0;
  const limit = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      done(seen > PRICE_BODY_LIMIT ? tooLarge() : null, chunk);
    },
  });
  body.once('error', (error) => limit.destroy(error));
  return body.pipe(limit);
}

function formatOf(contentType: string | undefined): ImportFormat {
  const media = (contentType ?? '').split(';')[0]?.trim().toLowerCase();
  if (media === 'text/csv') return 'csv';
  if (media === 'application/json') return 'json';
  throw new ApiError(
    'unsupported_media_type',
    'Send the prices as application/json (one point per line) or text/csv.',
  );
}

export function priceWriteRoutes(
  app: FastifyInstance,
  deps: { prices: PriceStore; imports: ImportService; keyGuard: KeyGuard },
): void {
  // A child context, so that its body parsers (the raw stream for exactly these two media types,
  // nothing for any other) apply to this route only.
  app.register(async (child) => {
    child.removeAllContentTypeParsers();
    child.addContentTypeParser(['application/json', 'text/csv'], (_request, payload, done) =>
      done(null, payload),
    );
    child.withTypeProvider<TypeBoxTypeProvider>().put(
      '/api/v1/series/:symbol/prices',
      {
        onRequest: deps.keyGuard({ scope: 'write' }),
        schema: {
          summary: 'Upsert prices of a series',
          description: `JSON or CSV, streamed, at most ${PRICE_BODY_LIMIT} bytes; larger loads go through \`pricepoint import\`. A 422 names every bad row with its line.`,
          tags: ['writes'],
          params: Type.Object({ symbol: Type.String() }),
          response: {
            200: jsonAnswer('Every point was written.', WrittenSchema, RATE_LIMIT_HEADERS),
            ...keyedErrors(404, 413, 415, 422),
          },
        },
        config: {
          swaggerTransform: ({ schema, url }) => ({ url, schema: { ...schema, body: PricesBodyDoc } }),
        },
      },
      async (request, reply) => {
        const format = formatOf(request.headers['content-type']);
        if (Number(request.headers['content-length'] ?? 0) > PRICE_BODY_LIMIT) throw tooLarge();
        const symbol = request.params.symbol.toUpperCase();
        const series = normaliseSymbol(symbol) ? await deps.prices.getSeries(symbol) : undefined;
        if (series === undefined) {
          throw new ApiError('unknown_series', `Unknown series: ${symbol}.`, {
            extra: { symbols: [symbol] },
          });
        }
        const body = request.body as Readable | undefined;
        if (body === undefined) throw new ApiError('unsupported_media_type', 'The request has no body.');
        const result = await deps.imports.run(readRows(limited(body), format, false), {
          symbol,
          small: true,
        });
        if (!result.ok) {
          throw new ApiError(
            'invalid_prices',
            `${result.errorCount} row${result.errorCount === 1 ? ' is' : 's are'} bad; nothing was written.`,
            { extra: { errorCount: result.errorCount, errors: result.errors } },
          );
        }
        return reply.code(200).send({ symbol, written: result.written });
      },
    );
  });
}
