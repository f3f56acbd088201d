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
 * A `POST` that carries no key (claiming an invitation, signing up): the JSON answer, or an
 * `ApiProblem` thrown as the shared client throws it.
 */
async function postWithoutKey(path, body) {
  let response;
  try {
    response = await fetch(path, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
      referrerPolicy: 'no-referrer',
    });
  } catch {
    throw new ApiProblem(0, { code: 'network', title: 'The server could not be reached' });
  }
  const answer = await response.json().catch(() => ({}));
  if (response.ok) return answer;
  throw new ApiProblem(response.status, {
    requestId: response.headers.get('x-request-id') ?? undefined,
    ...answer,
  });
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
    if (options.key === undefined) return { ok: true, data: await postWithoutKey(path, options.body ?? {}) };
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
