/**
 * What a scheduled run of each connector type asks for and when, unless the config file says
 * otherwise (docs/sources.md "Schedules"). Day-ahead electricity is auctioned around noon in Central
 * Europe and published in the early afternoon: ask every 10 minutes from 12:00 to 16:00 Brussels
 * time until the next day is complete, then once an hour for revisions. The ECB publishes its
 * reference rates around 16:00 Frankfurt time on working days.
 */

export interface SourcePlan {
  readonly schedule: readonly {
    readonly cron: string;
    readonly zone: string;
    readonly untilTomorrowComplete?: boolean;
  }[];
  /** A scheduled run asks for the local days from `daysBack` before today to `daysAhead` after it, in `zone`. */
  readonly window: { readonly zone: string; readonly daysBack: number; readonly daysAhead: number };
  /** The run is done for the day when tomorrow's local day of every series it fills is complete. */
  readonly dayAhead: boolean;
  /** The connector's settings (docs/sources.md): any other name in the config file is a mistake. */
  readonly settings?: readonly string[];
}

const DAY_AHEAD: SourcePlan = {
  schedule: [
    { cron: '*/10 12-15 * * *', zone: 'Europe/Brussels', untilTomorrowComplete: true },
    { cron: '0 * * * *', zone: 'Europe/Brussels' },
  ],
  window: { zone: 'Europe/Brussels', daysBack: 1, daysAhead: 1 },
  dayAhead: true,
};

export const TYPE_PLANS: Readonly<Record<string, SourcePlan>> = {
  entsoe: {
    ...DAY_AHEAD,
    settings: ['zone', 'token', 'symbol', 'baseUrl', 'sequence', 'resolution', 'fillQuarters'],
  },
  energidataservice: {
    ...DAY_AHEAD,
    settings: ['area', 'currency', 'symbol', 'baseUrl', 'resolution'],
  },
  // EPEX day-ahead results reach Energy-Charts in the early afternoon, as they reach ENTSO-E.
  energycharts: {
    ...DAY_AHEAD,
    settings: ['zone', 'symbol', 'baseUrl', 'resolution', 'fillQuarters'],
  },
  // aWATTar publishes the next day around 14:00 and asks for fair use (100 requests a day): every
  // quarter hour from 13:00 to 16:45 until tomorrow is complete, and every three hours for revisions.
  awattar: {
    ...DAY_AHEAD,
    schedule: [
      { cron: '*/15 13-16 * * *', zone: 'Europe/Vienna', untilTomorrowComplete: true },
      { cron: '0 */3 * * *', zone: 'Europe/Vienna' },
    ],
    settings: ['zone', 'symbol', 'baseUrl', 'resolution', 'fillQuarters'],
  },
  // OMIE runs the Iberian part of the same noon auction and publishes its files soon after.
  omie: {
    ...DAY_AHEAD,
    settings: ['zone', 'file', 'symbol', 'baseUrl'],
  },
  // Agile Octopus publishes the next UK day (23:00 to 23:00) around 16:00 London time. A London
  // day's last hour comes with the next day's prices, so tomorrow is never complete the day before.
  octopus: {
    settings: ['product', 'region', 'vat', 'paymentMethod', 'symbol', 'baseUrl'],
    schedule: [
      { cron: '*/15 16-17 * * *', zone: 'Europe/London' },
      { cron: '0 */6 * * *', zone: 'Europe/London' },
    ],
    window: { zone: 'Europe/London', daysBack: 1, daysAhead: 1 },
    dayAhead: false,
  },
  // Nord Pool publishes the day-ahead results of its areas shortly after the noon auction (CET).
  nordpool: {
    ...DAY_AHEAD,
    settings: ['zone', 'currency', 'symbol', 'baseUrl', 'resolution', 'fillQuarters', 'preliminary'],
  },
  // Elering republishes Nord Pool's results for the Baltics and Finland soon after they appear.
  elering: {
    ...DAY_AHEAD,
    settings: ['zone', 'symbol', 'baseUrl', 'resolution', 'fillQuarters'],
  },
  ecb: {
    settings: ['currencies', 'feed', 'baseUrl'],
    schedule: [{ cron: '30 16 * * 1-5', zone: 'Europe/Berlin' }],
    // A few business days back, so a missed run or a late revision is caught up.
    window: { zone: 'Europe/Berlin', daysBack: 4, daysAhead: 0 },
    dayAhead: false,
  },
};

/** A connector type without a plan of its own: once an hour, yesterday and today. */
export const DEFAULT_PLAN: SourcePlan = {
  schedule: [{ cron: '0 * * * *', zone: 'UTC' }],
  window: { zone: 'UTC', daysBack: 1, daysAhead: 0 },
  dayAhead: false,
};
