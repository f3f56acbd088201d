// @ts-check
/**
 * The audit log (docs/audit.md): who did what, when, from where, to what, and how it ended; newest
 * first, filtered and paged as `GET /api/v1/audit` allows.
 */
import { badge, field, formValue, h, noticeBox, showProblem, table, utcInstant, when } from './dom.js';

/**
 * The actions the server records, from its OpenAPI document (the audit route's `action` parameter),
 * so that the filter offers exactly what this server writes.
 * @param {import('../shared/api.js').Client} client
 * @returns {Promise<string[]>}
 */
async function actions(client) {
  try {
    const document = await client.get('/api/v1/openapi.json');
    const parameters = document.paths?.['/api/v1/audit']?.get?.parameters ?? [];
    const action = parameters.find((/** @type {any} */ p) => p.name === 'action');
    return action?.schema?.enum ?? [];
  } catch {
    return [];
  }
}

/** @param {import('./app.js').Context} context */
export async function renderAudit(context) {
  const { client, main } = context;
  const names = await actions(client);
  if (!context.current()) return;
  const notice = noticeBox();
  const list = h('div', {});
  const more = /** @type {HTMLButtonElement} */ (
    h('button', { type: 'button', hidden: true }, 'Older entries')
  );
  /** @type {any[]} */
  let entries = [];
  /** @type {string | null} */
  let next = null;

  const draw = () => {
    list.replaceChildren(
      table(
        'Audit log',
        ['Time', 'Action', 'Target', 'Acting key', 'Address', 'Outcome'],
        entries.map((entry) => {
          const ok =
            entry.outcome.code === null && (entry.outcome.status === null || entry.outcome.status < 400);
          const outcome = [entry.outcome.status, entry.outcome.code]
            .filter((part) => part !== null)
            .join(' ');
          return [
            when(entry.time),
            h('span', { class: 'mono' }, entry.action),
            entry.target ? h('span', { class: 'mono' }, entry.target) : '—',
            entry.actor.startsWith('key_')
              ? h('a', { href: `#keys/${encodeURIComponent(entry.actor)}`, class: 'mono' }, entry.actor)
              : h('span', { class: 'mono' }, entry.actor),
            entry.address ?? '—',
            badge(outcome || 'done', ok ? 'ok' : 'bad'),
          ];
        }),
        'No entries match.',
      ),
    );
    more.hidden = next === null;
  };

  /** @param {Record<string, string | undefined> | string} what the filters, or the URL of the next page */
  const load = async (what) => {
    try {
      const page =
        typeof what === 'string' ? await client.get(what) : await client.get('/api/v1/audit', what);
      entries = typeof what === 'string' ? [...entries, ...page.entries] : page.entries;
      next = page.next;
      showProblem(notice, undefined);
      notice.className = 'notice';
    } catch (problem) {
      showProblem(notice, problem);
    }
    draw();
  };

  const filters = /** @type {HTMLFormElement} */ (
    h(
      'form',
      { class: 'toolbar', id: 'audit-filters' },
      field('Action', { tag: 'select', name: 'action', options: [['', 'Any'], ...names.map((n) => [n, n])] }),
      field('Acting key', { name: 'actor', placeholder: 'key_…, cli, anonymous', size: 18 }),
      field('From (UTC)', { name: 'from', type: 'datetime-local' }),
      field('To (UTC)', { name: 'to', type: 'datetime-local' }),
      h('button', { type: 'submit', class: 'primary' }, 'Filter'),
    )
  );
  const query = () => ({
    action: formValue(filters, 'action') || undefined,
    actor: formValue(filters, 'actor') || undefined,
    from: utcInstant(formValue(filters, 'from')) ?? undefined,
    to: utcInstant(formValue(filters, 'to')) ?? undefined,
    limit: '50',
  });
  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    void load(query());
  });
  more.addEventListener('click', () => {
    if (next) void load(next);
  });

  main.replaceChildren(
    h('h1', { tabindex: '-1' }, 'Audit log'),
    h(
      'p',
      { class: 'muted' },
      'Every admin action, newest first. It never holds a key or a secret. Times in UTC.',
    ),
    filters,
    notice,
    list,
    h('p', {}, more),
  );
  await load(query());
}
