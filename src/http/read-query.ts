/**
 * The query parameters every read endpoint shares (DESIGN section 2): `symbols`, `tz`, `format` and
 * `resolution`, as one schema (validation and OpenAPI) and one parser into a service query.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import Negotiator from 'negotiator';
import { ApiError } from '../domain/errors/api-error.js';
import { normaliseSymbol } from '../domain/series/series-rules.js';
import { RESOLUTIONS, type Resolution } from '../domain/time/days.js';
import { canonicalTimeZone } from '../domain/time/zone.js';
import type { DayQuery } from '../services/price-service.js';

const MAX_SYMBOLS = 100;

const resolutionSchema = (description: string) =>
  Type.Union(
    (Object.keys(RESOLUTIONS) as Resolution[]).map((r) => Type.Literal(r)),
    { description },
  );

export const ReadQueryFields = {
  symbols: Type.Optional(
    Type.String({
      description:
        'Comma-separated series symbols (case-insensitive), at most 100. Default: every series the key may read.',
      examples: ['NO1,DE-LU'],
    }),
  ),
  tz: Type.Optional(
    Type.String({
      description:
        "IANA time zone whose calendar day is meant for every series, e.g. Europe/Oslo. Default: each series' own zone.",
    }),
  ),
  format: Type.Optional(
    Type.Union([Type.Literal('json'), Type.Literal('csv')], {
      description: 'json (default) or csv; Accept: text/csv works the same.',
    }),
  ),
  resolution: Type.Optional(
    resolutionSchema(
      'Coarser output: the mean of the finer intervals (PT1H from PT15M, P1D from anything). Series already as coarse are served as they are.',
    ),
  ),
};

/** The metadata of a series as every read answer writes it. */
export const SeriesMetaFields = {
  symbol: Type.String({ examples: ['NO1'] }),
  name: Type.String(),
  kind: Type.String({ description: 'electricity, fx, crypto, commodity, equity, ...' }),
  currency: Type.String({ description: 'ISO 4217 or crypto code the prices are quoted in.' }),
  unit: Type.String({ description: 'What one price buys: MWh, troy_oz, share, ...' }),
  timezone: Type.String({ description: "IANA zone of the series' market day." }),
  resolution: resolutionSchema('ISO 8601 duration of one interval, as served.'),
};

/** Parses `symbols`, `tz` and `resolution` into a service query, naming the parameter that is wrong. */
export function parseReadQuery(raw: { symbols?: string; tz?: string; resolution?: Resolution }): DayQuery {
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
  return {
    ...(symbols && { symbols }),
    ...(tz && { tz }),
    ...(raw.resolution && { resolution: raw.resolution }),
  };
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
