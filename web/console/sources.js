// @ts-check
/** Sources (docs/sources.md): what each connector did last and will do next, and a run on demand. */
import { badge, h, noticeBox, showProblem, showSuccess, table, when } from './dom.js';

/** @type {Record<string, 'ok' | 'bad' | 'warn' | ''>} */
const TONES = { written: 'ok', not_published: 'warn', failed: 'bad', busy: 'warn', too_soon: 'warn' };

/** @param {import('./app.js').Context} context */
export async function renderSources(context) {
  const { client, main } = context;
  const notice = noticeBox();
  const list = h('div', {});

  const draw = async () => {
    const { sources } = await client.get('/api/v1/sources');
    if (!context.current()) return;
    list.replaceChildren(
      table(
        'Sources',
        [
          'Source',
          'Status',
          'Last run',
          'Last success',
          'Next run',
          'Failures in a row',
          'Last error',
          'Run',
        ],
        sources.map((/** @type {any} */ source) => [
          h('span', {}, h('strong', {}, source.name), h('br'), h('span', { class: 'muted' }, source.type)),
          source.running
            ? badge('running', 'warn')
            : source.lastOutcome
              ? badge(source.lastOutcome.replace('_', ' '), TONES[source.lastOutcome] ?? '')
              : badge('not run yet'),
          when(source.lastRun),
          when(source.lastSuccess),
          when(source.nextRun),
          { num: source.failuresInARow ?? 0 },
          source.lastError ? `${when(source.lastError.at)}: ${source.lastError.message}` : '—',
          h(
            'button',
            {
              type: 'button',
              'aria-label': `Run now: ${source.name}`,
              disabled: source.running,
              onclick: async (/** @type {MouseEvent} */ event) => {
                const button = /** @type {HTMLButtonElement} */ (event.currentTarget);
                button.disabled = true;
                try {
                  const run = await client.post(`/api/v1/sources/${encodeURIComponent(source.name)}/run`);
                  const words = `${source.name}: ${run.outcome.replace('_', ' ')}. ${run.message}`;
                  if (run.outcome === 'failed') showProblem(notice, new Error(words));
                  else showSuccess(notice, words);
                } catch (problem) {
                  showProblem(notice, problem);
                }
                await draw().catch((problem) => showProblem(notice, problem));
              },
            },
            'Run now',
          ),
        ]),
        'No sources are configured (docs/sources.md tells how).',
      ),
    );
  };

  await draw();
  if (!context.current()) return;
  main.replaceChildren(
    h('h1', { tabindex: '-1' }, 'Sources'),
    h(
      'p',
      { class: 'muted' },
      'Connectors that fetch prices by themselves, on their schedules. Times in UTC.',
    ),
    notice,
    list,
  );
}
