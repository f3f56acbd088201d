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
        schema: { params: Type.Object({ symbol: Type.String() }) },
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
