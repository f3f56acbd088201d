/**
 * Request metrics counted as plain numbers and handed to prom-client when it is scraped.
 *
 * prom-client turns a label set into a string and looks it up on every `inc` and `observe`, even
 * through `labels()`: on a cached answer that was a tenth of the request. Here each label set is
 * looked up once, by the caller, and kept as a slot; a request adds to its slot's numbers. A counter
 * folds its slots into a prom-client `Counter` in that counter's `collect` (its public hook, called
 * on every scrape). A histogram cannot be given bucket counts through prom-client's API, so it is a
 * metric of its own that the registry reads through the same `get` every prom-client metric has; a
 * test holds its exposition byte for byte to prom-client's `Histogram` fed the same values
 * (folded-metrics.test.ts).
 */
import { Counter, type LabelValues, type Metric, Registry } from 'prom-client';
import { plainRequestMetrics, REQUEST_METRICS, type RequestMetrics } from '../http/metrics.js';

/** The count of one label set, added to by the hot path. */
export interface CounterSlot {
  n: number;
}

/**
 * A counter whose increments wait in slots until a scrape folds them in.
 * @example const c = foldedCounter({ name, help, labelNames: ['route'], registers }); c.slot({ route }).n += 1
 */
export function foldedCounter<L extends string>(options: {
  name: string;
  help: string;
  labelNames: readonly L[];
  registers: Registry[];
}) {
  // By label set, in the order first seen (the order prom-client lists them in).
  const slots = new Map<string, { labels: LabelValues<L>; slot: CounterSlot }>();
  const counter = new Counter<L>({
    ...options,
    collect() {
      for (const { labels, slot } of slots.values()) {
        if (slot.n === 0) continue;
        this.inc(labels, slot.n);
        slot.n = 0;
      }
    },
  });
  return {
    counter,
    /** The slot of `labels` (the same one each time): look it up once per label set and keep it. */
    slot(labels: LabelValues<L>): CounterSlot {
      const id = JSON.stringify(labels);
      const known = slots.get(id);
      if (known !== undefined) return known.slot;
      const slot = { n: 0 };
      slots.set(id, { labels: { ...labels }, slot });
      return slot;
    },
  };
}

/** One line of a histogram's exposition, as prom-client's registry reads it. */
interface ExpositionLine {
  readonly labels: Readonly<Record<string, string | number>>;
  readonly value: number;
  readonly metricName: string;
  /** prom-client's own lines carry these (exemplars are off): `null` on buckets, else undefined. */
  readonly exemplar: null | undefined;
  readonly sharedLabels: Readonly<Record<string, string | number>>;
}

/** The observations of one label set. */
export interface HistogramSlot {
  readonly labels: Readonly<Record<string, string | number>>;
  /** Observations per bucket, not cumulative; the last counts those above every bound. */
  readonly counts: number[];
  sum: number;
  count: number;
}

/**
 * A histogram with prom-client's exposition (cumulative `_bucket` lines, `+Inf`, `_sum`, `_count`)
 * whose observations are a few additions.
 * @example const h = foldedHistogram({ name, help, buckets, registers }); h.observe(h.slot({ route }), 0.002)
 */
export function foldedHistogram(options: {
  name: string;
  help: string;
  buckets: readonly number[];
  registers: Registry[];
}) {
  const bounds = [...options.buckets].sort((a, b) => a - b);
  // By label set, in the order first seen (the order prom-client lists them in).
  const slots = new Map<string, HistogramSlot>();
  const name = options.name;

  /** What prom-client's `Histogram.getForPromString` gives: labels of a line apart from the set's. */
  function exposition() {
    const values: ExpositionLine[] = [];
    for (const slot of slots.values()) {
      const sharedLabels = slot.labels;
      let cumulative = 0;
      bounds.forEach((le, i) => {
        cumulative += slot.counts[i] ?? 0;
        values.push({
          labels: { le },
          value: cumulative,
          metricName: `${name}_bucket`,
          exemplar: null,
          sharedLabels,
        });
      });
      values.push(
        {
          labels: { le: '+Inf' },
          value: slot.count,
          metricName: `${name}_bucket`,
          exemplar: null,
          sharedLabels,
        },
        { labels: {}, value: slot.sum, metricName: `${name}_sum`, exemplar: undefined, sharedLabels },
        { labels: {}, value: slot.count, metricName: `${name}_count`, exemplar: undefined, sharedLabels },
      );
    }
    return { name, help: options.help, type: 'histogram', values, aggregator: 'sum' };
  }

  const metric = {
    name,
    help: options.help,
    type: 'histogram',
    aggregator: 'sum',
    getForPromString: async () => exposition(),
    /** As prom-client's `get`: every line's labels whole. */
    get: async () => {
      const data = exposition();
      const values = data.values.map(({ sharedLabels, labels, ...rest }) => ({
        ...rest,
        labels: { ...labels, ...sharedLabels },
      }));
      return { ...data, values };
    },
    reset() {
      for (const slot of slots.values()) {
        slot.counts.fill(0);
        slot.sum = 0;
        slot.count = 0;
      }
    },
  };
  for (const registry of options.registers) registry.registerMetric(metric as unknown as Metric);

  return {
    /** The slot of `labels` (the same one each time): look it up once per label set and keep it. */
    slot(labels: Readonly<Record<string, string | number>>): HistogramSlot {
      const id = JSON.stringify(labels);
      const known = slots.get(id);
      if (known !== undefined) return known;
      const slot: HistogramSlot = {
        labels: { ...labels },
        counts: new Array(bounds.length).fill(0),
        sum: 0,
        count: 0,
      };
      slots.set(id, slot);
      return slot;
    },
    /** Counts `value` in the first bucket it is not above, as prom-client does. */
    observe(slot: HistogramSlot, value: number): void {
      for (let i = 0; i < bounds.length; i++) {
        if (value <= (bounds[i] as number)) {
          (slot.counts[i] as number) += 1;
          break;
        }
      }
      slot.sum += value;
      slot.count += 1;
    },
  };
}

/**
 * The request metrics folded: each label set's slots found by plain lookups of the request's own
 * values (label sets are few and bounded: route templates, methods, statuses, tiers), and the set
 * used last kept in front, since a busy client's requests mostly repeat it.
 */
export function foldedRequestMetrics(registers: Registry[]): RequestMetrics {
  const requests = foldedCounter({ ...REQUEST_METRICS.requests, registers });
  const latency = foldedHistogram({ ...REQUEST_METRICS.latency, registers });
  const fastAnswers = foldedCounter({ ...REQUEST_METRICS.fast, registers });
  type Nested<V> = Map<string | number, V>;
  const counters: Nested<Nested<Nested<Nested<CounterSlot>>>> = new Map();
  const timers: Nested<Nested<HistogramSlot>> = new Map();
  const fast = new Map<string, CounterSlot>();
  const kept = <K, V>(map: Map<K, V>, key: K, make: () => V): V => {
    const found = map.get(key);
    if (found !== undefined) return found;
    const made = make();
    map.set(key, made);
    return made;
  };
  const under = <V>(parent: Nested<Nested<V>>, key: string | number) => kept(parent, key, () => new Map());
  let last:
    | {
        route: string;
        method: string;
        status: number;
        tier: string;
        counter: CounterSlot;
        timer: HistogramSlot;
      }
    | undefined;
  return {
    answered(route, method, status, tier, seconds, isFast) {
      let slots = last;
      if (
        slots === undefined ||
        slots.route !== route ||
        slots.method !== method ||
        slots.status !== status ||
        slots.tier !== tier
      ) {
        const counter = kept(under(under(under(counters, route), method), status), tier, () =>
          requests.slot({ route, method, status, tier }),
        );
        const timer = kept(under(timers, route), method, () => latency.slot({ route, method }));
        slots = { route, method, status, tier, counter, timer };
        last = slots;
      }
      slots.counter.n += 1;
      latency.observe(slots.timer, seconds);
      if (isFast) kept(fast, route, () => fastAnswers.slot({ route })).n += 1;
    },
  };
}

/**
 * Whether this prom-client exposes folded metrics exactly as its own: the folded histogram is read
 * through `getForPromString`, which prom-client's registry calls but does not document. Both kinds
 * are fed the same requests on registries of their own and their expositions compared; where they
 * differ, the plain kind is used.
 */
export async function foldingProven(): Promise<boolean> {
  const plain = new Registry();
  const folded = new Registry();
  const a = plainRequestMetrics([plain]);
  const b = foldedRequestMetrics([folded]);
  const requests: Parameters<RequestMetrics['answered']>[] = [
    ['/api/v1/prices/today', 'GET', 200, 'free', 0.0004, true],
    ['/api/v1/prices/today', 'GET', 200, 'free', 0.0031, false],
    ['/api/v1/prices/:date', 'GET', 429, 'none', 3.5, false],
    ['unmatched', 'POST', 404, 'none', 0.25, false],
  ];
  for (const r of requests) {
    a.answered(...r);
    b.answered(...r);
  }
  try {
    return (await folded.metrics()) === (await plain.metrics());
  } catch {
    return false;
  }
}
