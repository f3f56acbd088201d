/**
 * The day answer as JSON and CSV. Written by hand rather than through a generic serialiser so that
 * each price goes out exactly as it was ingested: the stored decimal text becomes the JSON number
 * (`41.27` never turns into `41.270000000000003`).
 */
import type { FxUsed } from '../../services/price-conversion.js';
import type { DayAnswer } from '../../services/price-service.js';
import { INTERVALS_PER_TURN, nextTurn } from '../../services/served-days.js';

type SeriesDay = DayAnswer['series'][number];

/**
 * The texts of `series` written by `write`, letting other requests in after every
 * `INTERVALS_PER_TURN` intervals, so a long range is never written in one block.
 */
async function inTurns(series: readonly SeriesDay[], write: (s: SeriesDay) => string): Promise<string[]> {
  const parts: string[] = [];
  let intervals = 0;
  for (const s of series) {
    if (intervals >= INTERVALS_PER_TURN) {
      intervals = 0;
      await nextTurn();
    }
    parts.push(write(s));
    intervals += s.prices.length;
  }
  return parts;
}

/**
 * The `series` array of a day answer as JSON: everything but `generatedAt`, so it also identifies
 * the answer for caching (two answers with the same series text are the same answer). Written in
 * turns (see `inTurns`).
 */
export async function renderSeriesDaysJson(
  series: DayAnswer['series'],
  written?: WrittenDays,
): Promise<string> {
  return `[${(await inTurns(series, (s) => keptOrWritten(written?.json, s, writeSeriesDayJson))).join(',')}]`;
}

/** What a CSV answer carries besides today's columns: `provenance` adds `complete,source` (docs/api.md). */
export interface CsvOptions {
  readonly provenance?: boolean;
  /** Converted into a currency: each row also names its rate, `fx_symbol,fx_date,fx_rate`. */
  readonly fx?: boolean;
  /** With a tariff: `tariff,spot,fees,vat,total` (docs/tariffs.md). */
  readonly tariff?: boolean;
  /** With `include=rank`: `rank,level`. */
  readonly rank?: boolean;
}

/**
 * One header row, then one row per interval, CRLF line ends (RFC 4180; spreadsheets like them).
 * Written in turns (see `inTurns`).
 */
export async function renderDayCsv(
  answer: DayAnswer,
  options: CsvOptions = {},
  written?: WrittenDays,
): Promise<string> {
  if (options.tariff === true || options.rank === true) {
    const header = [
      CSV_HEADER,
      ...(options.provenance === true ? [PROVENANCE_COLUMNS] : []),
      ...(options.fx === true ? [FX_COLUMNS] : []),
      ...(options.tariff === true ? [TARIFF_COLUMNS] : []),
      ...(options.rank === true ? [RANK_COLUMNS] : []),
    ].join(',');
    const rows = await inTurns(answer.series, (s) => writeExtendedCsvRows(s, options));
    return `${header}\r\n${rows.join('')}`;
  }
  if (options.fx === true) {
    const header = `${CSV_HEADER}${options.provenance === true ? `,${PROVENANCE_COLUMNS}` : ''},${FX_COLUMNS}`;
    const rows = await inTurns(answer.series, (s) => writeCsvRows(s, options.provenance === true, true));
    return `${header}\r\n${rows.join('')}`;
  }
  if (options.provenance === true) {
    return `${CSV_HEADER},${PROVENANCE_COLUMNS}\r\n${(await inTurns(answer.series, (s) => keptOrWritten(written?.csvWithProvenance, s, (d) => writeCsvRows(d, true)))).join('')}`;
  }
  return `${CSV_HEADER}\r\n${(await inTurns(answer.series, (s) => keptOrWritten(written?.csv, s, (d) => writeCsvRows(d, false)))).join('')}`;
}

/**
 * Days written before, by the day object: the price service hands out the same day objects until
 * their series changes, so each is written once, and dropped with the object. One per builder
 * (day-content.ts `buildOnLoop`).
 */
export interface WrittenDays {
  readonly json: WeakMap<SeriesDay, string>;
  readonly csv: WeakMap<SeriesDay, string>;
  readonly csvWithProvenance: WeakMap<SeriesDay, string>;
}

export function writtenDays(): WrittenDays {
  return { json: new WeakMap(), csv: new WeakMap(), csvWithProvenance: new WeakMap() };
}

/** `write(s)`, kept in `kept` when there is one. */
function keptOrWritten(
  kept: WeakMap<SeriesDay, string> | undefined,
  s: SeriesDay,
  write: (s: SeriesDay) => string,
) {
  let text = kept?.get(s);
  if (text === undefined) {
    text = write(s);
    kept?.set(s, text);
  }
  return text;
}

/** The rate a converted price used, its stored text as the JSON number (docs/data-model.md). */
export function fxJson(fx: FxUsed): string {
  return `{"symbol":${JSON.stringify(fx.symbol)},"date":"${fx.date}","rate":${fx.rate}}`;
}

/** A tariff's parts and the rank of an interval, as JSON members after its price; empty when it has none. */
function extraJson(p: SeriesDay['prices'][number]): string {
  const parts =
    p.total === undefined ? '' : `,"total":${p.total},"spot":${p.spot},"fees":${p.fees},"vat":${p.vat}`;
  const rank =
    p.rank === undefined ? '' : `,"rank":${p.rank},"level":${p.level == null ? 'null' : `"${p.level}"`}`;
  return parts + rank;
}

function writeSeriesDayJson(s: SeriesDay): string {
  const prices = s.prices
    .map(
      (p) =>
        `{"start":"${p.start}","end":"${p.end}","price":${p.price}${p.fx === undefined ? '' : `,"fx":${fxJson(p.fx)}`}${extraJson(p)}}`,
    )
    .join(',');
  const meta = JSON.stringify({
    symbol: s.symbol,
    name: s.name,
    kind: s.kind,
    currency: s.currency,
    unit: s.unit,
    timezone: s.timezone,
    resolution: s.resolution,
    date: s.date,
    complete: s.complete,
    source: s.source,
    license: s.license,
    attribution: s.attribution,
    ...(s.tariff !== undefined && { tariff: s.tariff }),
  });
  const fx = s.fx === undefined ? '' : `,"fx":${s.fx === null ? 'null' : fxJson(s.fx)}`;
  const unconverted = s.unconverted === undefined ? '' : `,"unconverted":${JSON.stringify(s.unconverted)}`;
  return `${meta.slice(0, -1)}${fx}${unconverted},"prices":[${prices}]}`;
}

/**
 * The whole JSON answer around the `series` text `renderSeriesDaysJson` wrote.
 * @example renderDayJson(answer, await renderSeriesDaysJson(answer.series)) // '{"generatedAt":"...","series":[...]}'
 */
export function renderDayJson(answer: DayAnswer, seriesJson: string): string {
  return `{"generatedAt":"${answer.generatedAt}","series":${seriesJson}}`;
}

/** RFC 4180 quoting, only where a field needs it. */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

export const CSV_HEADER = 'symbol,date,start,end,price,currency,unit';
/** The columns `include=provenance` adds after `CSV_HEADER`'s. */
export const PROVENANCE_COLUMNS = 'complete,source';
/** The columns `currency` adds last: the rate each row was converted with, empty where none was needed. */
export const FX_COLUMNS = 'fx_symbol,fx_date,fx_rate';
/** The columns `tariff` adds after those: the tariff's name and the parts, empty where it does not apply yet. */
export const TARIFF_COLUMNS = 'tariff,spot,fees,vat,total';
/** The columns `include=rank` adds last. */
export const RANK_COLUMNS = 'rank,level';

/** Rows of one day; with `fx` (a currency was asked), each row ends with its rate, if it needed one. */
function writeCsvRows(s: SeriesDay, provenance: boolean, fx = false): string {
  const extra = provenance ? `,${s.complete},${csvField(s.source ?? '')}` : '';
  const tail = `${csvField(s.currency)},${csvField(s.unit)}${extra}`;
  const head = `${csvField(s.symbol)},${s.date}`;
  if (!fx) return s.prices.map((p) => `${head},${p.start},${p.end},${p.price},${tail}\r\n`).join('');
  const fxColumns = (fx: FxUsed | null | undefined) =>
    fx == null ? ',,' : `${csvField(fx.symbol)},${fx.date},${fx.rate}`;
  return s.prices
    .map((p) => `${head},${p.start},${p.end},${p.price},${tail},${fxColumns(p.fx ?? s.fx)}\r\n`)
    .join('');
}

/** Rows with the columns of a tariff or of ranks, each group present as `options` asks. */
function writeExtendedCsvRows(s: SeriesDay, options: CsvOptions): string {
  const head = `${csvField(s.symbol)},${s.date}`;
  const tail = `${csvField(s.currency)},${csvField(s.unit)}${options.provenance === true ? `,${s.complete},${csvField(s.source ?? '')}` : ''}`;
  return s.prices
    .map((p) => {
      let row = `${head},${p.start},${p.end},${p.price},${tail}`;
      if (options.fx === true) {
        const fx = p.fx ?? s.fx;
        row += fx == null ? ',,,' : `,${csvField(fx.symbol)},${fx.date},${fx.rate}`;
      }
      if (options.tariff === true) {
        row += `,${csvField(s.tariff ?? '')},${p.spot ?? ''},${p.fees ?? ''},${p.vat ?? ''},${p.total ?? ''}`;
      }
      if (options.rank === true) row += `,${p.rank ?? ''},${p.level ?? ''}`;
      return `${row}\r\n`;
    })
    .join('');
}
