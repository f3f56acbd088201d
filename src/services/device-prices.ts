/**
 * Small answers for devices and home-energy tools (docs/integrations.md): the price now, whether
 * now is among the cheapest hours of today, and the prices from now to the end of tomorrow as a
 * list. One series at a time, read through the price service like the day endpoints, so tariffs,
 * conversion and `resolution` mean the same here. Knows nothing of HTTP.
 */
import { ApiError } from '../domain/errors/api-error.js';
import type { Tier } from '../domain/limits/tiers.js';
import { RESOLUTIONS } from '../domain/time/days.js';
import { cheapestIntervals, type Timed } from './cheapest.js';
import type { AnsweredDay, AnsweredPoint, DayName, DayQuery, PriceService } from './price-service.js';

const TODAY: DayName = { offset: 0 };
const TOMORROW: DayName = { offset: 1 };

/** One interval as a device reads it: under a tariff `value` is the total, else the price. */
export interface DeviceRate {
  readonly start: string;
  readonly end: string;
  /** Decimal text, exactly as the day endpoints write it. */
  readonly value: string;
  readonly startMs: number;
  readonly endMs: number;
}

/** The series as read: what its values are in. */
export interface DeviceSeries {
  readonly symbol: string;
  readonly currency: string;
  readonly unit: string;
  readonly resolution: string;
  readonly timezone: string;
  readonly tariff?: string;
}

export interface NowAnswer {
  readonly series: DeviceSeries;
  readonly rate: DeviceRate;
}

export interface CheapNowAnswer extends NowAnswer {
  readonly date: string;
  readonly hours: number;
  /** How many intervals of today count as cheap: `hours` of elapsed time, or every published one. */
  readonly intervals: number;
  readonly cheap: boolean;
  /** Every interval of today is published. */
  readonly complete: boolean;
}

export interface ForecastAnswer {
  readonly series: DeviceSeries;
  /** The interval holding now, then every later one of today and tomorrow that is published. */
  readonly rates: readonly DeviceRate[];
  /** The interval holding now, when it is published. */
  readonly current?: DeviceRate;
}

function rateOf(p: AnsweredPoint): DeviceRate {
  return {
    start: p.start,
    end: p.end,
    value: p.total ?? p.price,
    startMs: Date.parse(p.start),
    endMs: Date.parse(p.end),
  };
}

function seriesOf(day: AnsweredDay): DeviceSeries {
  return {
    symbol: day.symbol,
    currency: day.currency,
    unit: day.unit,
    resolution: day.resolution,
    timezone: day.timezone,
    ...(day.tariff !== undefined && { tariff: day.tariff }),
  };
}

/** The interval holding `now`, or a 404 that says the series has no price for now. */
function holding(day: AnsweredDay, rates: readonly DeviceRate[], now: number): DeviceRate {
  const rate = rates.find((r) => r.startMs <= now && now < r.endMs);
  if (rate === undefined) {
    throw new ApiError(
      'not_found',
      `${day.symbol} has no price published for ${new Date(now).toISOString()} (its day ${day.date}).`,
    );
  }
  return rate;
}

/** The one symbol of a device query: these answers are of one series (a device shows one price). */
export function oneSymbol(query: DayQuery): DayQuery {
  if (query.symbols?.length !== 1) {
    throw new ApiError('invalid_parameter', 'The parameter "symbols" must name exactly one series.', {
      extra: { parameter: 'symbols' },
    });
  }
  return query;
}

/**
 * How many intervals of `resolution` make `hours` of elapsed time, or a 400 naming `hours`.
 * @example intervalsOfHours(4, 'PT15M') // 16
 */
export function intervalsOfHours(hours: number, resolution: string): number {
  const minutes = RESOLUTIONS[resolution as keyof typeof RESOLUTIONS];
  const n = (hours * 60) / minutes;
  if (!Number.isInteger(n)) {
    throw new ApiError(
      'invalid_parameter',
      `The parameter "hours" must be a whole number of ${resolution} intervals.`,
      { extra: { parameter: 'hours' } },
    );
  }
  return n;
}

export interface DevicePricesDeps {
  readonly prices: PriceService;
  readonly clock: () => number;
}

/** The device answers (see `createDevicePrices`). */
export interface DevicePrices {
  now(tier: Tier, query: DayQuery): Promise<NowAnswer>;
  cheapNow(tier: Tier, query: DayQuery, hours: number): Promise<CheapNowAnswer>;
  forecast(tier: Tier, query: DayQuery): Promise<ForecastAnswer>;
}

export function createDevicePrices({ prices, clock }: DevicePricesDeps): DevicePrices {
  async function today(tier: Tier, query: DayQuery) {
    const answer = await prices.day(tier, oneSymbol(query), TODAY);
    const day = answer.series[0] as AnsweredDay;
    return { day, rates: day.prices.map(rateOf) };
  }

  return {
    /**
     * The interval of one series that holds now, its value a total under a tariff.
     * @example await devices.now(tier, { symbols: ['NO1'], tariff: 'household' })
     */
    async now(tier: Tier, query: DayQuery): Promise<NowAnswer> {
      const { day, rates } = await today(tier, query);
      return { series: seriesOf(day), rate: holding(day, rates, clock()) };
    },

    /**
     * Whether the interval holding now is among the cheapest `hours` of today's published ones
     * (ties to the earlier, as /prices/cheapest). On a 23- or 25-hour day `hours` stays elapsed
     * time; where fewer intervals are published than it asks, every published one is cheap.
     * @example await devices.cheapNow(tier, { symbols: ['NO1'] }, 4)
     */
    async cheapNow(tier: Tier, query: DayQuery, hours: number): Promise<CheapNowAnswer> {
      const { day, rates } = await today(tier, query);
      const n = Math.min(intervalsOfHours(hours, day.resolution), rates.length);
      const rate = holding(day, rates, clock());
      const timed: Timed[] = rates.map((r) => ({ start: r.startMs, end: r.endMs, price: r.value }));
      const chosen = new Set(cheapestIntervals(timed, n) ?? []);
      return {
        series: seriesOf(day),
        rate,
        date: day.date,
        hours,
        intervals: n,
        cheap: chosen.has(rates.indexOf(rate)),
        complete: day.complete,
      };
    },

    /**
     * The prices of one series from the interval holding now to the end of tomorrow (as far as
     * published), for evcc's custom tariff, EMHASS and Home Assistant.
     * @example await devices.forecast(tier, { symbols: ['NO1'], unit: 'kWh' })
     */
    async forecast(tier: Tier, query: DayQuery): Promise<ForecastAnswer> {
      const answer = await prices.range(tier, oneSymbol(query), TODAY, TOMORROW);
      const now = clock();
      const first = answer.series[0] as AnsweredDay;
      const rates = answer.series.flatMap((d) => d.prices.map(rateOf)).filter((r) => r.endMs > now);
      const current = rates[0] !== undefined && rates[0].startMs <= now ? rates[0] : undefined;
      return { series: seriesOf(first), rates, ...(current && { current }) };
    },
  };
}
