/**
 * Source connectors (docs/sources.md): each turns an upstream's answer for a window of time into
 * points of Pricepoint series, or into a failure in the upstream's own words. A connector knows its
 * upstream's format and nothing of stores, schedules or HTTP routes; `run-source.ts` imports what
 * it returns. A new upstream is a new module that implements `ConnectorType`.
 */
import type { Series } from '../stores/types.js';

/** The instants a run asks for: `from <= start < to`, in epoch milliseconds. */
export interface SourceWindow {
  readonly from: number;
  readonly to: number;
}

/** One interval's price: its start (epoch ms) and the decimal exactly as the upstream wrote it. */
export interface SourcePoint {
  readonly start: number;
  readonly price: string;
}

/**
 * The points of one series, with the series as the upstream describes it: currency, unit,
 * resolution and market time zone are read from the upstream's document (or its published
 * format), never filled in from a default.
 */
export interface SourceSeries {
  readonly series: Series;
  /** Ordered by start; an interval the upstream left without a price is absent, never 0. */
  readonly points: readonly SourcePoint[];
}

/** Why a fetch gave no points. `message` carries the upstream's own words and never a secret. */
export interface SourceFailure {
  /**
   * `upstream`: the upstream answered with an error document; `http`: an error status without one;
   * `network`, `timeout`, `too-large`: the transfer itself; `format`: an answer we cannot read.
   */
  readonly kind: 'upstream' | 'http' | 'network' | 'timeout' | 'too-large' | 'format';
  readonly message: string;
  /** The HTTP status, when there was an answer. */
  readonly status?: number;
  /** From `Retry-After` on a 429 or 503: wait at least this long before asking again. */
  readonly retryAfterMs?: number;
}

export type SourceResult =
  | { readonly ok: true; readonly series: readonly SourceSeries[] }
  | { readonly ok: false; readonly failure: SourceFailure };

/** A configured connector: one upstream, one set of settings. */
export interface SourceConnector {
  /** The connector type (`entsoe`, `ecb`, ...). */
  readonly type: string;
  /** Fetches `window` once (no retries: the scheduler decides when to ask again). */
  fetchWindow(window: SourceWindow): Promise<SourceResult>;
}

/** How a connector talks to its upstream; every field has a safe default (`upstream-get.ts`). */
export interface UpstreamOptions {
  /** Whole request, body included. */
  readonly timeoutMs?: number;
  /** The largest body read; a larger answer is a `too-large` failure. */
  readonly maxBytes?: number;
  /** The clock that turns a `Retry-After` date into a delay. */
  readonly now?: () => number;
}

/** An upstream's terms, as it publishes them: what an operator may do with its data. */
export interface UpstreamTerms {
  /** An SPDX id where the upstream names one (`CC-BY-4.0`), else the name of its own terms. */
  readonly license: string;
  /** The credit the upstream asks for beside its data, as it words it. */
  readonly attribution: string;
  /** Where the terms are published. */
  readonly termsUrl: string;
  /** What the terms say of redistribution and resale, in a sentence. */
  readonly redistribution: string;
}

/** A bidding zone (or area, region) a connector type can fill, so users find theirs by any name. */
export interface ConnectorZone {
  /** The name the connector's settings take (`DE-LU`, `NO1`, `DK1`). */
  readonly zone: string;
  /** The zone's EIC code where it has one (`10Y1001A1001A82H` for DE-LU), as ENTSO-E lists it. */
  readonly eic?: string;
  /** Other names users know it by (`DE`, `Oslo`). */
  readonly aliases: readonly string[];
}

/** A kind of connector: its name, its public endpoint, and how to build one from its settings. */
export interface ConnectorType<Settings> {
  readonly type: string;
  /** The real public endpoint, used when the settings name no `baseUrl`. */
  readonly defaultBaseUrl: string;
  /**
   * The upstream's terms, as docs/sources.md "Terms of each upstream" lists them. Where the upstream
   * does not state a licence, an attribution or its word on redistribution, the field says `not stated`.
   */
  readonly terms: UpstreamTerms;
  /**
   * The terms of the data one configured source fetches, where they depend on its settings
   * (Energy-Charts licenses some zones only); `terms` otherwise.
   */
  termsFor?(settings: Readonly<Record<string, unknown>>): UpstreamTerms;
  /**
   * Every zone the type's `create` accepts, by each name it accepts (test/sources/connector-zones.test.ts
   * holds the two to each other); absent only for a type that fills no bidding zone (`ecb`'s FX rates).
   */
  readonly zones?: readonly ConnectorZone[];
  /** Throws `SourceSettingsError` naming the bad field. */
  create(settings: Settings, upstream?: UpstreamOptions): SourceConnector;
}

/** A setting a connector cannot work with; `field` names it as written in the config file. */
export class SourceSettingsError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = 'SourceSettingsError';
  }
}
