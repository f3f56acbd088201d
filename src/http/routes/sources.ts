/**
 * `GET /api/v1/sources`, `GET /api/v1/sources/zones` and `POST /api/v1/sources/{name}/run`
 * (docs/sources.md "Watching and steering sources", "Finding a zone"), for keys with the `admin`
 * scope: what each source did last and will do next, the upstream's terms, the zones each type can
 * fill, and a run now, of the scheduled window or of a range of local days (a backfill, idempotent).
 * Settings are shown as written in the config file: a secret shows as the name of its variable.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors/api-error.js';
import { backfillWindow, runView, sourceView } from '../../sources/source-view.js';
import type { Sources } from '../../sources/sources.js';
import type { SourceWindow } from '../../sources/types.js';
import { findZones } from '../../sources/zone-finder.js';
import { stringEnum } from '../contract/read-query.js';
import { jsonAnswer, keyedErrors, RATE_LIMIT_HEADERS } from '../contract/schemas.js';
import type { KeyGuard } from '../pipeline/admit.js';

const Instant = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

const TermsSchema = Type.Object(
  {
    license: Type.String({
      description:
        'An SPDX id where the upstream names one (CC-BY-4.0), else the name of its own terms, or "not stated".',
      examples: ['CC-BY-4.0'],
    }),
    attribution: Type.String({
      description: 'The credit the upstream asks for beside its data, or "not stated".',
      examples: ['Source: Energinet (www.energidataservice.dk)'],
    }),
    termsUrl: Type.String({ description: 'Where the upstream publishes its terms.' }),
    redistribution: Type.String({
      description:
        'What the terms say of redistribution and resale, in a sentence (docs/sources.md "Terms of each upstream").',
    }),
  },
  { description: "The upstream's terms for the data this source fetches." },
);

const SourceSchema = Type.Object({
  name: Type.String({ description: 'As named under `sources:` in the config file.' }),
  type: Type.String({
    description:
      'The connector type (docs/sources.md): entsoe, ecb, energidataservice, energycharts, awattar, nordpool, elering, octopus or omie.',
  }),
  schedule: Type.Array(
    Type.Object({
      cron: Type.String(),
      zone: Type.String({ description: 'The time zone the cron is read in.' }),
      untilTomorrowComplete: Type.Boolean({
        description: 'Skipped once the next local day of every series the source fills is complete.',
      }),
    }),
  ),
  settings: Type.Record(Type.String(), Type.Unknown(), {
    description: 'As written in the config file; a secret shows as the name of its environment variable.',
  }),
  running: Type.Boolean(),
  lastRun: Instant,
  lastSuccess: Instant,
  lastOutcome: Type.Union(
    [Type.Literal('written'), Type.Literal('not_published'), Type.Literal('failed'), Type.Null()],
    {
      description:
        'What the last run did: written (points stored), not_published (the upstream answered with no price for the window yet: no failure, nothing written), failed; null before the first run.',
    },
  ),
  lastNotPublished: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'The last run whose upstream had published nothing for its window.',
  }),
  lastError: Type.Union([
    Type.Object({ at: Type.String({ format: 'date-time' }), message: Type.String() }),
    Type.Null(),
  ]),
  failuresInARow: Type.Integer({ minimum: 0 }),
  nextRun: Instant,
  pointsWritten: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  retryAfterUntil: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'The upstream asked (Retry-After) not to be called before then: no run asks it sooner.',
  }),
  lastSkipped: Type.Union(
    [Type.Object({ at: Type.String({ format: 'date-time' }), message: Type.String() }), Type.Null()],
    { description: 'The last scheduled run that did not ask the upstream, and why.' },
  ),
  minSpacingSeconds: Type.Integer({
    minimum: 0,
    description:
      'The least time from one run to a manual run after it (minSpacingSeconds in the config file).',
  }),
  terms: Type.Union([TermsSchema, Type.Null()], {
    description:
      'The upstream\'s terms for what this source fetches (docs/sources.md "Terms of each upstream"); null only for a type this server does not ship.',
  }),
});

const SourceListSchema = Type.Object({ sources: Type.Array(SourceSchema) });

const RunSchema = Type.Object({
  source: Type.String(),
  outcome: Type.Union(
    [
      Type.Literal('written'),
      Type.Literal('not_published'),
      Type.Literal('failed'),
      Type.Literal('busy'),
      Type.Literal('too_soon'),
    ],
    {
      description:
        'written: the points are stored; not_published: the upstream answered with no price for the window yet (no failure); failed: nothing was stored; busy: the source is running already; too_soon: not run again, inside the minimum spacing or the upstream’s Retry-After (see lastRun and nextRunAllowedAt).',
    },
  ),
  message: Type.String({ description: 'What happened, in plain words (a failure in the upstream’s own).' }),
  from: Instant,
  to: Instant,
  pointsWritten: Type.Integer({ minimum: 0 }),
  series: Type.Array(
    Type.Object({ symbol: Type.String(), points: Type.Integer({ minimum: 0 }), created: Type.Boolean() }),
  ),
  nextRunAllowedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'too_soon: from when a run may ask the upstream again; otherwise null.',
  }),
  lastRun: Type.Union(
    [
      Type.Object({
        at: Type.String({ format: 'date-time' }),
        outcome: Type.Union([Type.Literal('written'), Type.Literal('not_published'), Type.Literal('failed')]),
        message: Type.String(),
        pointsWritten: Type.Integer({ minimum: 0 }),
      }),
      Type.Null(),
    ],
    { description: 'too_soon: what the last run of any instance did; otherwise null.' },
  ),
});

const ZoneSchema = Type.Object({
  zone: Type.String({ description: 'The name the type takes in its zone setting.', examples: ['DE-LU'] }),
  eic: Type.Optional(
    Type.String({
      description: 'The EIC code ENTSO-E lists the zone by, where it has one.',
      examples: ['10Y1001A1001A82H'],
    }),
  ),
  aliases: Type.Array(Type.String(), {
    description: 'Other names the setting takes (DE, Germany).',
    examples: [['DE', 'LU', 'Germany', 'Luxembourg']],
  }),
});

const ZoneListSchema = Type.Object({
  types: Type.Array(
    Type.Object({
      type: Type.String({ description: 'The connector type.', examples: ['entsoe'] }),
      sources: Type.Array(Type.String(), {
        description:
          'The configured sources of the type, by name; empty for a type none is configured of (all=true).',
      }),
      zones: Type.Array(ZoneSchema),
    }),
    {
      description:
        'Per connector type that fills zones (ecb fills none), in the order docs/sources.md lists them.',
    },
  ),
});

const ZonesQuery = Type.Object(
  {
    all: Type.Optional(
      stringEnum(
        ['true', 'false'],
        'true: every connector type Pricepoint ships; false (default): the types of the configured sources.',
      ),
    ),
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description:
          'Only the zones with this name, alias or EIC code: the whole name, in any letter case (oslo, de, 10YNO-1--------2).',
      }),
    ),
  },
  { additionalProperties: false },
);

const NameParams = Type.Object({ name: Type.String({ maxLength: 100 }) }, { additionalProperties: false });
const NoQuery = Type.Object({}, { additionalProperties: false });
const RunQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ maxLength: 10, description: 'First local date, YYYY-MM-DD.' })),
    to: Type.Optional(Type.String({ maxLength: 10, description: 'Last local date, YYYY-MM-DD.' })),
  },
  { additionalProperties: false },
);

export function sourceRoutes(
  app: FastifyInstance,
  deps: {
    sources: Sources | undefined;
    /** The sources of the config file, by name and type. */
    configured: readonly { readonly name: string; readonly type: string }[];
    keyGuard: KeyGuard;
  },
): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const statuses = async () => (await deps.sources?.list()) ?? [];
  api.get(
    '/api/v1/sources',
    {
      onRequest: deps.keyGuard({ scope: 'admin' }),
      schema: {
        operationId: 'listSources',
        summary: 'List the sources and what they did',
        description: 'Each configured source: its schedule, last run, last success, last error and next run.',
        tags: ['sources'],
        querystring: NoQuery,
        response: {
          200: jsonAnswer('The configured sources.', SourceListSchema, RATE_LIMIT_HEADERS),
          ...keyedErrors(),
        },
      },
    },
    async () => ({ sources: (await statuses()).map(sourceView) }),
  );
  api.get(
    '/api/v1/sources/zones',
    {
      onRequest: deps.keyGuard({ scope: 'admin' }),
      schema: {
        operationId: 'listSourceZones',
        summary: 'Find the zones sources can fill',
        description:
          'The zones each configured connector type (all=true: every type) can fill, with EIC codes and aliases; q finds a zone by any of its names.',
        tags: ['sources'],
        querystring: ZonesQuery,
        response: {
          200: jsonAnswer('The zones, per connector type.', ZoneListSchema, RATE_LIMIT_HEADERS),
          ...keyedErrors(),
        },
      },
    },
    async (request) => {
      const { all, q } = request.query;
      if (q !== undefined && q.trim() === '') {
        throw new ApiError('invalid_parameter', 'The parameter "q" must name a zone, not be blank.', {
          extra: { parameter: 'q' },
        });
      }
      return { types: findZones(deps.configured, { all: all === 'true', ...(q !== undefined && { q }) }) };
    },
  );
  api.post(
    '/api/v1/sources/:name/run',
    {
      onRequest: deps.keyGuard({ scope: 'admin' }),
      config: { audit: { action: 'sources.run', target: (r) => (r.params as { name: string }).name } },
      schema: {
        operationId: 'runSource',
        summary: 'Run a source now',
        description:
          'Fetches the scheduled window, or the local days from `from` through `to` (both or neither), and waits for the run. Inside the source’s minimum spacing (default 60 s) or an upstream’s Retry-After nothing is fetched: the answer is `too_soon` with the last run’s result.',
        tags: ['sources'],
        params: NameParams,
        querystring: RunQuery,
        response: {
          200: jsonAnswer('The run, or why none happened.', RunSchema, RATE_LIMIT_HEADERS),
          ...keyedErrors(404),
        },
      },
    },
    async (request) => {
      const { name } = request.params;
      const { from, to } = request.query;
      if ((from === undefined) !== (to === undefined)) {
        throw new ApiError('invalid_parameter', 'from and to: give both or neither.', {
          extra: { parameter: from === undefined ? 'from' : 'to' },
        });
      }
      const status = (await statuses()).find((s) => s.name === name);
      if (deps.sources === undefined || status === undefined) {
        throw new ApiError('not_found', `No source is named "${name}"; GET /api/v1/sources lists them.`);
      }
      let window: SourceWindow | undefined;
      if (from !== undefined && to !== undefined) {
        const asked = backfillWindow(from, to, status.windowZone);
        if (typeof asked === 'string') {
          throw new ApiError('invalid_parameter', asked, { extra: { parameter: asked.split(':')[0] } });
        }
        window = asked;
      }
      const outcome = await deps.sources.run(name, window);
      if (outcome === undefined) throw new ApiError('not_found', `No source is named "${name}".`);
      return runView(name, outcome);
    },
  );
}
