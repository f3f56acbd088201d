/**
 * The claim page of an invitation (docs/portal.md): `/portal/claim#TOKEN`. The token is read from
 * the fragment, which browsers never send to a server, and goes only into the claim call's body.
 * The key is shown once; every refusal is shown in words.
 */
import { call, named, showNewKey, showProblem } from './api.js';

const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** Refusals after which claiming again with this link cannot work: the form goes away. */
const FINAL = new Set([
  'invitation_not_found',
  'invitation_expired',
  'invitation_used_up',
  'invitation_revoked',
  'signup_closed',
]);

function tokenFromFragment() {
  const raw = location.hash.slice(1);
  try {
    return decodeURIComponent(raw).trim();
  } catch {
    return raw.trim();
  }
}

function main() {
  // A link pasted into the address bar of this page changes only the fragment: start afresh with it.
  window.addEventListener('hashchange', () => location.reload());
  const token = tokenFromFragment();
  const form = /** @type {HTMLFormElement} */ ($('claim-form'));
  const nameInput = /** @type {HTMLInputElement} */ ($('claim-name'));
  const button = /** @type {HTMLButtonElement} */ ($('claim-button'));
  if (token === '') {
    $('claim-missing').hidden = false;
    return;
  }
  form.hidden = false;
  nameInput.focus();

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!named(nameInput, $('claim-problem'))) return;
    const name = nameInput.value.trim();
    button.disabled = true;
    const answer = await call('/api/v1/invitations/claim', { method: 'POST', body: { token, name } });
    button.disabled = false;
    if (!answer.ok) {
      showProblem($('claim-problem'), answer.problem);
      if (FINAL.has(answer.problem.code)) {
        form.hidden = true;
        $('claim-intro').hidden = true;
      } else nameInput.focus();
      return;
    }
    showProblem($('claim-problem'), undefined);
    form.hidden = true;
    $('claim-intro').hidden = true;
    // The invitation is spent: drop the token from the address bar and this tab's history entry.
    history.replaceState(null, '', location.pathname);
    showNewKey('claimed', answer.data, $('claim-done'));
  });
}

main();
