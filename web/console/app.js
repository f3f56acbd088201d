// @ts-check
/**
 * The operator's console (docs/console.md). The admin key lives in this module's memory only: never
 * in storage, a cookie or the URL, so a reload, a new tab or "Sign out" forgets it. Sections are
 * routed by the URL's fragment (`#keys`, `#keys/key_…`), which never holds anything secret.
 */
import { ApiProblem, createClient } from '../shared/api.js';
import { renderAudit } from './audit.js';
import { h, problemText } from './dom.js';
import { renderInvitations } from './invitations.js';
import { renderKey, renderKeys } from './keys.js';
import { renderOverview } from './overview.js';
import { renderSources } from './sources.js';
import { renderDeliveries, renderWebhooks } from './webhooks.js';

/**
 * @typedef {object} Session
 * @property {import('../shared/api.js').Client} client
 * @property {{ id: string, name: string, tier: string, scopes: string[] }} who
 */

/**
 * What a section is given to draw itself.
 * @typedef {object} Context
 * @property {import('../shared/api.js').Client} client
 * @property {HTMLElement} main
 * @property {string[]} params what follows the section's name in the fragment
 * @property {() => Promise<string[]>} tiers the tier names, asked once per session
 * @property {() => boolean} current false once the operator has moved on to another section
 */

/** @type {Session | undefined} */
let session;
/** @type {Promise<string[]> | undefined} */
let tierNames;
/** Bumped on every navigation, so that a section whose answers arrive late draws nothing. */
let generation = 0;

const SECTIONS = /** @type {const} */ ({
  overview: { title: 'Overview', render: renderOverview },
  keys: { title: 'Keys', render: renderKeys, detail: renderKey },
  invitations: { title: 'Invitations', render: renderInvitations },
  sources: { title: 'Sources', render: renderSources },
  webhooks: { title: 'Webhooks', render: renderWebhooks, detail: renderDeliveries },
  audit: { title: 'Audit log', render: renderAudit },
});

const byId = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

async function signIn(/** @type {SubmitEvent} */ event) {
  event.preventDefault();
  const input = /** @type {HTMLInputElement} */ (byId('sign-in-key'));
  const error = byId('sign-in-error');
  const button = /** @type {HTMLButtonElement} */ (event.submitter);
  error.textContent = '';
  const key = input.value.trim();
  if (!key) {
    error.textContent = 'Enter an admin key.';
    return;
  }
  button.disabled = true;
  const client = createClient(key);
  try {
    const who = await client.post('/api/v1/console/sign-in');
    session = { client, who };
    input.value = '';
    byId('who').textContent = `Signed in as ${who.name} (${who.id})`;
    for (const id of ['who', 'sign-out', 'signed-in']) byId(id).hidden = false;
    byId('signed-out').hidden = true;
    if (!location.hash) history.replaceState(null, '', '#overview');
    await route();
  } catch (problem) {
    error.textContent =
      problem instanceof ApiProblem && problem.status === 401
        ? `That key was not accepted: ${problem.fullText}`
        : problem instanceof ApiProblem && problem.status === 403
          ? `That key may not use the console (it needs the admin scope): ${problem.fullText}`
          : problemText(problem);
  } finally {
    button.disabled = false;
  }
}

function signOut() {
  session = undefined;
  tierNames = undefined;
  generation += 1;
  byId('content').replaceChildren();
  for (const id of ['who', 'sign-out', 'signed-in']) byId(id).hidden = true;
  byId('signed-out').hidden = false;
  /** @type {HTMLInputElement} */ (byId('sign-in-key')).focus();
}

/** Draws the section the fragment names. */
async function route() {
  if (!session) return;
  const [name = 'overview', ...params] = location.hash.slice(1).split('/').map(decodeURIComponent);
  const section = SECTIONS[/** @type {keyof typeof SECTIONS} */ (name)] ?? SECTIONS.overview;
  const main = byId('content');
  generation += 1;
  const mine = generation;
  for (const link of document.querySelectorAll('nav.sections a')) {
    const here = link.getAttribute('href') === `#${name}`;
    if (here) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  document.title = `${section.title} · Pricepoint console`;
  main.replaceChildren(h('p', { class: 'muted', role: 'status' }, 'Loading…'));
  const { client } = session;
  /** @type {Context} */
  const context = {
    client,
    main,
    params,
    tiers: () => {
      tierNames ??= client
        .get('/api/v1/usage/overview', { granularity: 'P1D' })
        .then((/** @type {{ tiers: string[] }} */ overview) => overview.tiers)
        .catch(() => []);
      return tierNames;
    },
    current: () => mine === generation && session !== undefined,
  };
  try {
    const render = 'detail' in section && params.length > 0 ? section.detail : section.render;
    await render(context);
  } catch (problem) {
    if (!context.current()) return;
    main.replaceChildren(
      h('h1', { tabindex: '-1' }, section.title),
      h('p', { class: 'notice error', role: 'alert' }, problemText(problem)),
    );
  }
  if (context.current()) main.querySelector('h1')?.focus();
}

byId('sign-in-form').addEventListener('submit', signIn);
// Shown only now: sent before its handler was attached, the form would put the key in the URL.
byId('sign-in-form').hidden = false;
byId('sign-out').addEventListener('click', signOut);
window.addEventListener('hashchange', route);
