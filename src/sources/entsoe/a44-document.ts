/**
 * Reads an ENTSO-E answer: a `Publication_MarketDocument` of day-ahead prices (document type A44)
 * or an `Acknowledgement_MarketDocument`, the platform's error document. Only what the connector
 * needs is kept, as written (amounts stay text). Format: the Transparency Platform's API guide and
 * the IEC 62325-451-3 publication document.
 */
import { XMLParser } from 'fast-xml-parser';

export interface A44Period {
  readonly start: number;
  readonly end: number;
  /** As written: `PT15M`, `PT60M`, ... */
  readonly resolution: string;
  /** Position (from 1) to the amount text; `undefined` where the point has no usable amount. */
  readonly points: ReadonlyMap<number, string | undefined>;
}

export interface A44TimeSeries {
  /** `classificationSequence_AttributeInstanceComponent.position`, when written. */
  readonly sequence: number | undefined;
  /** `contract_MarketAgreement.type`: `A01` for the day-ahead auction, `A07` for an intraday one. */
  readonly contract: string | undefined;
  readonly domain: string | undefined;
  readonly currency: string | undefined;
  readonly unit: string | undefined;
  /** `A01` (every position written) or `A03` (a left-out position repeats the previous price). */
  readonly curveType: string | undefined;
  readonly periods: readonly A44Period[];
}

export type A44Answer =
  | { readonly kind: 'prices'; readonly timeSeries: readonly A44TimeSeries[] }
  | { readonly kind: 'acknowledgement'; readonly reasons: readonly { code: string; text: string }[] }
  | { readonly kind: 'unreadable'; readonly reason: string };

const LISTS = new Set(['TimeSeries', 'Period', 'Point', 'Reason']);
const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  parseTagValue: false,
  isArray: (name) => LISTS.has(name),
});
/** ENTSO-E writes `2025-10-25T22:00Z`; seconds are allowed too. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?Z$/;

type Node = Record<string, unknown>;

/**
 * @example readA44(xml).kind // 'prices'
 */
export function readA44(xml: string): A44Answer {
  let root: Node;
  try {
    root = parser.parse(xml, true) as Node;
  } catch (error) {
    return { kind: 'unreadable', reason: `not well-formed XML: ${(error as Error).message.split('\n')[0]}` };
  }
  const ack = root['Acknowledgement_MarketDocument'] as Node | undefined;
  if (ack !== undefined) {
    const reasons = list(ack['Reason']).map((r) => ({
      code: text(r['code']) ?? '',
      text: text(r['text']) ?? '',
    }));
    return { kind: 'acknowledgement', reasons };
  }
  const doc = root['Publication_MarketDocument'] as Node | undefined;
  if (doc === undefined) {
    const name = Object.keys(root).find((k) => !k.startsWith('?')) ?? 'nothing';
    return { kind: 'unreadable', reason: `expected a Publication_MarketDocument, found ${name}` };
  }
  const type = text(doc['type']);
  if (type !== 'A44') return { kind: 'unreadable', reason: `document type ${type ?? 'missing'}, not A44` };
  try {
    return { kind: 'prices', timeSeries: list(doc['TimeSeries']).map(readTimeSeries) };
  } catch (error) {
    return { kind: 'unreadable', reason: (error as Error).message };
  }
}

function readTimeSeries(ts: Node, index: number): A44TimeSeries {
  const sequence = text(ts['classificationSequence_AttributeInstanceComponent.position']);
  if (sequence !== undefined && !/^\d+$/.test(sequence)) {
    throw new Error(`TimeSeries ${index + 1}: classification sequence "${sequence}" is not a number`);
  }
  return {
    sequence: sequence === undefined ? undefined : Number(sequence),
    contract: text(ts['contract_MarketAgreement.type']),
    domain: text(ts['in_Domain.mRID']),
    currency: text(ts['currency_Unit.name']),
    unit: text(ts['price_Measure_Unit.name']),
    curveType: text(ts['curveType']),
    periods: list(ts['Period']).map((p, i) => readPeriod(p, `TimeSeries ${index + 1}, Period ${i + 1}`)),
  };
}

function readPeriod(period: Node, where: string): A44Period {
  const interval = (period['timeInterval'] ?? {}) as Node;
  const start = instant(text(interval['start']), `${where}: start`);
  const end = instant(text(interval['end']), `${where}: end`);
  if (end <= start) throw new Error(`${where}: the time interval ends before it starts`);
  const resolution = text(period['resolution']);
  if (resolution === undefined) throw new Error(`${where}: resolution is missing`);
  const points = new Map<number, string | undefined>();
  for (const point of list(period['Point'])) {
    const position = text(point['position']);
    if (position === undefined || !/^[1-9]\d*$/.test(position)) {
      throw new Error(`${where}: a Point has position "${position ?? ''}"`);
    }
    if (points.has(Number(position))) throw new Error(`${where}: position ${position} is written twice`);
    const amount = text(point['price.amount']);
    // `NaN` and an empty amount mean "no price": missing, never zero.
    points.set(Number(position), amount === undefined || /^[+-]?nan$/i.test(amount) ? undefined : amount);
  }
  return { start, end, resolution, points };
}

function instant(value: string | undefined, where: string): number {
  if (value === undefined || !INSTANT.test(value))
    throw new Error(`${where} "${value ?? ''}" is not a UTC instant`);
  return Date.parse(value);
}

function list(value: unknown): Node[] {
  return Array.isArray(value) ? (value as Node[]) : [];
}

function text(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}
