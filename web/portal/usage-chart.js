/**
 * The usage chart of the portal: one stacked bar per interval of a usage history answer
 * (docs/usage-history.md), served, not modified, refused by a limit and other client errors, drawn
 * with uPlot (served by this server, see src/http/pages/). The legend names each outcome's colour.
 */
import uPlot from '../vendor/uplot.js';

/** Bottom to top of a bar: the field, its name in the legend and its colour. */
const OUTCOMES = [
  ['served', 'Served', '#0f766e'],
  ['notModified', 'Not modified', '#5eead4'],
  ['rateLimited', 'Refused by a limit', '#b91c1c'],
  ['clientErrors', 'Other client errors', '#6b7280'],
];

/** The chart drawn in each container, so a new answer replaces it instead of adding a second. */
const charts = new WeakMap();

function sized(container) {
  return { width: Math.max(280, container.clientWidth), height: 240 };
}

/**
 * Draws `report` (the JSON answer of `GET /api/v1/usage/history`) into `container`.
 * @param {HTMLElement} container
 * @param {{ granularity: string, intervals: Array<Record<string, any>> }} report
 */
export function drawUsage(container, report) {
  charts.get(container)?.plot.destroy();
  charts.get(container)?.observer.disconnect();
  const xs = report.intervals.map((interval) => Date.parse(interval.start) / 1000);
  const own = OUTCOMES.map(([field]) => report.intervals.map((interval) => interval[field]));
  // Stacked: each series is the running sum up to its outcome, drawn from the top down so every
  // lower part covers the one below it.
  const sums = [];
  own.forEach((values, n) => {
    sums.push(values.map((value, i) => value + (n === 0 ? 0 : sums[n - 1][i])));
  });
  const order = [...OUTCOMES.keys()].reverse();
  const bars = uPlot.paths.bars({ size: [0.8, 48], gap: 1 });
  const daily = report.granularity === 'P1D';
  const plot = new uPlot(
    {
      ...sized(container),
      // Bars centred on their interval need half an interval of room on each side.
      scales: {
        x: {
          time: true,
          range: (_u, min, max) => {
            const half = (daily ? 86_400 : 3_600) / 2;
            return [min - half, max + half];
          },
        },
        y: { range: (_u, _min, max) => [0, Math.max(4, Math.ceil(max * 1.1))] },
      },
      axes: [
        { stroke: '#4f5b67', grid: { stroke: '#e3e8ed' } },
        {
          stroke: '#4f5b67',
          grid: { stroke: '#e3e8ed' },
          values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? t.toLocaleString() : '')),
        },
      ],
      cursor: { points: { show: false }, drag: { x: false, y: false } },
      // The legend names the colours; the numbers are in the totals and the table under the chart.
      legend: { live: false },
      series: [
        {
          label: daily ? 'Day' : 'Hour',
        },
        ...order.map((n) => {
          const [, label, colour] = OUTCOMES[n];
          return {
            label,
            fill: colour,
            stroke: colour,
            width: 0,
            paths: bars,
            points: { show: false },
          };
        }),
      ],
    },
    [xs, ...order.map((n) => sums[n])],
    container,
  );
  const observer = new ResizeObserver(() => plot.setSize(sized(container)));
  observer.observe(container);
  charts.set(container, { plot, observer });
  return plot;
}
