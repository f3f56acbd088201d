// @ts-check
/**
 * Invitations (docs/invitations.md): an operator makes one, sends its claim link (shown once), and
 * the customer names and claims a key in the portal; the list shows what became of each.
 */

import {
  badge,
  dialog,
  field,
  formValue,
  h,
  noticeBox,
  secretBox,
  showProblem,
  showSuccess,
  table,
  utcInstant,
  when,
} from './dom.js';
import { SCOPES } from './keys.js';

/** @type {Record<string, 'ok' | 'bad' | 'warn' | ''>} */
const TONES = { active: 'ok', expired: 'warn', used_up: '', revoked: 'bad' };

/** @param {import('./app.js').Context} context */
export async function renderInvitations(context) {
  const { client, main } = context;
  const [answer, tiers] = await Promise.all([client.get('/api/v1/invitations'), context.tiers()]);
  if (!context.current()) return;
  // A list, or a list under `invitations`.
  /** @type {any[]} */
  const invitations = Array.isArray(answer) ? answer : (answer.invitations ?? []);

  const notice = noticeBox();
  const secrets = h('div', {});
  const list = h('div', {});

  const draw = () =>
    list.replaceChildren(
      table(
        'Invitations',
        ['Note', 'Tier', 'Scopes', 'State', 'Claimed', 'Expires', 'Keys expire', 'Created', 'Actions'],
        invitations.map((inv) => [
          inv.note ?? '—',
          inv.tier,
          (inv.scopes ?? []).join(', '),
          badge(String(inv.state ?? '').replace('_', ' '), TONES[inv.state] ?? ''),
          `${inv.claimed ?? 0} of ${inv.uses}`,
          when(inv.expiresAt),
          inv.keyExpiresAt ? when(inv.keyExpiresAt) : 'never',
          when(inv.createdAt),
          inv.state === 'active'
            ? h(
                'button',
                {
                  type: 'button',
                  class: 'danger',
                  'aria-label': `Revoke the invitation ${inv.note ?? inv.id}`,
                  onclick: () => revoke(inv),
                },
                'Revoke',
              )
            : '',
        ]),
        'No invitations yet.',
      ),
    );

  /** @param {string} message */
  const reload = async (message) => {
    try {
      const fresh = await client.get('/api/v1/invitations');
      invitations.splice(
        0,
        invitations.length,
        ...(Array.isArray(fresh) ? fresh : (fresh.invitations ?? [])),
      );
      showSuccess(notice, message);
    } catch (problem) {
      showProblem(notice, problem);
    }
    draw();
  };

  /** @param {any} inv */
  const revoke = async (inv) => {
    const done = await dialog({
      title: 'Revoke this invitation?',
      content: [h('p', {}, 'Its link stops working at once. Keys already claimed with it keep working.')],
      submit: 'Revoke',
      danger: true,
      onSubmit: async () => {
        await client.del(`/api/v1/invitations/${encodeURIComponent(inv.id)}`);
        return true;
      },
    });
    if (done) await reload(`Revoked the invitation ${inv.note ?? inv.id}.`);
  };

  const create = async () => {
    const tierOptions = tiers.length > 0 ? tiers : ['free'];
    const week = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 16);
    const created = await dialog({
      title: 'New invitation',
      content: [
        h(
          'div',
          { class: 'fields' },
          field('Tier', {
            tag: 'select',
            name: 'tier',
            options: tierOptions,
            value: tierOptions.includes('free') ? 'free' : tierOptions[0],
          }),
          field(
            'Uses',
            { name: 'uses', type: 'number', min: 1, max: 1000, value: 1, required: true },
            'How many keys it may make.',
          ),
          field('Link expires (UTC)', {
            name: 'expiresAt',
            type: 'datetime-local',
            value: week,
            required: true,
          }),
          field('Keys expire (UTC)', { name: 'keyExpiresAt', type: 'datetime-local' }, 'Empty: never.'),
        ),
        field(
          'Note',
          { name: 'note', maxlength: 200, placeholder: 'Who it is for' },
          'For you; the customer does not see it.',
        ),
        h(
          'fieldset',
          {},
          h('legend', {}, 'Scopes of the keys it makes'),
          ...SCOPES.map((scope) =>
            h(
              'label',
              {},
              h('input', { type: 'checkbox', name: 'scopes', value: scope, checked: scope === 'read' }),
              scope,
            ),
          ),
        ),
      ],
      submit: 'Create invitation',
      onSubmit: (form) => {
        const scopes = [...form.querySelectorAll('input[name="scopes"]:checked')].map(
          (box) => /** @type {HTMLInputElement} */ (box).value,
        );
        const note = formValue(form, 'note');
        return client.post('/api/v1/invitations', {
          tier: formValue(form, 'tier'),
          scopes,
          uses: Number(formValue(form, 'uses')),
          expiresAt: utcInstant(formValue(form, 'expiresAt')),
          keyExpiresAt: utcInstant(formValue(form, 'keyExpiresAt')),
          ...(note && { note }),
        });
      },
    });
    if (!created) return;
    secrets.prepend(
      secretBox(
        'Claim link',
        created.claimUrl,
        'Shown this once: send it to the customer now. Whoever has it can claim a key, until it expires or its uses are taken.',
      ),
    );
    await reload('Created an invitation.');
  };

  main.replaceChildren(
    h('h1', { tabindex: '-1' }, 'Invitations'),
    h(
      'p',
      { class: 'muted' },
      'A one-time link with which a customer names and claims a key in the portal, without you in between.',
    ),
    notice,
    secrets,
    h(
      'div',
      { class: 'toolbar' },
      h('button', { type: 'button', class: 'primary', onclick: create }, 'New invitation'),
    ),
    list,
  );
  draw();
}
