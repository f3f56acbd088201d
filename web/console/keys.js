// @ts-check
/**
 * Keys (docs/keys-and-tiers.md): the list with search, a new key shown once, rotate, revoke, and a
 * key's page with its usage chart, CSV and every field an operator may change (`PATCH`).
 */
import { download } from '../shared/api.js';
import { timeChart } from '../shared/chart.js';
import {
  badge,
  count,
  dialog,
  field,
  formValue,
  h,
  localInputValue,
  noticeBox,
  secretBox,
  showProblem,
  showSuccess,
  table,
  utcInstant,
  when,
} from './dom.js';

export const SCOPES = ['read', 'write', 'admin'];

/**
 * @typedef {{ id: string, last4: string, name: string, tier: string, scopes: string[], createdAt: string,
 *   expiresAt: string | null, revokedAt: string | null, lastUsedAt: string | null,
 *   limits: { name: string, limit: number, windowSeconds: number }[] | null,
 *   allowedAddresses: string[] | null, customerRef: string | null, contact: string | null }} KeyView
 */

/**
 * Active, expired or revoked, as words and a tone.
 * @param {KeyView} key
 * @returns {[string, 'ok' | 'bad' | 'warn' | '']}
 */
function stateOf(key) {
  if (key.revokedAt) return ['revoked', 'bad'];
  if (key.expiresAt && Date.parse(key.expiresAt) <= Date.now()) return ['expired', 'bad'];
  if (key.expiresAt && Date.parse(key.expiresAt) - Date.now() < 14 * 86_400_000)
    return ['expires soon', 'warn'];
  return ['active', 'ok'];
}

/** `minute=600/60, day=100000/86400`, as `pricepoint keys --limits` takes them. @param {KeyView['limits']} limits */
export const limitsText = (limits) =>
  limits ? limits.map((l) => `${l.name}=${l.limit}/${l.windowSeconds}`).join(', ') : '';

/**
 * The limits text back as the API's list; empty: the tier's (null). A malformed entry is thrown in
 * words before anything is sent.
 * @param {string} text
 */
export function parseLimits(text) {
  if (!text.trim()) return null;
  return text
    .split(/[,\n]/)
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const match = /^([a-z][a-z0-9_-]{0,31})\s*=\s*(\d+)\s*\/\s*(\d+)$/.exec(part);
      if (!match) {
        throw new Error(`"${part}" is not a limit: write name=limit/windowSeconds, such as minute=600/60.`);
      }
      return { name: match[1], limit: Number(match[2]), windowSeconds: Number(match[3]) };
    });
}

/** @param {string} text one address or CIDR per line or comma; empty: any address (null) */
const parseAddresses = (text) => {
  const list = text
    .split(/[,\s]+/)
    .map((part) => part.trim())
    .filter(Boolean);
  return list.length > 0 ? list : null;
};

/**
 * The fields of a key's form, filled from `key` when it is given.
 * @param {string[]} tiers
 * @param {Partial<KeyView>} [key]
 */
function keyFields(tiers, key = {}) {
  const tierOptions = tiers.length > 0 ? tiers : [key.tier ?? 'free'];
  return [
    h(
      'div',
      { class: 'fields' },
      field('Name', { name: 'name', required: true, maxlength: 100, value: key.name ?? '' }),
      field('Tier', {
        tag: 'select',
        name: 'tier',
        options: tierOptions,
        value: key.tier ?? (tierOptions.includes('free') ? 'free' : tierOptions[0]),
      }),
      field(
        'Expires (UTC)',
        { name: 'expiresAt', type: 'datetime-local', value: localInputValue(key.expiresAt) },
        'Empty: never.',
      ),
      field('Customer reference', { name: 'customerRef', maxlength: 200, value: key.customerRef ?? '' }),
      field('Contact', { name: 'contact', maxlength: 200, value: key.contact ?? '' }),
    ),
    field(
      'Own limits',
      {
        name: 'limits',
        value: limitsText(key.limits ?? null),
        placeholder: 'minute=600/60, day=100000/86400',
      },
      "name=limit/windowSeconds, comma-separated; they replace the tier's. Empty: the tier's limits.",
    ),
    field(
      'Allowed addresses',
      { tag: 'textarea', name: 'allowedAddresses', rows: 2, value: (key.allowedAddresses ?? []).join('\n') },
      'IPv4 or IPv6 addresses or CIDRs, one per line. Empty: any address.',
    ),
  ];
}

/** @param {HTMLFormElement} form */
function keyBody(form) {
  return {
    name: formValue(form, 'name'),
    tier: formValue(form, 'tier'),
    expiresAt: utcInstant(formValue(form, 'expiresAt')),
    customerRef: formValue(form, 'customerRef') || null,
    contact: formValue(form, 'contact') || null,
    limits: parseLimits(formValue(form, 'limits')),
    allowedAddresses: parseAddresses(formValue(form, 'allowedAddresses')),
  };
}

/**
 * Rotate `key` after asking how long the old one may live; the new key is put into `into`, shown once.
 * @param {import('./app.js').Context} context
 * @param {KeyView} key
 * @param {HTMLElement} into
 */
async function rotate(context, key, into) {
  const rotated = await dialog({
    title: `Rotate "${key.name}"`,
    content: [
      h(
        'p',
        {},
        'A new key is made with the same name, tier, scopes and settings. The old one keeps working for the grace period, so that its holder can switch.',
      ),
      field('Grace period (hours)', { name: 'grace', type: 'number', min: 0, max: 720, step: 1, value: 24 }),
    ],
    submit: 'Rotate',
    onSubmit: (form) =>
      context.client.post(`/api/v1/keys/${encodeURIComponent(key.id)}/rotate`, {
        graceSeconds: Math.round(Number(formValue(form, 'grace') || 0) * 3600),
      }),
  });
  if (!rotated) return false;
  into.prepend(
    secretBox(
      `New key for ${rotated.name}`,
      rotated.key,
      `Shown this once: give it to the key's holder now. The old key (…${key.last4}) stops working ${when(rotated.previous.expiresAt)}.`,
    ),
  );
  return true;
}

/**
 * Revoke `key` after the operator confirms.
 * @param {import('./app.js').Context} context
 * @param {KeyView} key
 */
async function revoke(context, key) {
  const done = await dialog({
    title: `Revoke "${key.name}"?`,
    content: [
      h(
        'p',
        {},
        `The key ${key.id} (…${key.last4}) stops working at once, on every instance within seconds. This cannot be undone.`,
      ),
    ],
    submit: 'Revoke',
    danger: true,
    onSubmit: async () => {
      await context.client.del(`/api/v1/keys/${encodeURIComponent(key.id)}`);
      return true;
    },
  });
  return done === true;
}

/** @param {import('./app.js').Context} context */
export async function renderKeys(context) {
  const { client, main } = context;
  const [keys, tiers] = await Promise.all([
    /** @type {Promise<KeyView[]>} */ (client.get('/api/v1/keys')),
    context.tiers(),
  ]);
  if (!context.current()) return;

  const notice = noticeBox();
  const secrets = h('div', {});
  const list = h('div', {});
  const search = /** @type {HTMLInputElement} */ (
    h('input', { type: 'search', id: 'key-search', placeholder: 'Name, id, tier, customer…' })
  );
  const show = /** @type {HTMLSelectElement} */ (
    h(
      'select',
      { id: 'key-state' },
      h('option', { value: 'active' }, 'Active'),
      h('option', { value: 'all' }, 'All'),
      h('option', { value: 'revoked' }, 'Revoked or expired'),
    )
  );

  const draw = () => {
    const words = search.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    const shown = keys.filter((key) => {
      const [state] = stateOf(key);
      const live = state === 'active' || state === 'expires soon';
      if (show.value === 'active' && !live) return false;
      if (show.value === 'revoked' && live) return false;
      const text = [key.name, key.id, key.last4, key.tier, key.customerRef, key.contact, ...key.scopes]
        .join(' ')
        .toLowerCase();
      return words.every((word) => text.includes(word));
    });
    list.replaceChildren(
      h('p', { class: 'muted', role: 'status' }, `${shown.length} of ${keys.length} keys`),
      table(
        'Keys',
        ['Name', 'Key', 'Tier', 'Scopes', 'State', 'Expires', 'Last used', 'Customer', 'Actions'],
        shown.map((key) => {
          const [state, tone] = stateOf(key);
          const live = !key.revokedAt;
          return [
            h('a', { href: `#keys/${encodeURIComponent(key.id)}` }, key.name),
            h(
              'span',
              {},
              h('span', { class: 'mono nowrap' }, key.id),
              h('br'),
              h('span', { class: 'muted' }, `ends …${key.last4}`),
            ),
            key.tier,
            key.scopes.join(', '),
            badge(state, tone),
            when(key.expiresAt),
            when(key.lastUsedAt),
            key.customerRef ?? '—',
            h(
              'div',
              { class: 'actions' },
              live &&
                h(
                  'button',
                  {
                    type: 'button',
                    'aria-label': `Rotate ${key.name}`,
                    onclick: async () => {
                      if (await rotate(context, key, secrets)) await reload(`Rotated ${key.name}.`);
                    },
                  },
                  'Rotate',
                ),
              live &&
                h(
                  'button',
                  {
                    type: 'button',
                    class: 'danger',
                    'aria-label': `Revoke ${key.name}`,
                    onclick: async () => {
                      if (await revoke(context, key)) await reload(`Revoked ${key.name} (${key.id}).`);
                    },
                  },
                  'Revoke',
                ),
            ),
          ];
        }),
        keys.length === 0 ? 'No keys yet.' : 'No key matches.',
      ),
    );
  };

  /** @param {string} message */
  const reload = async (message) => {
    try {
      const fresh = /** @type {KeyView[]} */ (await client.get('/api/v1/keys'));
      keys.splice(0, keys.length, ...fresh);
      showSuccess(notice, message);
    } catch (problem) {
      showProblem(notice, problem);
    }
    draw();
  };

  const create = async () => {
    const created = await dialog({
      title: 'New key',
      content: [
        ...keyFields(tiers),
        h(
          'fieldset',
          {},
          h('legend', {}, 'Scopes'),
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
      submit: 'Create key',
      onSubmit: async (form) => {
        const scopes = [...form.querySelectorAll('input[name="scopes"]:checked')].map(
          (box) => /** @type {HTMLInputElement} */ (box).value,
        );
        const body = Object.fromEntries(
          Object.entries({ ...keyBody(form), scopes }).filter(([, value]) => value !== null),
        );
        return client.post('/api/v1/keys', body);
      },
    });
    if (!created) return;
    secrets.prepend(
      secretBox(
        `New key for ${created.name}`,
        created.key,
        'Shown this once: Pricepoint keeps only its hash. Copy it and give it to its holder now.',
      ),
    );
    await reload(`Created ${created.name} (${created.id}).`);
  };

  search.addEventListener('input', draw);
  show.addEventListener('change', draw);
  main.replaceChildren(
    h('h1', { tabindex: '-1' }, 'Keys'),
    notice,
    secrets,
    h(
      'div',
      { class: 'toolbar' },
      h('label', { class: 'grow' }, 'Search', search),
      h('label', {}, 'Show', show),
      h('button', { type: 'button', class: 'primary', onclick: create }, 'New key'),
    ),
    list,
  );
  draw();
}

/** @param {import('./app.js').Context} context */
export async function renderKey(context) {
  const { client, main } = context;
  const id = context.params[0] ?? '';
  const path = `/api/v1/keys/${encodeURIComponent(id)}`;
  const [key, tiers] = await Promise.all([
    /** @type {Promise<KeyView>} */ (client.get(path)),
    context.tiers(),
  ]);
  if (!context.current()) return;

  const notice = noticeBox();
  const secrets = h('div', {});
  const chart = h('div', { class: 'card' });
  const granularity = /** @type {HTMLSelectElement} */ (
    h(
      'select',
      { id: 'usage-granularity' },
      h('option', { value: 'PT1H' }, 'Last 24 hours, hourly'),
      h('option', { value: 'P1D' }, 'Last 31 days, daily'),
    )
  );
  const totals = h('div', { class: 'stats' });

  const drawUsage = async () => {
    try {
      const usage = await client.get(`${path}/usage`, { granularity: granularity.value });
      if (!context.current()) return;
      const hourly = granularity.value === 'PT1H';
      /** @param {string} name @param {string} label */
      const series = (name, label) => ({
        label,
        values: usage.intervals.map((/** @type {Record<string, number>} */ i) => i[name] ?? 0),
      });
      totals.replaceChildren(
        ...[
          ['requests', 'requests'],
          ['served', 'served'],
          ['notModified', 'not modified (304)'],
          ['rateLimited', 'refused by a limit (429)'],
          ['clientErrors', 'client errors'],
          ['units', 'units taken'],
        ].map(([name, label]) =>
          h(
            'div',
            { class: 'stat' },
            h('span', { class: 'value' }, count(usage.totals[name] ?? 0)),
            h('span', { class: 'label' }, label),
          ),
        ),
      );
      timeChart(chart, {
        title: `Usage of ${key.name}, ${hourly ? 'last 24 hours, hourly' : 'last 31 days, daily'}`,
        step: hourly ? 'hour' : 'day',
        times: usage.intervals.map((/** @type {{ start: string }} */ i) => Date.parse(i.start) / 1000),
        series: [
          series('served', 'Served'),
          series('notModified', 'Not modified'),
          series('rateLimited', 'Refused (429)'),
          series('clientErrors', 'Client errors'),
          { ...series('units', 'Units'), dashed: true },
        ],
      });
    } catch (problem) {
      showProblem(notice, problem);
    }
  };

  const csv = async () => {
    try {
      const { text, filename } = await client.getCsv(`${path}/usage`, { granularity: granularity.value });
      download(text, filename ?? `usage-${key.id}.csv`);
      showSuccess(
        notice,
        `Downloaded ${filename ?? 'the usage'} (${text.trim().split('\n').length - 1} rows).`,
      );
    } catch (problem) {
      showProblem(notice, problem);
    }
  };

  const [state, tone] = stateOf(key);
  const live = !key.revokedAt;
  const editForm = /** @type {HTMLFormElement} */ (
    h(
      'form',
      { class: 'stack', id: 'key-edit' },
      ...keyFields(tiers, key),
      h('div', {}, h('button', { type: 'submit', class: 'primary' }, 'Save changes')),
    )
  );
  editForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const wanted = keyBody(editForm);
      // Only what changed, so that a field the form cannot show exactly (an expiry's seconds) stays.
      /** @type {Record<string, unknown>} */
      const patch = {};
      for (const [name, value] of Object.entries(wanted)) {
        const before = /** @type {Record<string, unknown>} */ (key)[name];
        const same =
          name === 'expiresAt'
            ? localInputValue(/** @type {string | null} */ (before)) ===
              localInputValue(/** @type {string | null} */ (value))
            : JSON.stringify(before ?? null) === JSON.stringify(value);
        if (!same) patch[name] = value;
      }
      if (Object.keys(patch).length === 0) {
        showSuccess(notice, 'Nothing changed.');
        return;
      }
      const updated = await client.patch(path, patch);
      Object.assign(key, updated);
      showSuccess(notice, `Saved: ${Object.keys(patch).join(', ')}.`);
      drawFacts();
    } catch (problem) {
      showProblem(notice, problem);
    }
  });

  const facts = h('dl', { class: 'facts' });
  const drawFacts = () => {
    const rows = [
      ['Id', h('span', { class: 'mono' }, key.id)],
      ['Ends in', h('span', { class: 'mono' }, `…${key.last4}`)],
      ['Tier', key.tier],
      ['Scopes', key.scopes.join(', ')],
      ['State', badge(...stateOf(key))],
      ['Created', when(key.createdAt)],
      ['Expires', key.expiresAt ? when(key.expiresAt) : 'never'],
      ['Revoked', when(key.revokedAt)],
      ['Last used', when(key.lastUsedAt)],
      ['Own limits', limitsText(key.limits) || "the tier's"],
      ['Allowed addresses', key.allowedAddresses?.join(', ') ?? 'any'],
      ['Customer reference', key.customerRef ?? '—'],
      ['Contact', key.contact ?? '—'],
    ];
    facts.replaceChildren(...rows.flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]));
  };
  drawFacts();
  granularity.addEventListener('change', drawUsage);

  main.replaceChildren(
    h('p', {}, h('a', { href: '#keys' }, '← All keys')),
    h('h1', { tabindex: '-1' }, key.name, ' ', badge(state, tone)),
    notice,
    secrets,
    h(
      'div',
      { class: 'toolbar' },
      h('label', {}, 'Period', granularity),
      h('button', { type: 'button', onclick: csv }, 'Download CSV'),
      live &&
        h(
          'button',
          {
            type: 'button',
            onclick: async () => {
              if (await rotate(context, key, secrets)) showSuccess(notice, `Rotated ${key.name}.`);
            },
          },
          'Rotate',
        ),
      live &&
        h(
          'button',
          {
            type: 'button',
            class: 'danger',
            onclick: async () => {
              if (await revoke(context, key)) {
                Object.assign(key, await client.get(path));
                showSuccess(notice, `Revoked ${key.name}.`);
                drawFacts();
              }
            },
          },
          'Revoke',
        ),
    ),
    totals,
    chart,
    h(
      'div',
      { class: 'grid' },
      h('section', { class: 'card' }, h('h2', {}, 'Details'), facts),
      h('section', { class: 'card' }, h('h2', {}, 'Change'), editForm),
    ),
  );
  await drawUsage();
}
