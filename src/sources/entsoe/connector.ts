/**
 * `entsoe`: day-ahead prices (document type A44) of one bidding zone from the ENTSO-E Transparency
 * Platform. docs/sources.md lists the settings; the format rules live in `a44-points.ts`.
 */
import { isResolution, type Resolution } from '../../domain/time/days.js';
import type { Series } from '../../stores/types.js';
import {
  type ConnectorType,
  type SourceConnector,
  type SourceFailure,
  type SourcePoint,
  type SourceResult,
  SourceSettingsError,
  type SourceWindow,
  type UpstreamOptions,
} from '../types.js';
import { baseUrlOf, bodyText, getUpstream, plainWords, statusFailure, whatArrived } from '../upstream-get.js';
import { type A44TimeSeries, readA44 } from './a44-document.js';
import { periodPoints, periodResolution } from './a44-points.js';
import { type BiddingZone, biddingZone, ENTSOE_ZONES } from './zones.js';

export interface EntsoeSettings {
  /** A bidding zone by its usual name (`NO1`, `DE-LU`) or EIC code. */
  readonly zone: string;
  /** The security token; it only ever goes into the request. */
  readonly token: string;
  /** The series filled; default the zone's name. */
  readonly symbol?: string;
  readonly baseUrl?: string;
  /**
   * Which TimeSeries of a day (`classificationSequence` position) is the price: 1, the first
   * auction, unless set. A TimeSeries that names no position counts as 1.
   */
  readonly sequence?: number;
  /** The series' resolution; default the resolution of the periods the document has. */
  readonly resolution?: Resolution;
  /** Repeat an hourly period's price over the four quarters of a `PT15M` series. */
  readonly fillQuarters?: boolean;
}

/** Units as ENTSO-E writes them (UN/CEFACT codes) to Pricepoint's spelling. */
const UNITS: Record<string, string> = { MWH: 'MWh', KWH: 'kWh' };

export const entsoe: ConnectorType<EntsoeSettings> = {
  type: 'entsoe',
  defaultBaseUrl: 'https://web-api.tp.entsoe.eu/api',
  // The wording of the terms themselves is not verified here: docs/sources.md "Terms of each upstream".
  terms: {
    license: 'ENTSO-E Transparency Platform Terms and Conditions of Use',
    attribution: 'Source: ENTSO-E Transparency Platform',
    termsUrl:
      'https://transparency.entsoe.eu/content/static_content/download?path=%2FStatic+content%2Fterms+and+conditions%2F230309_ENTSOE_Transparency_Terms_Conditions_MC_APPROVED.pdf',
    redistribution:
      "Only the data on ENTSO-E's List of Data Available for Free Re-use may be reused under CC BY 4.0; day-ahead prices (12.1.D) are reported not to be on it (the exchanges that compute them own them), so reselling or republishing them needs the owners' licence.",
  },
  zones: ENTSOE_ZONES,
  create(settings, upstream = {}) {
    const zone = biddingZone(settings.zone ?? '');
    if (zone === undefined)
      throw new SourceSettingsError('zone', `"${settings.zone}" is not a known bidding zone`);
    if (typeof settings.token !== 'string' || settings.token === '') {
      throw new SourceSettingsError('token', 'an ENTSO-E security token is required');
    }
    const sequence = settings.sequence ?? 1;
    if (!Number.isInteger(sequence) || sequence < 1) {
      throw new SourceSettingsError('sequence', 'must be a whole number from 1');
    }
    if (
      settings.resolution !== undefined &&
      (!isResolution(settings.resolution) || settings.resolution === 'P1D')
    ) {
      throw new SourceSettingsError('resolution', 'must be PT15M, PT30M or PT1H');
    }
    const baseUrl = baseUrlOf(settings.baseUrl, entsoe.defaultBaseUrl, false);
    return {
      type: 'entsoe',
      fetchWindow: (window) => fetchA44(zone, { ...settings, sequence }, baseUrl, upstream, window),
    } satisfies SourceConnector;
  },
};

async function fetchA44(
  zone: BiddingZone,
  settings: EntsoeSettings & { sequence: number },
  baseUrl: URL,
  upstream: UpstreamOptions,
  window: SourceWindow,
): Promise<SourceResult> {
  const url = new URL(baseUrl);
  url.searchParams.set('securityToken', settings.token);
  url.searchParams.set('documentType', 'A44');
  // The day-ahead auction only: since the 15-minute intraday auctions, A44 may hold those too (A07).
  url.searchParams.set('contract_MarketAgreement.type', 'A01');
  url.searchParams.set('in_Domain', zone.eic);
  url.searchParams.set('out_Domain', zone.eic);
  url.searchParams.set('periodStart', compactUtc(window.from));
  url.searchParams.set('periodEnd', compactUtc(window.to));
  const got = await getUpstream(url, upstream);
  if (!got.ok) return got;
  const { answer } = got;
  const text = bodyText(answer);
  const read = readA44(text);
  // Reason 999 "No matching data found" (with 200 or 400): nothing is published for the window yet,
  // as an empty answer of the other upstreams says (docs/sources.md "Not published"). Every other
  // acknowledgement, 999 with other words included (a request too large), is a refusal.
  if (read.kind === 'acknowledgement' && read.reasons.length > 0 && read.reasons.every(noMatchingData)) {
    return { ok: true, series: [] };
  }
  if (read.kind === 'acknowledgement') {
    const words = read.reasons.map((r) => `${r.code} ${r.text}`.trim()).join('; ') || 'no reason given';
    const failure = statusFailure(answer, plainWords(words, [settings.token]), 'upstream');
    return { ok: false, failure: { ...failure, message: `ENTSO-E refused the request: ${failure.message}` } };
  }
  if (answer.status !== 200)
    return { ok: false, failure: statusFailure(answer, plainWords(text, [settings.token])) };
  if (read.kind === 'unreadable') {
    return formatFailure(
      `${answer.where}: ${read.reason}; arrived: ${whatArrived(answer, [settings.token])}`,
    );
  }
  return pricesOf(read.timeSeries, zone, settings, window);
}

/** The acknowledgement reason that means "nothing published for this window". */
const noMatchingData = (reason: { code: string; text: string }) =>
  reason.code === '999' && /^No matching data found/i.test(reason.text);

function pricesOf(
  all: readonly A44TimeSeries[],
  zone: BiddingZone,
  settings: EntsoeSettings & { sequence: number },
  window: SourceWindow,
): SourceResult {
  // Day-ahead series only (a document without the field is day-ahead), then never document order:
  // the configured auction, by its sequence number.
  const dayAhead = all.filter((ts) => ts.contract === undefined || ts.contract === 'A01');
  const chosen = dayAhead.filter((ts) => (ts.sequence ?? 1) === settings.sequence);
  if (chosen.length === 0) {
    const found = [...new Set(dayAhead.map((ts) => ts.sequence ?? 1))].join(', ');
    return formatFailure(
      all.length === 0
        ? 'the document has no TimeSeries'
        : dayAhead.length === 0
          ? 'the document has no day-ahead (contract type A01) TimeSeries'
          : `the document has TimeSeries of sequence ${found}, none of sequence ${settings.sequence}`,
    );
  }
  const first = chosen[0] as A44TimeSeries;
  for (const ts of chosen) {
    if (ts.domain !== undefined && ts.domain !== zone.eic) {
      return formatFailure(`a TimeSeries is for ${ts.domain}, not ${zone.name} (${zone.eic})`);
    }
    if (ts.currency === undefined || ts.unit === undefined) {
      return formatFailure('a TimeSeries names no currency_Unit.name or price_Measure_Unit.name');
    }
    if (ts.currency !== first.currency || ts.unit !== first.unit) {
      return formatFailure(`TimeSeries in ${first.currency}/${first.unit} and ${ts.currency}/${ts.unit}`);
    }
    if (ts.curveType !== 'A01' && ts.curveType !== 'A03') {
      return formatFailure(`curve type ${ts.curveType ?? 'missing'} is not supported (A01, A03 are)`);
    }
  }
  const target = settings.resolution ?? documentResolution(chosen, settings.fillQuarters === true);
  if (typeof target === 'object') return formatFailure(target.reason);
  const byStart = new Map<number, string>();
  for (const ts of chosen) {
    for (const period of ts.periods) {
      const points = periodPoints(period, ts.curveType as string, target, settings.fillQuarters === true);
      if (typeof points === 'string') return formatFailure(points);
      for (const { start, price } of points) {
        if (start < window.from || start >= window.to) continue;
        if (byStart.has(start)) {
          return formatFailure(
            `two TimeSeries of sequence ${settings.sequence} price ${new Date(start).toISOString()}; cannot choose`,
          );
        }
        byStart.set(start, price);
      }
    }
  }
  const points: SourcePoint[] = [...byStart]
    .map(([start, price]) => ({ start, price }))
    .sort((a, b) => a.start - b.start);
  const series: Series = {
    symbol: (settings.symbol ?? zone.name).toUpperCase(),
    name: `${zone.name} day-ahead (ENTSO-E)`,
    kind: 'electricity',
    currency: first.currency as string,
    unit: UNITS[first.unit as string] ?? (first.unit as string),
    timezone: zone.timezone,
    resolution: target,
  };
  return { ok: true, series: [{ series, points }] };
}

/** The one resolution of the chosen periods; with `fillQuarters`, the finest of several. */
function documentResolution(
  chosen: readonly A44TimeSeries[],
  fillQuarters: boolean,
): Resolution | { reason: string } {
  const seen = new Set<string>(chosen.flatMap((ts) => ts.periods.map((p) => p.resolution)));
  const mapped = [...seen].map((r) => periodResolution(r));
  if (mapped.length === 0) return { reason: 'the chosen TimeSeries have no periods' };
  if (mapped.some((r) => r === undefined)) return { reason: `period resolutions ${[...seen].join(', ')}` };
  const resolutions = mapped as Resolution[];
  if (resolutions.length === 1) return resolutions[0] as Resolution;
  if (!fillQuarters) {
    return {
      reason: `the document mixes ${[...seen].join(' and ')} periods: set resolution, and fillQuarters to repeat hourly prices over quarters`,
    };
  }
  return resolutions.includes('PT15M') ? 'PT15M' : 'PT30M';
}

function formatFailure(message: string): { ok: false; failure: SourceFailure } {
  return { ok: false, failure: { kind: 'format', message: `ENTSO-E answer: ${message}` } };
}

/** `yyyyMMddHHmm` in UTC, as the API's `periodStart` and `periodEnd` take it. */
function compactUtc(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/[-:T]/g, '').slice(0, 12);
}
