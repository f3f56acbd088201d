/**
 * A planned day or range read turned into the answer's bytes, validators and lifetime, for the
 * answer cache: the same function on the event loop and in a build thread
 * (../../server/build-threads.ts), so an answer is the same byte for byte wherever it was built.
 */
import type { DayAnswer, DayPlan, PriceService } from '../../services/price-service.js';
import { INTERVALS_PER_TURN, nextTurn } from '../../services/served-days.js';
import { parseInclude } from '../contract/read-query.js';
import { csvAttachment, entityTag, LONG_MAX_AGE, SHORT_MAX_AGE } from '../pipeline/answer.js';
import type { AnswerContent } from '../pipeline/answer-cache.js';
import {
  renderDayCsv,
  renderDayJson,
  renderSeriesDaysJson,
  type WrittenDays,
  writtenDays,
} from './day-answer.js';

/** The query fields that shape a CSV answer's columns, as the client wrote them. */
export interface CsvQuery {
  readonly include?: string;
  readonly currency?: string;
  readonly tariff?: string;
}

/** One read to build: plain data, so that it can be handed to a build thread as it is. */
export interface DayJob {
  readonly plan: DayPlan;
  readonly format: 'json' | 'csv';
  /** App-clock milliseconds after which the answer must be built again, at the latest. */
  readonly until: number;
  /** The route template, for metrics. */
  readonly route: string;
  readonly csv: CsvQuery;
}

/** Builds a planned read's answer: on the event loop, or in a build thread. */
export type DayBuilder = (job: DayJob) => Promise<AnswerContent>;

/** The builder on the event loop, over `prices`, keeping the days it wrote while they are served. */
export function buildOnLoop(prices: PriceService): DayBuilder {
  const written = writtenDays();
  return async (job) => dayContent(await prices.read(job.plan), job, written);
}

/**
 * The answer's bytes, validators and lifetime. A long range is written in turns, and tagged and
 * encoded in turns of their own (3 MB for a year of quarter hours: a few milliseconds each), so
 * other requests are answered in between when this runs on the event loop.
 */
export async function dayContent(
  answer: DayAnswer,
  job: Omit<DayJob, 'plan'>,
  written?: WrittenDays,
): Promise<AnswerContent> {
  const { format, until, route } = job;
  let intervals = 0;
  for (const s of answer.series) intervals += s.prices.length;
  const pause = intervals > INTERVALS_PER_TURN ? nextTurn : () => undefined;
  const seriesJson = format === 'json' ? await renderSeriesDaysJson(answer.series, written) : '';
  const text =
    format === 'csv'
      ? await renderDayCsv(answer, csvOptions(job.csv), written)
      : renderDayJson(answer, seriesJson);
  await pause();
  // generatedAt is left out of the tag: the same content built again keeps its ETag.
  const etag = entityTag(format, format === 'csv' ? text : seriesJson);
  await pause();
  return {
    etag,
    maxAge: answer.settled ? LONG_MAX_AGE : SHORT_MAX_AGE,
    type: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
    ...(format === 'csv' && {
      disposition: csvAttachment(
        'prices',
        answer.series.map((s) => s.date),
      ),
    }),
    body: Buffer.from(text),
    // A converted answer also changes with its FX series (a rate published or corrected).
    tags: [...answer.series.map((s) => s.symbol), ...(answer.fxSymbols ?? [])],
    validUntil: Math.min(answer.changesAt, until),
    route,
  };
}

/**
 * The CSV columns a query asks for: today's clients see the columns they know, others only when
 * asked (docs/api.md). A tariff converts, so it also names the rates.
 */
function csvOptions(query: CsvQuery) {
  const include = parseInclude(query.include);
  return {
    provenance: include.has('provenance'),
    fx: query.currency !== undefined || query.tariff !== undefined,
    tariff: query.tariff !== undefined,
    rank: include.has('rank'),
  };
}
