/**
 * Open sign-up (docs/portal.md): where the operator turned it on for one tier, a visitor names a key
 * and gets it, shown once. Where it is off, the page says sign-up is by invitation. The server writes
 * which into the page; a sign-up the server refuses anyway is shown in words.
 */
import { call, named, showNewKey, showProblem } from './api.js';

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
    if (!named(nameInput, $('signup-problem'))) return;
    const name = nameInput.value.trim();
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
    showProblem($('signup-problem'), undefined);
    $('signup-open').hidden = true;
    showNewKey('signed-up', answer.data, $('signup-done'));
  });
}

main();
