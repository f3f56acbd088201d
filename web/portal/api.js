/**
 * Calls to this server's API from the portal's pages, and their problems in plain words
 * (docs/portal.md), over the pages' shared fetch wrapper (../shared/api.js): relative URLs only, a
 * key only in the `x-api-key` header, never in a URL.
 */
import { ApiProblem, createClient } from '../shared/api.js';

/**
 * What a key holder reads for each problem code the portal's calls can meet; the server's own
 * `detail` follows it. A code not listed is shown by its title and detail alone.
 */
const WORDS = {
  missing_api_key: 'Enter your API key to sign in.',
  invalid_api_key:
    'That key was not accepted: it is unknown, revoked or expired. Check that you pasted all of it, or ask the operator for a new one.',
  conflicting_api_keys: 'The request carried two different keys.',
  too_many_auth_failures: 'Too many failed attempts from your address: wait a minute, then try again.',
  rate_limited: 'Your key has used up a limit of its tier for now.',
  insufficient_scope: 'Your key may not do this.',
  address_not_allowed: 'Your key may not be used from this network address.',
  self_rotation_not_allowed:
    "Your key's tier does not let you rotate the key yourself: ask the operator for a new key.",
  invitation_not_found:
    'This invitation link is not known. Check that you opened the whole link as you received it, or ask for a new one.',
  invitation_expired: 'This invitation has expired. Ask whoever sent it for a new one.',
  invitation_used_up:
    'This invitation has already been used as many times as it allows. Ask whoever sent it for a new one.',
  invitation_revoked: 'This invitation was withdrawn by the operator. Ask whoever sent it for a new one.',
  signup_closed:
    'Sign-up without an invitation is not open on this server: ask the operator for an invitation.',
  invalid_parameter: 'The server did not accept what was sent.',
  network: 'The server could not be reached. Check your connection and try again.',
  payload_too_large: 'What was sent is too long.',
  service_unavailable: 'The server cannot answer right now; try again in a moment.',
  internal: 'The server failed to answer; try again, and tell the operator if it keeps happening.',
};

/**
 * A problem as the pages show it: `headline` in plain words, `detail` from the server (or why the
 * server could not be reached), and the code and request id for the operator.
 * @typedef {{ code: string, status: number, headline: string, detail: string, requestId: string | undefined }} Problem
 */

/**
 * `error` (an `ApiProblem`, or anything else thrown) as the pages show it.
 * @param {unknown} error
 * @returns {Problem}
 */
function problemOf(error) {
  if (!(error instanceof ApiProblem)) {
    return {
      code: 'page',
      status: 0,
      headline: 'Something went wrong in this page; reload it and try again.',
      detail: String(error instanceof Error ? error.message : error),
      requestId: undefined,
    };
  }
  return {
    code: error.code,
    status: error.status,
    headline: WORDS[error.code] ?? error.message,
    detail: error.detail ?? '',
    requestId: error.requestId,
  };
}

/**
 * One call to the API, with `key` where given. Resolves `{ ok: true, data }` (for `csv: true`,
 * `data` is `{ text, filename }`) or `{ ok: false, problem }`; it never throws, so no failure goes
 * unseen.
 * @param {string} path relative to this server, starting with /api/v1/
 * @param {{ key?: string, method?: 'GET' | 'POST', body?: unknown, query?: Record<string, string>, csv?: boolean }} [options]
 */
export async function call(path, options = {}) {
  try {
    const client = createClient(options.key);
    if (options.method === 'POST') return { ok: true, data: await client.post(path, options.body) };
    if (options.csv) return { ok: true, data: await client.getCsv(path, options.query) };
    return { ok: true, data: await client.get(path, options.query) };
  } catch (error) {
    return { ok: false, problem: problemOf(error) };
  }
}

/**
 * Shows `problem` in `box` (an element with role="alert"), or empties and hides it for `undefined`.
 * @param {HTMLElement} box
 * @param {Problem | undefined} problem
 */
export function showProblem(box, problem) {
  box.replaceChildren();
  box.hidden = problem === undefined;
  if (problem === undefined) return;
  const headline = document.createElement('p');
  headline.className = 'problem-headline';
  headline.textContent = problem.headline;
  box.append(headline);
  if (problem.detail !== '' && problem.detail !== problem.headline) {
    const detail = document.createElement('p');
    detail.textContent = problem.detail;
    box.append(detail);
  }
  const meta = document.createElement('p');
  meta.className = 'problem-meta';
  meta.textContent =
    problem.requestId === undefined
      ? `Code: ${problem.code}`
      : `Code: ${problem.code} · request ${problem.requestId}`;
  box.append(meta);
}

/**
 * Copies `text` to the clipboard and says so in `status`; where the clipboard is not available,
 * selects `field` so the reader can copy it by hand.
 * @param {string} text
 * @param {HTMLElement} status
 * @param {HTMLInputElement | HTMLTextAreaElement} field
 */
export async function copyText(text, status, field) {
  try {
    await navigator.clipboard.writeText(text);
    status.textContent = 'Copied to the clipboard.';
  } catch {
    field.focus();
    field.select();
    status.textContent = 'Copying is not allowed here: the key is selected, press Ctrl+C (or ⌘C) to copy it.';
  }
}

/** `2026-11-22T10:15:03.120Z` as the reader's local date and time, with the zone's name. */
export function localTime(iso) {
  return new Date(iso).toLocaleString(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
  });
}

/**
 * Shows a key just made (claimed or signed up), this once, in the page's `<prefix>-key`, `-name`,
 * `-tier`, `-scopes` and `-expires` elements, with its copy button `<prefix>-copy`; then shows
 * `done` and moves the reader to `<prefix>-title`.
 * @param {string} prefix
 * @param {{ key: string, name: string, tier: string, scopes?: string[], expiresAt?: string | null }} made
 * @param {HTMLElement} done
 */
export function showNewKey(prefix, made, done) {
  const $ = (suffix) => /** @type {HTMLElement} */ (document.getElementById(`${prefix}-${suffix}`));
  const field = /** @type {HTMLInputElement} */ ($('key'));
  field.value = made.key;
  $('name').textContent = made.name;
  $('tier').textContent = made.tier;
  $('scopes').textContent = (made.scopes ?? []).join(', ');
  $('expires').textContent = made.expiresAt == null ? 'Never' : localTime(made.expiresAt);
  $('copy').addEventListener('click', () => copyText(field.value, $('copy-status'), field));
  done.hidden = false;
  $('title').focus();
}

/**
 * Refuses an empty key name in `box` before anything is sent; true where `input` holds a name.
 * @param {HTMLInputElement} input
 * @param {HTMLElement} box
 */
export function named(input, box) {
  if (input.value.trim() !== '') return true;
  showProblem(box, {
    code: 'invalid_parameter',
    status: 0,
    headline: 'Give your key a name first.',
    detail: '',
    requestId: undefined,
  });
  input.focus();
  return false;
}
