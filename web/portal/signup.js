/**
 * Open sign-up (docs/portal.md): where the operator turned it on for one tier, a visitor names a key
 * and gets it, shown once. Where it is off, the page says sign-up is by invitation. The server writes
 * which into the page; a sign-up the server refuses anyway is shown in words.
 */
import { call, copyText, localTime, showProblem } from './api.js';

const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

function main() {
  const open = document.body.dataset.signup === 'open';
  $('signup-closed').hidden = open;
  $('signup-open').hidden = !open;
  if (!open) return;
  const tier = document.body.dataset.signupTier ?? '';
  $('signup-intro').textContent =
    `Name your key and get it at once, in the ${tier} tier: its limits apply to every request you make with it. ` +
    'You can see them, and what is left, in your portal.';
  const form = /** @type {HTMLFormElement} */ ($('signup-form'));
  const nameInput = /** @type {HTMLInputElement} */ ($('signup-name'));
  const button = /** @type {HTMLButtonElement} */ ($('signup-button'));
  nameInput.focus();

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const name = nameInput.value.trim();
    if (name === '') {
      showProblem($('signup-problem'), {
        code: 'invalid_parameter',
        status: 0,
        headline: 'Give your key a name first.',
        detail: '',
        requestId: undefined,
      });
      nameInput.focus();
      return;
    }
    button.disabled = true;
    const answer = await call('/api/v1/signup', { method: 'POST', body: { name } });
    button.disabled = false;
    if (!answer.ok) {
      // Sign-up's own limit is per client address, not a key's: say so in its words.
      const problem =
        answer.problem.code === 'rate_limited'
          ? { ...answer.problem, headline: 'As many keys as allowed were made from your address for now.' }
          : answer.problem;
      showProblem($('signup-problem'), problem);
      if (answer.problem.code === 'signup_closed') $('signup-open').hidden = true;
      else nameInput.focus();
      return;
    }
    const made = answer.data;
    showProblem($('signup-problem'), undefined);
    $('signup-open').hidden = true;
    /** @type {HTMLInputElement} */ ($('signed-up-key')).value = made.key;
    $('signed-up-name').textContent = made.name;
    $('signed-up-tier').textContent = made.tier;
    $('signed-up-scopes').textContent = (made.scopes ?? []).join(', ');
    $('signed-up-expires').textContent =
      made.expiresAt === null || made.expiresAt === undefined ? 'Never' : localTime(made.expiresAt);
    $('signup-done').hidden = false;
    $('signed-up-title').focus();
  });
  $('signed-up-copy').addEventListener('click', () =>
    copyText(
      /** @type {HTMLInputElement} */ ($('signed-up-key')).value,
      $('signed-up-copy-status'),
      /** @type {HTMLInputElement} */ ($('signed-up-key')),
    ),
  );
}

main();
