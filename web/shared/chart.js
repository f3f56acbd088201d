// @ts-check
/**
 * Time charts over uPlot (served from this server, see src/http/pages/pages.ts). A chart is a
 * `<figure>` with a caption and a text summary for screen readers; it follows its container's width.
 */
import uPlot from '../vendor/uplot.js';

/** Colours told apart with common colour blindness (Okabe-Ito), in the order series get them. */
export const PALETTE = [
  '#0072b2',
  '#e69f00',
  '#009e73',
  '#cc79a7',
  '#56b4e9',
  '#d55e00',
  '#f0e442',
  '#000000',
];

/**
 * @typedef {object} Series
 * @property {string} label
 * @property {(number | null)[]} values one per time
 * @property {string} [color]
 * @property {boolean} [dashed] drawn dashed, for a measure of another kind beside counts
 */

/**
 * @typedef {object} ChartSpec
 * @property {string} title shown above the chart and read as its name
 * @property {number[]} times seconds since the epoch, ascending
 * @property {Series[]} series
 * @property {'line' | 'bars'} [kind] bars for one series of totals (several overlap), else lines
 * @property {number} [height]
 * @property {'hour' | 'day'} [step] how far apart the times are, for the axis labels
 */

/**
 * Draws `spec` into `container` (emptied first) and returns a function that removes it.
 * @param {HTMLElement} container
 * @param {ChartSpec} spec
 */
export function timeChart(container, spec) {
  container.replaceChildren();
  const figure = document.createElement('figure');
  figure.className = 'chart';
  const caption = document.createElement('figcaption');
  caption.textContent = spec.title;
  const plot = document.createElement('div');
  plot.className = 'chart-plot';
  plot.setAttribute('role', 'img');
  plot.setAttribute('aria-label', `${spec.title}. ${summary(spec)}`);
  figure.append(caption, plot);
  container.append(figure);

  const total = spec.series.reduce((sum, s) => sum + s.values.reduce((a, v) => (a ?? 0) + (v ?? 0), 0), 0);
  if (total === 0) {
    const empty = document.createElement('p');
    empty.className = 'chart-empty';
    empty.textContent = 'Nothing counted in this period.';
    figure.append(empty);
  }

  const bars = spec.kind === 'bars' ? uPlot.paths.bars?.({ size: [0.8, 40], gap: 1 }) : undefined;
  const width = () => Math.max(240, Math.floor(plot.clientWidth || container.clientWidth || 600));
  /** @type {any} uPlot options */
  const options = {
    width: width(),
    height: spec.height ?? 220,
    legend: { live: false },
    // Axis labels in UTC, as the console writes every time, whatever the browser's zone.
    tzDate: (/** @type {number} */ ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
    axes: [
      { stroke: '#4a5563', grid: { stroke: '#e5e7eb' }, ticks: { stroke: '#d1d5db' } },
      {
        stroke: '#4a5563',
        grid: { stroke: '#e5e7eb' },
        ticks: { stroke: '#d1d5db' },
        size: 56,
        // Counts: whole numbers only on the axis.
        incrs: [
          1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 1e7, 1e8,
        ],
      },
    ],
    series: [
      {},
      ...spec.series.map((s, n) => {
        const color = s.color ?? PALETTE[n % PALETTE.length];
        return {
          label: s.label,
          stroke: color,
          width: 2,
          ...(s.dashed && { dash: [6, 4] }),
          fill: spec.kind === 'bars' ? `${color}cc` : undefined,
          points: { show: spec.kind !== 'bars' && spec.times.length < 60 },
          ...(bars && { paths: bars }),
        };
      }),
    ],
  };
  const data = /** @type {any} */ ([spec.times, ...spec.series.map((s) => s.values)]);
  const chart = new uPlot(options, data, plot);
  const resize = new ResizeObserver(() => chart.setSize({ width: width(), height: options.height ?? 220 }));
  resize.observe(plot);
  return () => {
    resize.disconnect();
    chart.destroy();
  };
}

/**
 * One sentence a screen reader says instead of the picture: each series' total and peak.
 * @param {ChartSpec} spec
 */
function summary(spec) {
  if (spec.times.length === 0) return 'No data.';
  const parts = spec.series.map((s) => {
    const values = s.values.map((v) => v ?? 0);
    return `${s.label}: ${values.reduce((a, v) => a + v, 0)} in all, at most ${Math.max(0, ...values)} per ${spec.step ?? 'step'}`;
  });
  return `${parts.join('; ')}.`;
}
