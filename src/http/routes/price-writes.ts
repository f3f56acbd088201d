/**
 * `PUT /api/v1/series/{symbol}/prices` (docs/operating.md "Importing prices"): upsert the points of one series from a JSON or CSV
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
import { jsonAnswer, keyedErrors, RATE_LIMIT_HEADERS } from '../contract/schemas.js';
import type { KeyGuard } from '../pipeline/admit.js';

const WrittenSchema = Type.Object({
  symbol: Type.String(),
  written: Type.Integer({ description: 'Points inserted or replaced.' }),
});

/** One point of an upload: the columns of docs/operating.md "Importing prices"; `start` and `price` needed. */
const UploadPointSchema = Type.Object(
  {
    start: Type.String({ format: 'date-time', description: 'RFC 3339, with the offset in force then.' }),
    price: Type.Number({ description: 'Kept exactly as written: 41.270 stays 41.270.' }),
    end: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          "When given, must be where the series' own interval from `start` ends (elapsed time): a point of another resolution is refused.",
      }),
    ),
    symbol: Type.Optional(Type.String({ description: 'When given, must be this series.' })),
    date: Type.Optional(Type.String({ format: 'date' })),
    currency: Type.Optional(Type.String({ description: 'When given, must be the series currency.' })),
    unit: Type.Optional(Type.String({ description: 'When given, must be the series unit.' })),
  },
  { additionalProperties: false, examples: [{ start: '2026-11-22T00:00:00+01:00', price: 41.27 }] },
);
const UploadPointsSchema = Type.Array(UploadPointSchema);

/**
 * `application/json`: any of the document shapes the reader takes, so a generated client sends the
 * value it is given as one JSON document (docs/operating.md "Importing prices"). Several such values one after
 * the other are also read, but no schema can say so: that is in the description.
 */
const UploadDocumentSchema = Type.Union(
  [
    UploadPointsSchema,
    Type.Object({ prices: UploadPointsSchema }, { additionalProperties: false }),
    Type.Object(
      {
        series: Type.Array(
          Type.Object(
            {
              symbol: Type.String({ description: 'Must be this series.' }),
              resolution: Type.Optional(
                Type.String({ description: "When given, must be the series' own: its points are of it." }),
              ),
              prices: UploadPointsSchema,
            },
            { additionalProperties: true, description: 'The other metadata of the read answer is ignored.' },
          ),
        ),
      },
      { additionalProperties: true, description: 'The read answer, sent back as it came.' },
    ),
    UploadPointSchema,
  ],
  {
    description:
      'Any JSON document, however formatted: an array of points, {"prices": [...]}, the read answer {"series": [{"symbol", "prices": [...]}]} (its symbol must be this series), or one point; several of these one after the other are read as well. A bad point is named by its path ([2], series[0].prices[2]) and line.',
  },
);

const JSON_LINES_BODY = {
  schema: {
    type: 'string',
    description: 'JSON Lines: one point per line.',
    examples: [
      '{"start":"2026-11-22T00:00:00+01:00","price":41.27}\n{"start":"2026-11-22T01:00:00+01:00","price":40.98}\n',
    ],
  },
};

/**
 * The body as documented. The route takes the raw stream (its parser hands it over untouched), so
 * this schema is shown in the OpenAPI document only, through `swaggerTransform`, never validated.
 */
const PricesBodyDoc = {
  description:
    'All or nothing: one bad row and nothing is written. Each point lies on the series grid; `symbol`, `currency` and `unit`, when given, must match the series.',
  content: {
    'application/json': { schema: UploadDocumentSchema },
    'application/x-ndjson': JSON_LINES_BODY,
    'application/jsonl': JSON_LINES_BODY,
    'text/csv': {
      schema: {
        type: 'string',
        description:
          'A header row naming the columns (start and price needed; symbol, date, end, currency, unit optional), then one point per row. The CSV the read endpoints serve imports as is into a series of its resolution.',
        examples: ['start,price\n2026-11-22T00:00:00+01:00,41.27\n2026-11-22T01:00:00+01:00,40.98\n'],
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

/** The media types a price upload takes, and the format each is read as. */
const BODY_FORMATS: Readonly<Record<string, ImportFormat>> = {
  'application/json': 'json',
  'application/x-ndjson': 'jsonl',
  'application/jsonl': 'jsonl',
  'text/csv': 'csv',
};

function formatOf(contentType: string | undefined): ImportFormat {
  const media = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const format = BODY_FORMATS[media];
  if (format !== undefined) return format;
  throw new ApiError(
    'unsupported_media_type',
    `Send the prices as ${Object.keys(BODY_FORMATS).join(', ')}; ${media === '' ? 'the request names no media type' : `not ${media.slice(0, 60)}`}.`,
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
    child.addContentTypeParser(Object.keys(BODY_FORMATS), (_request, payload, done) => done(null, payload));
    // An answer given before the whole body arrived (a 413, a CSV record past its limit) closes the
    // connection: the rest of the body is never read, and a connection with it unread is of no use.
    child.addHook('onSend', async (request, reply, payload) => {
      if (request.raw.complete === false) reply.header('connection', 'close');
      return payload;
    });
    child.withTypeProvider<TypeBoxTypeProvider>().put(
      '/api/v1/series/:symbol/prices',
      {
        onRequest: deps.keyGuard({ scope: 'write' }),
        schema: {
          operationId: 'uploadPrices',
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
          audit: { action: 'prices.write', target: (r) => (r.params as { symbol: string }).symbol },
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
        const result = await deps.imports.run(readRows(limited(body), format, false, symbol), {
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
