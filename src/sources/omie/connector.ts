/**
 * `omie`: the day-ahead marginal prices of Spain (ES) and Portugal (PT) from OMIE, the Iberian
 * market operator, one day file per market day (`omie-files.ts` reads them). docs/sources.md.
 */

import { SYMBOL_PATTERN } from '../../domain/series/series-rules.js';
import { addDays, dayBounds, localDate, RESOLUTIONS, type Resolution } from '../../domain/time/days.js';
import type { Series } from '../../stores/types.js';
import {
  type ConnectorType,
  type SourceFailure,
  type SourcePoint,
  type SourceResult,
  SourceSettingsError,
  type SourceWindow,
  type UpstreamOptions,
} from '../types.js';
import { baseUrlOf, getUpstream, plainWords, statusFailure } from '../upstream-get.js';
import {
  type OmieDay,
  type OmieZone,
  QUARTER_HOURS_FROM,
  readMarginalPdbc,
  readReport,
} from './omie-files.js';

/** `report`: `INT_PBC_EV_H_1_...TXT`, whose rows state their unit; `marginalpdbc`: `marginalpdbc_YYYYMMDD.1`. */
export type OmieFile = 'report' | 'marginalpdbc';

export interface OmieSettings {
  /** `ES` or `PT`, or a name or EIC code of either. */
  readonly zone: string;
  /** Default `report`. */
  readonly file?: OmieFile;
  /** Default the zone (`ES`, `PT`), as the `entsoe` connector names the same zones. */
  readonly symbol?: string;
  readonly baseUrl?: string;
}

/** OMIE's market day is the day in Spanish peninsular time, for both zones. */
const MARKET_TIMEZONE = 'Europe/Madrid';
const ZONES: Record<OmieZone, { eic: string; timezone: string; aliases: readonly string[] }> = {
  ES: { eic: '10YES-REE------0', timezone: 'Europe/Madrid', aliases: ['Spain', 'España'] },
  PT: { eic: '10YPT-REN------W', timezone: 'Europe/Lisbon', aliases: ['Portugal'] },
};
/** A backfill asks one file per day: a year at most in one run. */
const MAX_DAYS = 370;

export const omie: ConnectorType<OmieSettings> = {
  type: 'omie',
  defaultBaseUrl: 'https://www.omie.es/',
  terms: {
    license: 'OMIE legal notice (Aviso legal)',
    attribution: 'Cite OMIE as the source where its information is used in its original format',
    termsUrl: 'https://www.omie.es/en/aviso-legal',
    redistribution:
      'Public, free-of-charge information on the OMIE website may be used freely, provided its original content is fully respected',
  },
  zones: (Object.keys(ZONES) as OmieZone[]).map((zone) => ({
    zone,
    eic: ZONES[zone].eic,
    aliases: ZONES[zone].aliases,
  })),
  create(settings, upstream = {}) {
    const zone = zoneOf(settings.zone);
    if (zone === undefined) {
      throw new SourceSettingsError(
        'zone',
        `"${settings.zone}" is not ES or PT (or Spain, Portugal, their EIC codes)`,
      );
    }
    const file = settings.file ?? 'report';
    if (file !== 'report' && file !== 'marginalpdbc') {
      throw new SourceSettingsError('file', 'must be report or marginalpdbc');
    }
    const symbol = (settings.symbol ?? zone).toUpperCase();
    if (!SYMBOL_PATTERN.test(symbol)) {
      throw new SourceSettingsError(
        'symbol',
        `"${symbol}" is not a series symbol (letters, digits, ".", "_" and "-", at most 32)`,
      );
    }
    const baseUrl = baseUrlOf(settings.baseUrl, omie.defaultBaseUrl, true);
    return {
      type: 'omie',
      fetchWindow: (window) => fetchDays({ zone, file, symbol }, baseUrl, upstream, window),
    };
  },
};

function zoneOf(value: unknown): OmieZone | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim().toUpperCase();
  return (Object.keys(ZONES) as OmieZone[]).find(
    (zone) =>
      zone === text ||
      ZONES[zone].eic === text ||
      ZONES[zone].aliases.some((alias) => alias.toUpperCase() === text),
  );
}

interface Plan {
  readonly zone: OmieZone;
  readonly file: OmieFile;
  readonly symbol: string;
}

/** Where the file of market day `date` lives, below `baseUrl`. */
export function omieFileUrl(file: OmieFile, date: string, baseUrl: URL): URL {
  const [yyyy, mm, dd] = date.split('-');
  if (file === 'report') {
    const day = `${dd}_${mm}_${yyyy}`;
    return new URL(
      `sites/default/files/dados/AGNO_${yyyy}/MES_${mm}/TXT/INT_PBC_EV_H_1_${day}_${day}.TXT`,
      baseUrl,
    );
  }
  const url = new URL('es/file-download', baseUrl);
  url.searchParams.set('parents', 'marginalpdbc');
  url.searchParams.set('filename', `marginalpdbc_${yyyy}${mm}${dd}.1`);
  return url;
}

async function fetchDays(
  plan: Plan,
  baseUrl: URL,
  upstream: UpstreamOptions,
  window: SourceWindow,
): Promise<SourceResult> {
  const first = localDate(window.from, MARKET_TIMEZONE);
  const last = localDate(window.to - 1, MARKET_TIMEZONE);
  const now = upstream.now?.() ?? Date.now();
  const points: SourcePoint[] = [];
  let resolution: Resolution | undefined;
  let days = 0;
  for (let date = first; date <= last; date = addDays(date, 1)) {
    if (++days > MAX_DAYS) return failure(`a window of more than ${MAX_DAYS} days: ask for fewer`);
    const bounds = dayBounds(date, MARKET_TIMEZONE);
    const intervals = (r: Resolution) => (bounds.end - bounds.start) / (RESOLUTIONS[r] * 60_000);
    const got = await getUpstream(omieFileUrl(plan.file, date, baseUrl), upstream);
    if (!got.ok) return got;
    const { answer } = got;
    // The files are ISO-8859-1 (the report's labels have ñ and é).
    const text = new TextDecoder('latin1').decode(answer.body);
    if (answer.status === 404 || (answer.status === 200 && text.trim() === '')) {
      // Not published yet for a day still to come or under way; a day gone by must have its file.
      if (bounds.end > now) continue;
      const said = answer.status === 404 ? 'answered HTTP 404' : 'answered with an empty file';
      return {
        ok: false,
        failure: {
          kind: 'upstream',
          status: answer.status,
          message: `${answer.where} ${said}: no file for market day ${date}`,
        },
      };
    }
    if (answer.status !== 200) return { ok: false, failure: statusFailure(answer, plainWords(text)) };
    const read: OmieDay =
      plan.file === 'report'
        ? readReport(text, date, plan.zone, intervals)
        : readMarginalPdbc(text, date, plan.zone, intervals);
    if (!read.ok) return failure(`${answer.where}: ${read.reason}`);
    if (resolution !== undefined && read.resolution !== resolution) {
      return failure(
        `the window mixes hourly days (before ${QUARTER_HOURS_FROM}) and quarter-hour days: fetch them into series of their own`,
      );
    }
    resolution = read.resolution;
    const step = RESOLUTIONS[read.resolution] * 60_000;
    for (const [position, price] of [...read.prices].sort(([a], [b]) => a - b)) {
      const start = bounds.start + position * step;
      if (start >= window.from && start < window.to) points.push({ start, price });
    }
  }
  const series: Series = {
    symbol: plan.symbol,
    name: `${plan.zone} day-ahead (OMIE)`,
    kind: 'electricity',
    // Every price row states EUR/MWh (or cents per kWh, moved to it); marginalpdbc's documentation does.
    currency: 'EUR',
    unit: 'MWh',
    timezone: ZONES[plan.zone].timezone,
    resolution: resolution ?? (last >= QUARTER_HOURS_FROM ? 'PT15M' : 'PT1H'),
  };
  return { ok: true, series: [{ series, points }] };
}

function failure(message: string): { ok: false; failure: SourceFailure } {
  return { ok: false, failure: { kind: 'format', message: `OMIE answer: ${message}` } };
}
