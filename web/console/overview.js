// @ts-check
/**
 * Overview: requests, 429s and units by tier over the last day (hourly) and month (daily), from
 * `GET /api/v1/usage/overview` (docs/usage-history.md). The server's defaults pick the ranges, so
 * the pictures follow the server's clock, not the browser's.
 */
import { PALETTE, timeChart } from '../shared/chart.js';
import { count, h } from './dom.js';

/**
 * @typedef {{ requests: number, served: number, notModified: number, rateLimited: number,
 *   clientErrors: number, units: number, keys: number }} Counts
 * @typedef {{ granularity: string, from: string, to: string, tiers: string[],
 *   totals: Record<string, Counts>, intervals: { start: string, tiers: Record<string, Counts> }[] }} Overview
 */

const MEASURES = /** @type {const} */ ([
  ['requests', 'Requests'],
  ['rateLimited', 'Refused by a limit (429)'],
  ['units', 'Units taken'],
]);

/** @param {import('./app.js').Context} context */
export async function renderOverview(context) {
  const { client, main } = context;
  const [day, month] = /** @type {[Overview, Overview]} */ (
    await Promise.all([
      client.get('/api/v1/usage/overview', { granularity: 'PT1H' }),
      client.get('/api/v1/usage/overview', { granularity: 'P1D' }),
    ])
  );
  if (!context.current()) return;

  /** @param {Overview} overview @param {keyof Counts} measure */
  const sum = (overview, measure) =>
    Object.values(overview.totals).reduce((total, counts) => total + (counts[measure] ?? 0), 0);
  const stat = (/** @type {string} */ label, /** @type {number} */ value) =>
    h(
      'div',
      { class: 'stat' },
      h('span', { class: 'value' }, count(value)),
      h('span', { class: 'label' }, label),
    );

  main.replaceChildren(
    h('h1', { tabindex: '-1' }, 'Overview'),
    h('h2', {}, 'Last 24 hours'),
    h(
      'div',
      { class: 'stats' },
      stat('requests', sum(day, 'requests')),
      stat('refused by a limit (429)', sum(day, 'rateLimited')),
      stat('client errors', sum(day, 'clientErrors')),
      stat('units taken', sum(day, 'units')),
      stat('keys in use', sum(day, 'keys')),
    ),
    charts(day, 'line', 'hour', 'last 24 hours, hourly'),
    h('h2', {}, 'Last 31 days'),
    h(
      'div',
      { class: 'stats' },
      stat('requests', sum(month, 'requests')),
      stat('refused by a limit (429)', sum(month, 'rateLimited')),
      stat('units taken', sum(month, 'units')),
    ),
    charts(month, 'line', 'day', 'last 31 days, daily'),
    h(
      'p',
      { class: 'muted' },
      `Times in UTC. ${day.from.slice(0, 16).replace('T', ' ')} to ${day.to.slice(0, 16).replace('T', ' ')} hourly; a key's usage is shown under the tier it is in now.`,
    ),
  );
}

/**
 * One chart per measure, a series per tier (tiers with nothing counted are left out, all of them
 * shown when none counted anything).
 * @param {Overview} overview
 * @param {'line' | 'bars'} kind
 * @param {'hour' | 'day'} step
 * @param {string} period
 */
function charts(overview, kind, step, period) {
  const grid = h('div', { class: 'grid charts' });
  const used = overview.tiers.filter((tier) => (overview.totals[tier]?.requests ?? 0) > 0);
  const tiers = used.length > 0 ? used : overview.tiers;
  const times = overview.intervals.map((interval) => Date.parse(interval.start) / 1000);
  // Drawn once the grid is in the page, so that each chart takes its container's width.
  requestAnimationFrame(() => {
    for (const [measure, label] of MEASURES) {
      const cell = h('div', { class: 'card', 'data-chart': measure });
      grid.append(cell);
      timeChart(cell, {
        title: `${label} by tier, ${period}`,
        kind,
        step,
        times,
        series: tiers.map((tier) => ({
          label: tier,
          color: PALETTE[overview.tiers.indexOf(tier) % PALETTE.length],
          values: overview.intervals.map((interval) => interval.tiers[tier]?.[measure] ?? 0),
        })),
      });
    }
  });
  return grid;
}
