// @ts-check
/** Webhooks (docs/webhooks.md): the endpoints, each one's deliveries, and redelivery. */
import { badge, h, noticeBox, showProblem, showSuccess, table, when } from './dom.js';

/** @type {Record<string, 'ok' | 'bad' | 'warn' | ''>} */
const TONES = { delivered: 'ok', failed: 'bad', pending: 'warn' };

/** @param {import('./app.js').Context} context */
export async function renderWebhooks(context) {
  const { client, main } = context;
  const hooks = await client.get('/api/v1/webhooks');
  if (!context.current()) return;
  main.replaceChildren(
    h('h1', { tabindex: '-1' }, 'Webhooks'),
    h(
      'p',
      { class: 'muted' },
      'Signed deliveries of price events to your endpoints. Open one to see its deliveries.',
    ),
    table(
      'Webhooks',
      ['Endpoint', 'Events', 'Symbols', 'State', 'Deliveries'],
      hooks.map((/** @type {any} */ hook) => [
        h('span', { class: 'mono' }, hook.url),
        hook.events.join(', '),
        hook.symbols ? hook.symbols.join(', ') : 'all',
        hook.enabled
          ? badge('enabled', 'ok')
          : badge(`disabled${hook.disabledReason ? `: ${hook.disabledReason}` : ''}`, 'bad'),
        h(
          'a',
          { href: `#webhooks/${encodeURIComponent(hook.id)}`, 'aria-label': `Deliveries of ${hook.url}` },
          'Deliveries',
        ),
      ]),
      'No webhooks yet (POST /api/v1/webhooks makes one; docs/webhooks.md).',
    ),
  );
}

/** @param {import('./app.js').Context} context */
export async function renderDeliveries(context) {
  const { client, main } = context;
  const id = context.params[0] ?? '';
  const path = `/api/v1/webhooks/${encodeURIComponent(id)}`;
  const [hook, deliveries] = await Promise.all([client.get(path), client.get(`${path}/deliveries`)]);
  if (!context.current()) return;
  const notice = noticeBox();
  const list = h('div', {});

  /** @param {any[]} rows */
  const draw = (rows) =>
    list.replaceChildren(
      table(
        'Deliveries',
        [
          'Event',
          'State',
          'Attempts',
          'Last attempt',
          'Next attempt',
          'Status',
          'Latency',
          'Error',
          'Redeliver',
        ],
        rows.map((delivery) => [
          h('span', { class: 'mono' }, delivery.eventId),
          badge(delivery.state, TONES[delivery.state] ?? ''),
          { num: delivery.attempts },
          when(delivery.lastAttemptAt),
          when(delivery.nextAttemptAt),
          delivery.status === null ? '—' : String(delivery.status),
          delivery.latencyMs === null ? '—' : `${delivery.latencyMs} ms`,
          delivery.error ?? '—',
          h(
            'button',
            {
              type: 'button',
              'aria-label': `Redeliver ${delivery.eventId}`,
              onclick: async () => {
                try {
                  await client.post(`${path}/deliveries/${encodeURIComponent(delivery.eventId)}/redeliver`);
                  showSuccess(notice, `Queued ${delivery.eventId} for delivery again.`);
                  draw(await client.get(`${path}/deliveries`));
                } catch (problem) {
                  showProblem(notice, problem);
                }
              },
            },
            'Redeliver',
          ),
        ]),
        'No deliveries yet.',
      ),
    );

  main.replaceChildren(
    h('p', {}, h('a', { href: '#webhooks' }, '← All webhooks')),
    h('h1', { tabindex: '-1' }, 'Deliveries'),
    h('p', { class: 'mono' }, hook.url),
    notice,
    list,
  );
  draw(deliveries);
}
