/**
 * The folded metrics must expose exactly what prom-client's own Counter and Histogram would, fed
 * the same updates: byte for byte in the text format, and equal in the JSON that `getMetricsAsJSON`
 * gives (which the cluster aggregator reads).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Counter, Histogram, Registry } from 'prom-client';
import { foldedCounter, foldedHistogram } from './folded-metrics.js';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const NAME = 'pricepoint_http_request_duration_seconds';
const HELP = 'Time from the request arriving to the answer being sent, by route template.';

/** Observations over every bucket, on its bounds, above the last and of awkward label values. */
const OBSERVATIONS: Array<[Record<string, string>, number]> = [
  [{ route: '/api/v1/prices/today', method: 'GET' }, 0.00042],
  [{ route: '/api/v1/prices/today', method: 'GET' }, 0.0005],
  [{ route: '/api/v1/prices/:date', method: 'GET' }, 0.0031],
  [{ route: '/api/v1/prices/today', method: 'GET' }, 0.25],
  [{ route: 'unmatched', method: 'POST' }, 3.75],
  [{ route: '/a "quoted" \\ route\nwith a newline', method: 'GET' }, 0.049],
  ...Array.from({ length: 500 }, (_, i): [Record<string, string>, number] => [
    { route: '/api/v1/prices/today', method: 'GET' },
    (i * 0.0137) % 3,
  ]),
];

describe('folded metrics', () => {
  test('a folded histogram exposes what prom-client’s Histogram does, byte for byte', async () => {
    const reference = new Registry();
    const folded = new Registry();
    const histogram = new Histogram({
      name: NAME,
      help: HELP,
      labelNames: ['route', 'method'],
      buckets: BUCKETS,
      registers: [reference],
    });
    const ours = foldedHistogram({ name: NAME, help: HELP, buckets: BUCKETS, registers: [folded] });
    const slots = new Map<string, ReturnType<typeof ours.slot>>();
    for (const [labels, value] of OBSERVATIONS) {
      histogram.observe(labels, value);
      const id = JSON.stringify(labels);
      const slot = slots.get(id) ?? ours.slot(labels);
      slots.set(id, slot);
      ours.observe(slot, value);
    }
    assert.equal(await folded.metrics(), await reference.metrics());
    assert.deepEqual(await folded.getMetricsAsJSON(), await reference.getMetricsAsJSON());
    folded.resetMetrics();
    reference.resetMetrics();
    // prom-client forgets its label sets on reset; a folded slot stays, at zero, until used again.
    ours.observe(slots.values().next().value as ReturnType<typeof ours.slot>, 0.002);
    histogram.observe(OBSERVATIONS[0]?.[0] as Record<string, string>, 0.002);
    assert.equal(
      (await folded.metrics())
        .split('\n')
        .filter((l) => !/ 0$/.test(l))
        .join('\n'),
      (await reference.metrics())
        .split('\n')
        .filter((l) => !/ 0$/.test(l))
        .join('\n'),
    );
  });

  test('a folded counter adds what its slots hold at each scrape, and only once', async () => {
    const reference = new Registry();
    const folded = new Registry();
    const options = { name: 'requests_total', help: 'Requests.', labelNames: ['route', 'status'] as const };
    const counter = new Counter({ ...options, registers: [reference] });
    const ours = foldedCounter({ ...options, registers: [folded] });
    const ok = ours.slot({ route: '/a', status: '200' });
    const missing = ours.slot({ route: '/b', status: '404' });
    for (let i = 0; i < 7; i++) {
      counter.inc({ route: '/a', status: '200' });
      ok.n += 1;
    }
    counter.inc({ route: '/b', status: '404' });
    missing.n += 1;
    assert.equal(await folded.metrics(), await reference.metrics());
    assert.equal(await folded.metrics(), await reference.metrics(), 'a second scrape counts nothing again');
    counter.inc({ route: '/a', status: '200' }, 2);
    ok.n += 2;
    assert.equal(await folded.metrics(), await reference.metrics());
    assert.match(await folded.metrics(), /requests_total\{route="\/a",status="200"\} 9/);
    ours.slot({ route: '/a', status: '200' }).n += 1;
    assert.match(
      await folded.metrics(),
      /requests_total\{route="\/a",status="200"\} 10/,
      'one slot per label set',
    );
  });
});
