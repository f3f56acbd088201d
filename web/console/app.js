// @ts-check
/**
 * The operator's console (docs/console.md). The admin key lives in this module's memory only: a
 * reload, a new tab or "Sign out" forgets it.
 */
import { ApiProblem, createClient } from '../shared/api.js';

/** @type {{ client: import('../shared/api.js').Client, who: any } | undefined} */
let session;

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

async function signIn(/** @type {SubmitEvent} */ event) {
  event.preventDefault();
  const input = /** @type {HTMLInputElement} */ ($('sign-in-key'));
  const error = $('sign-in-error');
  error.textContent = '';
  const client = createClient(input.value.trim());
  try {
    const who = await client.post('/api/v1/console/sign-in');
    session = { client, who };
    input.value = '';
    $('signed-out').hidden = true;
    $('signed-in').hidden = false;
  } catch (problem) {
    error.textContent = problem instanceof ApiProblem ? problem.fullText : String(problem);
  }
}

$('sign-in-form').addEventListener('submit', signIn);
