/**
 * The key holder's portal (docs/portal.md): sign in with your own key, see your tier, limits, what is
 * left and your usage, download it as CSV, and rotate the key where the tier allows it. The key lives
 * in this module's closure only: never in storage, a cookie or the URL; a reload asks for it again.
 */
import { download } from '../shared/api.js';
import { call, copyText, localTime, showProblem } from './api.js';
import { drawUsage } from './usage-chart.js';

const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** The zone days are cut in for the month view: the reader's, unless the server refuses it. */
function readerZone() {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

const HISTORY = '/api/v1/usage/history';

const PERIODS = {
  day: { granularity: 'PT1H', label: 'per hour, over the last day', zone: () => 'UTC' },
  month: { granularity: 'P1D', label: 'per day, over the last month', zone: readerZone },
};

function plural(n, one, many) {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`;
}

function windowWords(seconds) {
  const units = [
    [86_400, 'day', 'days'],
    [3_600, 'hour', 'hours'],
    [60, 'minute', 'minutes'],
  ];
  for (const [size, one, many] of units) {
    if (seconds % size === 0) return seconds === size ? `a ${one}` : plural(seconds / size, one, many);
  }
  return plural(seconds, 'second', 'seconds');
}

function main() {
  /** The signed-in key, or undefined: held here and nowhere else. */
  let key;
  let period = 'day';
  /** Which usage answer is on screen; a slower earlier answer must not replace a later one. */
  let usageTurn = 0;
  /** The zone the month view uses: the reader's, or UTC once the server refused the reader's. */
  let monthZone = PERIODS.month.zone();

  const signIn = $('sign-in');
  const account = $('account');
  const keyInput = /** @type {HTMLInputElement} */ ($('key-input'));
  const signInButton = /** @type {HTMLButtonElement} */ ($('sign-in-button'));

  function showSignIn(problem) {
    key = undefined;
    account.hidden = true;
    $('sign-out').hidden = true;
    signIn.hidden = false;
    $('new-key').value = '';
    $('rotate-done').hidden = true;
    showProblem($('sign-in-problem'), problem);
    keyInput.focus();
  }

  function renderUsage(usage) {
    $('fact-tier').textContent = usage.tier;
    $('fact-id').textContent = usage.keyId;
    $('fact-expires').textContent = usage.expiresAt === null ? 'Never' : localTime(usage.expiresAt);
    $('fact-kinds').textContent =
      usage.kinds === null ? 'Every kind of series' : `Series of kind ${usage.kinds.join(', ')}`;
    $('fact-history').textContent =
      usage.historyDays === null
        ? 'Every day there is'
        : `The last ${plural(usage.historyDays, 'day', 'days')}`;
    const warning = $('expiry-warning');
    warning.hidden = usage.expiryWarning === null;
    warning.textContent = usage.expiryWarning ?? '';
    $('limits-source').textContent = usage.ownLimits
      ? 'These limits are set for your key by the operator.'
      : `These are the limits of the ${usage.tier} tier. Every request takes one unit from each.`;

    const rows = usage.limits.map((limit) => {
      const row = document.createElement('tr');
      const name = document.createElement('th');
      name.scope = 'row';
      name.textContent = limit.name;
      const allowed = document.createElement('td');
      allowed.textContent = `${plural(limit.limit, 'request', 'requests')} per ${windowWords(limit.windowSeconds).replace(/^a /, '')}`;
      const left = document.createElement('td');
      const used = limit.limit - limit.remaining;
      const bar = document.createElement('span');
      bar.className = 'gauge';
      bar.setAttribute('aria-hidden', 'true');
      const fill = document.createElement('span');
      fill.style.width = `${Math.min(100, Math.round((used / limit.limit) * 100))}%`;
      if (limit.remaining === 0) fill.className = 'empty';
      bar.append(fill);
      const words = document.createElement('span');
      words.textContent = `${limit.remaining.toLocaleString()} of ${limit.limit.toLocaleString()}`;
      left.append(words, bar);
      const reset = document.createElement('td');
      reset.textContent = localTime(limit.resetAt);
      row.append(name, allowed, left, reset);
      return row;
    });
    $('limits-body').replaceChildren(...rows);

    const rotatable = usage.selfRotate === true;
    $('rotate-offered').hidden = !rotatable;
    $('rotate-not-offered').hidden = rotatable;
  }

  /** Reads `/usage` with the key; on success shows the account. Returns whether the key works. */
  async function loadAccount() {
    const answer = await call('/api/v1/usage', { key });
    if (!answer.ok) {
      if (answer.problem.status === 401) {
        showSignIn(answer.problem);
        return false;
      }
      showProblem(signIn.hidden ? $('account-problem') : $('sign-in-problem'), answer.problem);
      return false;
    }
    showProblem($('account-problem'), undefined);
    renderUsage(answer.data);
    return true;
  }

  /** The usage history's query for the period on screen. */
  function historyQuery() {
    const query = { granularity: PERIODS[period].granularity };
    if (period === 'month' && monthZone !== 'UTC') query.tz = monthZone;
    return query;
  }

  async function loadHistory() {
    const turn = ++usageTurn;
    let answer = await call(HISTORY, { key, query: historyQuery() });
    // A zone whose days do not begin on a whole UTC hour is refused: fall back to UTC days.
    if (
      !answer.ok &&
      answer.problem.code === 'invalid_parameter' &&
      period === 'month' &&
      monthZone !== 'UTC'
    ) {
      monthZone = 'UTC';
      answer = await call(HISTORY, { key, query: historyQuery() });
    }
    if (turn !== usageTurn || key === undefined) return;
    if (!answer.ok) {
      showProblem($('usage-problem'), answer.problem);
      return;
    }
    showProblem($('usage-problem'), undefined);
    const report = answer.data;
    const p = PERIODS[period];
    const zone = report.timezone === 'UTC' ? 'UTC' : report.timezone;
    $('usage-caption').textContent =
      `Requests ${p.label} (times in ${zone}): ${plural(report.totals.requests, 'request', 'requests')} in all, ` +
      `${report.totals.served.toLocaleString()} served, ${report.totals.rateLimited.toLocaleString()} refused by a limit.`;
    drawUsage($('usage-chart'), report);
    const totals = [
      ['Requests', report.totals.requests],
      ['Served', report.totals.served],
      ['Not modified', report.totals.notModified],
      ['Refused by a limit', report.totals.rateLimited],
      ['Other client errors', report.totals.clientErrors],
      ['Units taken', report.totals.units],
    ].map(([label, value]) => {
      const box = document.createElement('div');
      const dt = document.createElement('dt');
      dt.textContent = String(label);
      const dd = document.createElement('dd');
      dd.textContent = Number(value).toLocaleString();
      box.append(dt, dd);
      return box;
    });
    $('usage-totals').replaceChildren(...totals);
    const rows = report.intervals.map((interval) => {
      const row = document.createElement('tr');
      const start = document.createElement('th');
      start.scope = 'row';
      start.textContent = interval.start;
      row.append(start);
      for (const field of ['requests', 'served', 'notModified', 'rateLimited', 'clientErrors', 'units']) {
        const cell = document.createElement('td');
        cell.textContent = interval[field].toLocaleString();
        row.append(cell);
      }
      return row;
    });
    $('intervals-body').replaceChildren(...rows);
  }

  async function downloadCsv() {
    const status = $('download-status');
    status.textContent = 'Preparing the file…';
    const answer = await call(HISTORY, { key, query: historyQuery(), csv: true });
    if (!answer.ok) {
      status.textContent = '';
      showProblem($('usage-problem'), answer.problem);
      return;
    }
    const name = answer.data.filename ?? 'usage.csv';
    download(answer.data.text, name);
    status.textContent = `Downloaded ${name}.`;
  }

  function choosePeriod(next) {
    period = next;
    $('period-day').setAttribute('aria-pressed', String(next === 'day'));
    $('period-month').setAttribute('aria-pressed', String(next === 'month'));
    void loadHistory();
  }

  async function rotate() {
    const yes = /** @type {HTMLButtonElement} */ ($('rotate-yes'));
    yes.disabled = true;
    const answer = await call('/api/v1/key/rotate', { key, method: 'POST', body: {} });
    yes.disabled = false;
    $('rotate-confirm').hidden = true;
    if (!answer.ok) {
      showProblem($('rotate-problem'), answer.problem);
      return;
    }
    showProblem($('rotate-problem'), undefined);
    const rotated = answer.data;
    key = rotated.key;
    const field = /** @type {HTMLInputElement} */ ($('new-key'));
    field.value = rotated.key;
    $('new-key-copy-status').textContent = '';
    const until = rotated.previous?.expiresAt;
    $('rotate-grace').textContent =
      typeof until === 'string'
        ? `Your old key keeps working until ${localTime(until)}; after that only the new one does.`
        : 'Your old key no longer works; only the new one does.';
    $('rotate-done').hidden = false;
    $('new-key-title').focus();
    await loadAccount();
    await loadHistory();
  }

  $('sign-in-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const candidate = keyInput.value.trim();
    if (candidate === '') {
      showProblem($('sign-in-problem'), {
        code: 'missing_api_key',
        status: 0,
        headline: 'Enter your API key to sign in.',
        detail: '',
        requestId: undefined,
      });
      keyInput.focus();
      return;
    }
    signInButton.disabled = true;
    key = candidate;
    const works = await loadAccount();
    signInButton.disabled = false;
    if (!works) return;
    keyInput.value = '';
    showProblem($('sign-in-problem'), undefined);
    signIn.hidden = true;
    account.hidden = false;
    $('sign-out').hidden = false;
    $('account-title').focus?.();
    await loadHistory();
  });
  // Shown only now: a form sent before its handler was attached would leave the page.
  $('sign-in-form').hidden = false;
  $('sign-out').addEventListener('click', () => showSignIn(undefined));
  $('refresh').addEventListener('click', async () => {
    await loadAccount();
    await loadHistory();
  });
  $('period-day').addEventListener('click', () => choosePeriod('day'));
  $('period-month').addEventListener('click', () => choosePeriod('month'));
  $('download-csv').addEventListener('click', () => void downloadCsv());
  $('rotate-start').addEventListener('click', () => {
    $('rotate-confirm').hidden = false;
    $('rotate-yes').focus();
  });
  $('rotate-no').addEventListener('click', () => {
    $('rotate-confirm').hidden = true;
    $('rotate-start').focus();
  });
  $('rotate-yes').addEventListener('click', () => void rotate());
  $('new-key-copy').addEventListener('click', () =>
    copyText(
      /** @type {HTMLInputElement} */ ($('new-key')).value,
      $('new-key-copy-status'),
      /** @type {HTMLInputElement} */ ($('new-key')),
    ),
  );
  keyInput.focus();
}

main();
