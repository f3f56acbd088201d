/**
 * The query parameters every read endpoint shares (docs/api.md): `symbols`, `tz`, `format` and
 * `resolution` (the price endpoints also `currency` and `unit`), as one schema (validation and OpenAPI) and one parser into a service query.
 */
import { type TUnsafe, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest, preValidationHookHandler } from 'fastify';
import Negotiator from 'negotiator';
import { ApiError } from '../../domain/errors/api-error.js';
import { ENERGY_UNITS, type EnergyUnit } from '../../domain/money/exact.js';
import { normaliseSymbol } from '../../domain/series/series-rules.js';
import { RESOLUTIONS, type Resolution } from '../../domain/time/days.js';
import { timeZoneId } from '../../domain/time/zone.js';
import type { DayQuery } from '../../services/price-service.js';

const MAX_SYMBOLS = 100;

/**
 * One of a few strings, as a plain `enum`. Not a union of literals: Ajv reports a bad value of such a
 * union as "must be equal to constant", an `enum` with its allowed values, which the error handler
 * names in the 400 ("must be one of json, csv").
 * @example stringEnum(['json', 'csv'], 'The format.')
 */
export function stringEnum<const T extends readonly string[]>(values: T, description: string) {
  // `Unsafe` types the value for TypeBox; `enum` in the type is what the Fastify type provider
  // (TypeBox 1, which infers from the shape of a schema) reads, so handlers see the union too.
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], description }) as TUnsafe<T[number]> & {
    readonly enum: T;
  };
}

const resolutionSchema = (description: string) =>
  stringEnum(Object.keys(RESOLUTIONS) as Resolution[], description);

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
    stringEnum(['json', 'csv'], 'json (default) or csv; Accept: text/csv works the same.'),
  ),
  resolution: Type.Optional(
    resolutionSchema(
      "Coarser output: each interval the exact mean of the series' own intervals inside it (PT1H from PT15M, P1D from anything). Series already as coarse are served as they are. Refused (400, parameter resolution) where, in the zone read in (`tz`), an interval would begin inside one of a series' intervals: Asia/Kolkata half hours read with tz=Asia/Kathmandu at PT1H.",
    ),
  ),
};

/** `currency` and `unit`, which the price endpoints take besides `ReadQueryFields`. */
export const ConversionFields = {
  currency: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9]{2,10}$',
      description:
        'Prices converted into this currency (case-insensitive), e.g. NOK, with the FX series the operator configured for each pair, at the newest rate published by each interval\'s start; each converted entry names its rate in `fx` (docs/data-model.md, "Converted prices"). 400 (parameter currency) when a series\' pair has no FX series.',
      // No `examples`: the reference page fills a parameter's example into "Try it out", and a
      // server without an FX series for the pair answers that with 400.
    }),
  ),
  unit: Type.Optional(
    stringEnum(
      Object.keys(ENERGY_UNITS) as EnergyUnit[],
      'Energy prices per this unit, exactly (per kWh is a thousandth of per MWh). 400 (parameter unit) for a series not priced per energy unit.',
    ),
  ),
};

/** `tariff`, which the day endpoints take besides `ConversionFields` (docs/tariffs.md). */
export const TariffField = {
  tariff: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z][A-Za-z0-9_-]{0,31}$',
      description:
        "A tariff of this server (GET /api/v1/tariffs; case-insensitive): each interval also has `total` and its parts `spot`, `fees` and `vat`, in the tariff's currency and per its unit, fees by the local time of the interval's start (docs/tariffs.md). 400 (parameter tariff) for a name the server has no tariff of, or a series not priced per energy unit.",
      // No `examples`: a server has only the tariffs its operator configured.
    }),
  ),
};

/** What `include` may name, comma-separated (`include=provenance,rank`). */
export const INCLUDES = ['provenance', 'rank'] as const;
export type Include = (typeof INCLUDES)[number];

/** `include`: extra fields of the day endpoints, several separated by commas. */
export const IncludeField = {
  include: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z]+(,[A-Za-z]+)*$',
      description:
        'Comma-separated, any letter case: provenance (CSV rows also carry complete and source; JSON answers always do), rank (each interval also has rank, 1 = cheapest of its day, and level against the 7 days before; docs/tariffs.md).',
      examples: ['provenance,rank'],
    }),
  ),
};

/**
 * The values of `include`, each once; an unknown one is a 400 naming the parameter.
 * @example parseInclude('Rank,provenance') // Set { 'rank', 'provenance' }
 */
export function parseInclude(raw: string | undefined): ReadonlySet<Include> {
  const values = new Set<Include>();
  for (const value of raw === undefined ? [] : raw.split(',')) {
    const known = INCLUDES.find((v) => v === value.toLowerCase());
    if (known === undefined) {
      throw new ApiError(
        'invalid_parameter',
        `The parameter "include" holds "${value}"; it takes ${INCLUDES.join(', ')}, separated by commas.`,
        { extra: { parameter: 'include' } },
      );
    }
    values.add(known);
  }
  return values;
}

/**
 * The request headers the read endpoints honour besides the key, for a route's `schema.headers`, so
 * that the document lists them as header parameters. Any other header stays allowed: the key
 * travels in one, documented by the security schemes and never as a parameter with an example.
 * `Accept` is not listed: OpenAPI ignores a header parameter of that name. The media types of the
 * 200 answer document it, and swagger-ui sends it from its response content type selector.
 */
export const ReadHeadersSchema = Type.Object({
  'if-none-match': Type.Optional(
    Type.String({
      description:
        'The ETag of an earlier answer: 304 without a body while that answer is still current. `*` matches any.',
    }),
  ),
});

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

/**
 * The licence and attribution of the upstream a source fetched the data from (docs/sources.md
 * "Terms of each upstream"); null for data no source wrote (uploads, imports), docs/decisions.md.
 */
export const TermsFields = {
  license: Type.Union([Type.String(), Type.Null()], {
    description:
      'The licence of the upstream the source fetched from: an SPDX id (CC-BY-4.0) or the name of its terms, "not stated" where it states none; null for imported or uploaded data.',
    examples: ['CC-BY-4.0'],
  }),
  attribution: Type.Union([Type.String(), Type.Null()], {
    description:
      'The credit that upstream asks for beside its data, to show wherever the data is shown ("not stated" where it asks none); null for imported or uploaded data.',
    examples: ['Source: Energinet (www.energidataservice.dk)'],
  }),
};

/**
 * Parses `symbols`, `tz`, `resolution`, `currency`, `unit`, `tariff` and `include` into a service
 * query, naming the parameter that is wrong.
 */
export function parseReadQuery(raw: {
  symbols?: string;
  tz?: string;
  resolution?: Resolution;
  currency?: string;
  unit?: EnergyUnit;
  tariff?: string;
  include?: string;
}): DayQuery {
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
    // Every spelling of one zone (letter case, links) is one zone to every cache behind this.
    tz = timeZoneId(raw.tz);
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
    ...(raw.currency && { currency: raw.currency.toUpperCase() }),
    ...(raw.unit && { unit: raw.unit }),
    ...(raw.tariff && { tariff: raw.tariff.toLowerCase() }),
    ...(parseInclude(raw.include).has('rank') && { rank: true }),
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

/**
 * Query values of an enumeration (`format`, `resolution`) are read in any letter case, as `tz` and
 * `symbols` are: `format=JSON` and `resolution=pt1h` are the values they plainly mean. Every route
 * whose query schema has such a field gets a hook that rewrites the value into its listed spelling
 * before validation; a value that matches nothing is left for validation to refuse.
 */
export function foldEnumCase(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const properties = (route.schema?.querystring as { properties?: Record<string, { enum?: unknown[] }> })
      ?.properties;
    const spellings = new Map<string, Map<string, string>>();
    for (const [name, field] of Object.entries(properties ?? {})) {
      const values = field.enum?.filter((v): v is string => typeof v === 'string');
      if (values?.length) spellings.set(name, new Map(values.map((v) => [v.toLowerCase(), v])));
    }
    if (spellings.size === 0) return;
    const fold: preValidationHookHandler = (request, _reply, done) => {
      const query = request.query as Record<string, unknown>;
      for (const [name, listed] of spellings) {
        const value = query[name];
        if (typeof value === 'string') query[name] = listed.get(value.toLowerCase()) ?? value;
      }
      done();
    };
    const existing = route.preValidation;
    route.preValidation =
      existing === undefined ? fold : [fold, ...(Array.isArray(existing) ? existing : [existing])];
  });
}
