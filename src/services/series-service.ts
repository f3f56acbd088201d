/**
 * The series catalogue for operators (docs/data-model.md, docs/api.md): list the series with their coverage,
 * and create or update one. Used by `PUT /api/v1/series/{symbol}` and `pricepoint series`, so the
 * CLI can do nothing the API would refuse.
 */
import { ApiError } from '../domain/errors/api-error.js';
import {
  checkSeriesFields,
  type FieldProblem,
  normaliseSymbol,
  type SeriesFields,
} from '../domain/series/series-rules.js';
import { type CalendarDate, localDate } from '../domain/time/days.js';
import type { PriceStore, Series } from '../stores/types.js';

/** A series with the first and last local dates it has prices for (`null`: none yet). */
export interface SeriesView extends Series {
  readonly coverage: { readonly first: CalendarDate; readonly last: CalendarDate } | null;
}

export interface UpsertResult {
  readonly outcome: 'created' | 'updated';
  readonly series: SeriesView;
}

/** Field values as given by a client or an operator, not yet checked; omitted ones keep their value. */
export type SeriesInput = Partial<Record<keyof SeriesFields, string>>;

/** One `invalid_parameter` naming every field; `detail` says it once when all share one reason. */
function invalid(problems: readonly FieldProblem[], detail?: string): ApiError {
  const first = problems[0];
  return new ApiError('invalid_parameter', detail ?? problems.map((p) => p.detail).join(' '), {
    extra: { parameter: first?.field, errors: problems.map((p) => ({ field: p.field, detail: p.detail })) },
  });
}

/**
 * The first and last local dates a series has prices for, in `zone` (its own by default).
 * @example await coverageOf(store, no1) // { first: '2026-08-24', last: '2026-11-23' }
 */
export async function coverageOf(
  prices: PriceStore,
  series: Series,
  zone = series.timezone,
): Promise<SeriesView['coverage']> {
  const span = await prices.coverage(series.symbol);
  return span ? { first: localDate(span.first, zone), last: localDate(span.last, zone) } : null;
}

/** The series catalogue for operators: the same checks for the admin API and `pricepoint series`. */
export interface SeriesService {
  /** Every series, ordered by symbol, with its coverage. */
  list(): Promise<SeriesView[]>;
  /**
   * Creates the series `symbol` (every field needed) or updates it (omitted fields keep their
   * values). The time zone and resolution define the grid stored prices lie on, so they cannot
   * change once the series has prices; a bad field throws `invalid_parameter` naming it.
   * @example await service.upsert('no1', { name: 'Oslo day-ahead' }) // { outcome: 'updated', ... }
   */
  upsert(symbol: string, input: SeriesInput): Promise<UpsertResult>;
}

export function createSeriesService({ prices }: { prices: PriceStore }): SeriesService {
  async function view(series: Series): Promise<SeriesView> {
    return { ...series, coverage: await coverageOf(prices, series) };
  }

  return {
    async list(): Promise<SeriesView[]> {
      return Promise.all((await prices.listSeries()).map(view));
    },

    async upsert(symbol: string, input: SeriesInput): Promise<UpsertResult> {
      const canonical = normaliseSymbol(symbol);
      if (canonical === undefined) {
        throw invalid([
          {
            field: 'symbol',
            detail: `The symbol "${symbol}" must be 1 to 32 letters, digits, ".", "_" or "-", starting with a letter or digit.`,
          },
        ]);
      }
      const existing = await prices.getSeries(canonical);
      const merged: SeriesInput = existing ? { ...existing, ...definedOnly(input) } : definedOnly(input);
      const checked = checkSeriesFields(merged);
      if (!checked.ok) throw invalid(checked.problems);
      const series: Series = { symbol: canonical, ...checked.value };
      if (existing) {
        const changed = (['timezone', 'resolution'] as const).filter((f) => existing[f] !== series[f]);
        if (changed.length > 0 && (await prices.coverage(canonical)) !== undefined) {
          const what = changed.map((f) => `${f} (${existing[f]} to ${series[f]})`).join(' and ');
          const detail =
            `${canonical} already has prices on its ${existing.timezone} ${existing.resolution} grid; ` +
            `changing its ${what} would put them off the grid. Create a new series instead.`;
          throw invalid(
            changed.map((field) => ({ field, detail })),
            detail,
          );
        }
      }
      await prices.upsertSeries(series);
      return { outcome: existing ? 'updated' : 'created', series: await view(series) };
    },
  };
}

function definedOnly(input: SeriesInput): SeriesInput {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
}
