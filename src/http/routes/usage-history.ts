/**
 * Usage history (docs/usage-history.md): `GET /api/v1/usage/history` for the calling key and
 * `GET /api/v1/keys/{id}/usage` for any key (admin), per hour or day, as JSON or CSV. Both are
 * counted like any read; each answer includes what this instance counted up to the moment.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors/api-error.js';
import {
  GRANULARITIES,
  type Granularity,
  isRangeProblem,
  MAX_BUCKETS,
  usageRange,
} from '../../domain/usage/usage-range.js';
import type { KeyService } from '../../services/key-service.js';
import type { UsageHistory } from '../../services/usage-history.js';
import {
  OVERVIEW_CSV_HEADER,
  overviewCsv,
  USAGE_CSV_HEADER,
  usageCsv,
  usageOverview,
  usageReport,
} from '../../services/usage-report.js';
import { answerFormat, stringEnum } from '../contract/read-query.js';
import {
  type HeaderDocs,
  keyedErrors,
  NO_STORE_HEADER,
  RATE_LIMIT_HEADERS,
  REQUEST_ID_HEADER,
} from '../contract/schemas.js';
import type { KeyGuard } from '../pipeline/admit.js';

const Count = (description: string) => Type.Integer({ minimum: 0, description });
const CountFields = {
  requests: Count('Every counted request, whatever its outcome.'),
  served: Count('Answered 2xx.'),
  notModified: Count('Answered 304 Not Modified.'),
  rateLimited: Count('Refused by a limit of the tier (429 rate_limited).'),
  clientErrors: Count('Any other 4xx.'),
  units: Count('Rate-limit units taken (a heavy read weighs several; a refused request none).'),
};
const Instant = (description: string) => Type.String({ format: 'date-time', description });

const UsageHistorySchema = Type.Object({
  keyId: Type.String(),
  granularity: stringEnum(GRANULARITIES, 'PT1H: UTC hours; P1D: days of `timezone`.'),
  timezone: Type.String({ description: 'The zone times are written in (and days cut in): UTC unless `tz`.' }),
  from: Instant('The start of the first interval.'),
  to: Instant('The end of the last interval.'),
  totals: Type.Object(CountFields, { description: 'The sums over every interval.' }),
  intervals: Type.Array(
    Type.Object({
      start: Instant('RFC 3339, with the offset of `timezone`.'),
      end: Instant(''),
      ...CountFields,
    }),
    { description: 'Every interval of the range, back to back, with zeros where nothing was counted.' },
  ),
});

const TierCountFields = {
  ...CountFields,
  keys: Count(
    'Keys of the tier that made any counted request in the interval (in the whole range, for totals).',
  ),
};
const TierCountsSchema = Type.Record(Type.String(), Type.Object(TierCountFields), {
  description: 'Per tier: the sums over every key now in that tier.',
});
const UsageOverviewSchema = Type.Object({
  granularity: UsageHistorySchema.properties.granularity,
  timezone: UsageHistorySchema.properties.timezone,
  from: Instant('The start of the first interval.'),
  to: Instant('The end of the last interval.'),
  tiers: Type.Array(Type.String(), {
    description: 'Every tier the intervals name: the configured ones, then any a stored key still names.',
  }),
  totals: TierCountsSchema,
  intervals: Type.Array(
    Type.Object({
      start: Instant('RFC 3339, with the offset of `timezone`.'),
      end: Instant(''),
      tiers: TierCountsSchema,
    }),
    { description: 'Every interval of the range, back to back, every tier in each, zeros included.' },
  ),
});

const UsageQuery = Type.Object(
  {
    from: Type.Optional(
      Type.String({
        maxLength: 40,
        description:
          'A date (its start), yesterday, today, tomorrow, or an RFC 3339 timestamp; the interval holding it is the first. Default: 24 hours (PT1H) or 31 days (P1D) before `to`.',
        examples: ['yesterday'],
      }),
    ),
    to: Type.Optional(
      Type.String({
        maxLength: 40,
        description:
          'A date (included whole), yesterday, today, tomorrow, or an RFC 3339 timestamp (excluded). Default: through the current hour or day.',
        examples: ['today'],
      }),
    ),
    granularity: Type.Optional(
      stringEnum(
        GRANULARITIES,
        `PT1H (default; at most ${MAX_BUCKETS.PT1H} hours) or P1D (at most ${MAX_BUCKETS.P1D} days).`,
      ),
    ),
    tz: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'IANA zone whose days P1D sums and whose offset times are written with; default UTC. Its days must begin on a whole UTC hour.',
      }),
    ),
    format: Type.Optional(
      stringEnum(['json', 'csv'], 'json (default) or csv; Accept: text/csv works the same.'),
    ),
  },
  { additionalProperties: false },
);
type UsageQueryValues = {
  from?: string;
  to?: string;
  granularity?: Granularity;
  tz?: string;
  format?: 'json' | 'csv';
};

const CSV_NAME: HeaderDocs = {
  'content-disposition': {
    type: 'string',
    component: 'ContentDispositionUsage',
    description:
      'CSV answers only: attachment; filename="usage-KEYID-FIRST_LAST.csv", the dates of the range.',
  },
};

function responses(description: string, ...more: number[]) {
  return answers(
    description,
    UsageHistorySchema,
    `Header row ${USAGE_CSV_HEADER}, then one row per interval.`,
    more,
  );
}

function answers(description: string, json: unknown, csv: string, more: number[]) {
  return {
    200: {
      description,
      headers: { ...NO_STORE_HEADER, ...RATE_LIMIT_HEADERS, ...REQUEST_ID_HEADER, ...CSV_NAME },
      content: {
        'application/json': { schema: json },
        'text/csv': { schema: { type: 'string', description: csv } },
      },
    },
    ...keyedErrors(406, ...more),
  };
}

export interface UsageHistoryRoutesDeps {
  readonly usage: UsageHistory;
  /** The configured tiers' names, in the config's order: each is in every interval of the overview. */
  readonly tiers: readonly string[];
  readonly keys: KeyService;
  readonly keyGuard: KeyGuard;
  readonly clock: () => number;
}

export function usageHistoryRoutes(app: FastifyInstance, deps: UsageHistoryRoutesDeps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  function rangeOf(query: UsageQueryValues) {
    const range = usageRange(query, deps.clock());
    if (isRangeProblem(range)) {
      throw new ApiError('invalid_parameter', `The parameter "${range.parameter}" ${range.reason}.`, {
        extra: { parameter: range.parameter },
      });
    }
    return range;
  }

  function send(reply: FastifyReply, format: 'json' | 'csv', json: unknown, csv: () => string, name: string) {
    reply.header('cache-control', 'no-store');
    if (format === 'json') return reply.type('application/json; charset=utf-8').send(JSON.stringify(json));
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${name}"`)
      .send(csv());
  }

  async function answer(
    request: FastifyRequest,
    reply: FastifyReply,
    keyId: string,
    query: UsageQueryValues,
  ) {
    const format = answerFormat(request, query.format);
    const range = rangeOf(query);
    const report = usageReport(keyId, range, await deps.usage.read(range.buckets, keyId));
    const name = `usage-${keyId}-${report.from.slice(0, 10)}_${report.to.slice(0, 10)}.csv`;
    return send(reply, format, report, () => usageCsv(report), name);
  }

  api.get(
    '/api/v1/usage/overview',
    {
      onRequest: deps.keyGuard({ scope: 'admin' }),
      schema: {
        operationId: 'getUsageOverview',
        summary: 'Usage of every key by tier',
        description:
          "Per UTC hour or per day and per tier, the counted requests by outcome and the units of every key now in that tier, and how many keys made any. The same parameters and bounds as a key's usage history.",
        tags: ['usage'],
        querystring: UsageQuery,
        response: answers(
          "Every key's usage, summed per tier.",
          UsageOverviewSchema,
          `Header row ${OVERVIEW_CSV_HEADER}, then one row per interval and tier.`,
          [],
        ),
      },
    },
    async (request, reply) => {
      const format = answerFormat(request, request.query.format);
      const range = rangeOf(request.query);
      const first = range.buckets[0];
      const last = range.buckets.at(-1);
      // The whole range beside its intervals: a key counts once in the totals' `keys`.
      const whole = first && last ? [{ start: first.start, end: last.end }] : [];
      const rows = await deps.usage.tierBuckets([...range.buckets, ...whole]);
      const overview = usageOverview(range, deps.tiers, rows);
      const name = `usage-overview-${overview.from.slice(0, 10)}_${overview.to.slice(0, 10)}.csv`;
      return send(reply, format, overview, () => overviewCsv(overview), name);
    },
  );

  api.get(
    '/api/v1/usage/history',
    {
      onRequest: deps.keyGuard(),
      schema: {
        operationId: 'getUsageHistory',
        summary: 'Usage history of the calling key',
        description:
          "The calling key's counted requests by outcome and the units they took, per UTC hour or per day. Counted like any read.",
        tags: ['usage'],
        querystring: UsageQuery,
        response: responses("The calling key's usage."),
      },
    },
    async (request, reply) => answer(request, reply, request.caller!.key.id, request.query),
  );

  api.get(
    '/api/v1/keys/:id/usage',
    {
      onRequest: deps.keyGuard({ scope: 'admin' }),
      schema: {
        operationId: 'getKeyUsage',
        summary: 'Usage history of a key',
        description:
          "Any key's counted requests by outcome and the units they took, per UTC hour or per day; revoked keys included.",
        tags: ['keys'],
        params: Type.Object({ id: Type.String({ maxLength: 100 }) }, { additionalProperties: false }),
        querystring: UsageQuery,
        response: responses("The key's usage.", 404),
      },
    },
    async (request, reply) => {
      // An unknown id is a 404, not an empty history.
      const key = await deps.keys.get(request.params.id);
      return answer(request, reply, key.id, request.query);
    },
  );
}
