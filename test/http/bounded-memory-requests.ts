/**
 * Read requests that are all different and all valid: every spelling a client may use for the same
 * thing (zones and links in any letter case, symbols in any case and order, dates, resolutions,
 * formats, parameters in any order). Each is a new key for every cache a request can fill.
 */
import { DEV_SERIES } from '../../src/dev-data/dev-data.js';

/**
 * Zones and links, most of which Intl resolves to another name (US/Pacific, Asia/Kolkata); the long
 * ones have millions of letter-case spellings, so nearly every request brings a new one.
 */
const ZONES = [
  'US/Pacific',
  'America/Argentina/ComodRivadavia',
  'America/Argentina/ComodRivadavia',
  'America/Indiana/Indianapolis',
  'America/Indiana/Indianapolis',
  'Canada/Newfoundland',
  'Brazil/DeNoronha',
  'Australia/Lord_Howe',
  'Europe/Oslo',
  'Asia/Kolkata',
  'Etc/GMT+5',
];
/** Zones of the list whose days begin at :30 UTC, always or in winter. */
const HALF_HOUR_DAYS = new Set(['Canada/Newfoundland', 'Australia/Lord_Howe', 'Asia/Kolkata']);
const SYMBOLS = DEV_SERIES.map((s) => s.symbol);
const RESOLUTIONS = ['PT15M', 'PT30M', 'PT1H', 'P1D'];
const DAY_MS = 86_400_000;

/** A small seeded generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * `count` distinct read URLs, most with a `tz` in a random letter case.
 * @example distinctReadRequests(2, 1) // ['/api/v1/prices/today?tz=uS/pACifIC&symbols=no1', ...]
 */
export function distinctReadRequests(count: number, seed: number): string[] {
  const next = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  const anyCase = (text: string) =>
    [...text].map((c) => (next() < 0.5 ? c.toLowerCase() : c.toUpperCase())).join('');
  const shuffled = <T>(list: readonly T[]): T[] =>
    list
      .map((item) => ({ item, order: next() }))
      .sort((a, b) => a.order - b.order)
      .map((x) => x.item);
  const date = (daysBack: number) =>
    new Date(Date.parse('2026-11-22T00:00:00Z') - daysBack * DAY_MS).toISOString().slice(0, 10);

  const seen = new Set<string>();
  while (seen.size < count) {
    const params: string[] = [];
    const zone = next() < 0.9 ? pick(ZONES) : undefined;
    if (zone !== undefined) params.push(`tz=${encodeURIComponent(anyCase(zone))}`);
    const symbols = shuffled(SYMBOLS).slice(0, 1 + Math.floor(next() * 3));
    params.push(`symbols=${symbols.map(anyCase).join(',')}`);
    // Days that begin at :30 UTC would cut the hourly series' hours: P1D there is refused (
    // docs/using-the-api.md "Reading prices"), so those zones are read at most hourly.
    const resolution = next() < 0.5 ? pick(RESOLUTIONS) : undefined;
    if (resolution === 'P1D' && HALF_HOUR_DAYS.has(zone ?? '')) params.push('resolution=PT1H');
    else if (resolution !== undefined) params.push(`resolution=${resolution}`);
    if (next() < 0.3) params.push(`format=${pick(['json', 'csv'])}`);
    const path = pick(['today', 'latest', 'day', 'day', 'range']);
    let url: string;
    if (path === 'day') url = `/api/v1/prices/${date(Math.floor(next() * 3_000))}`;
    else if (path === 'range') {
      const to = Math.floor(next() * 3_000);
      params.push(`from=${date(to + Math.floor(next() * 3))}`, `to=${date(to)}`);
      url = '/api/v1/prices';
    } else url = `/api/v1/prices/${path}`;
    url += `?${shuffled(params).join('&')}`;
    seen.add(url);
  }
  return [...seen];
}
