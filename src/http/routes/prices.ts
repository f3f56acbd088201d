/** The price read endpoints (DESIGN section 2). Thin: parse, ask the price service, render. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Negotiator from 'negotiator';
import { ApiError } from '../../domain/errors/api-error.js';
import { normaliseSymbol } from '../../domain/series/series-rules.js';
import { canonicalTimeZone } from '../../domain/time/zone.js';
import type { DayAnswer, DayQuery, PriceService } from '../../services/price-service.js';
import type { KeyGuard } from '../key-guard.js';
import { renderDayCsv, renderDayJson } from '../render/day-answer.js';

const MAX_SYMBOLS = 100;

export const DayQuerySchema = Type.Object(
  {
    symbols: Type.Optional(
      Type.String({ description: 'Comma-separated series symbols (case-insensitive), at most 100.' }),
    ),
    tz: Type.Optional(
      Type.String({ description: 'IANA time zone whose calendar day is meant, e.g. Europe/Oslo.' }),
    ),
    format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')])),
  },
  { additionalProperties: false },
);

/** Parses `symbols` and `tz` into a service query, naming the parameter that is wrong. */
export function dayQuery(raw: { symbols?: string; tz?: string }): DayQuery {
  let symbols: string[] | undefined;
  if (raw.symbols !== undefined) {
    symbols = [...new Set(raw.symbols.split(',').map((s) => s.trim().toUpperCase()))];
    const bad = symbols.find((s) => normaliseSymbol(s) === undefined);
    if (bad !== undefined || symbols.length > MAX_SYMBOLS) {
      throw new ApiError(
        'invalid_parameter',
        bad !== undefined
          ? `The parameter "symbols" holds "${bad === '' ? '(empty)' : bad}", which is not a symbol (letters, digits, . _ -, at most 32).`
          : `The parameter "symbols" names more than ${MAX_SYMBOLS} series.`,
        { extra: { parameter: 'symbols' } },
      );
    }
  }
  let tz: string | undefined;
  if (raw.tz !== undefined) {
    tz = canonicalTimeZone(raw.tz);
    if (tz === undefined) {
      throw new ApiError(
        'invalid_parameter',
        'The parameter "tz" must be an IANA time zone such as Europe/Oslo.',
        {
          extra: { parameter: 'tz' },
        },
      );
    }
  }
  return { ...(symbols && { symbols }), ...(tz && { tz }) };
}

const MEDIA = { json: 'application/json', csv: 'text/csv' } as const;

/** `format` wins; otherwise the Accept header decides, and JSON is the default. */
export function answerFormat(request: FastifyRequest, format: 'json' | 'csv' | undefined): 'json' | 'csv' {
  if (format !== undefined) return format;
  if (request.headers.accept === undefined) return 'json';
  const best = new Negotiator(request).mediaType([MEDIA.json, MEDIA.csv]);
  if (best === MEDIA.csv) return 'csv';
  if (best === MEDIA.json) return 'json';
  throw new ApiError('not_acceptable', 'This endpoint answers application/json or text/csv.');
}

export function sendDay(reply: FastifyReply, answer: DayAnswer, format: 'json' | 'csv'): FastifyReply {
  reply.header('cache-control', 'private, max-age=60').header('vary', 'accept, accept-encoding');
  if (format === 'csv') return reply.type('text/csv; charset=utf-8').send(renderDayCsv(answer));
  return reply.type('application/json; charset=utf-8').send(renderDayJson(answer));
}

export function priceRoutes(app: FastifyInstance, deps: { prices: PriceService; keyGuard: KeyGuard }): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  api.get(
    '/api/v1/prices/today',
    { onRequest: deps.keyGuard(), schema: { querystring: DayQuerySchema } },
    async (request, reply) => {
      const format = answerFormat(request, request.query.format);
      const caller = request.caller!;
      const answer = await deps.prices.relativeDay(caller.tier, dayQuery(request.query), 0);
      return sendDay(reply, answer, format);
    },
  );
}
