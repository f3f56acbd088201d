// @ts-check
/**
 * Small DOM helpers for the console: elements built from data (never from HTML text, so nothing an
 * API returns can become markup), dates in UTC, state badges, notices, confirmations and secrets
 * shown once.
 */
import { ApiProblem } from '../shared/api.js';

/**
 * `h('button', { class: 'primary', onclick: f }, 'Save')`: an element with attributes, listeners
 * (`on…`) and children (strings become text).
 * @param {string} tag
 * @param {Record<string, unknown>} [attrs]
 * @param {...(Node | string | number | null | undefined | false | (Node | string)[])} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2), /** @type {EventListener} */ (value));
    } else if (name === 'class') {
      el.className = String(value);
    } else if (value === true) {
      el.setAttribute(name, '');
    } else if (name === 'value' && 'value' in el) {
      /** @type {HTMLInputElement} */ (el).value = String(value);
    } else {
      el.setAttribute(name, String(value));
    }
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'string' || typeof child === 'number' ? String(child) : child);
  }
  return el;
}

/**
 * An instant as `2026-11-22 10:15 UTC`, or a dash.
 * @param {string | null | undefined} iso
 */
export function when(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** @param {number} n */
export const count = (n) => new Intl.NumberFormat('en').format(n);

/**
 * A small coloured word: ok (green), bad (red), warn (amber) or plain.
 * @param {string} text
 * @param {'ok' | 'bad' | 'warn' | ''} [tone]
 */
export const badge = (text, tone = '') => h('span', { class: `badge ${tone}` }, text);

/**
 * What went wrong, in words, into `box` (a `role="alert"` element); empty `problem` clears it.
 * @param {HTMLElement} box
 * @param {unknown} problem
 */
export function showProblem(box, problem) {
  box.className = 'notice error';
  box.setAttribute('role', 'alert');
  box.textContent = problem === undefined ? '' : problemText(problem);
}

/** @param {unknown} problem */
export function problemText(problem) {
  if (problem instanceof ApiProblem) return problem.fullText;
  return problem instanceof Error ? problem.message : String(problem);
}

/**
 * A success in words, into `box`.
 * @param {HTMLElement} box
 * @param {string} text
 */
export function showSuccess(box, text) {
  box.className = 'notice success';
  box.setAttribute('role', 'status');
  box.textContent = text;
}

/** An empty notice box, filled by `showProblem` or `showSuccess`. */
export const noticeBox = () => h('p', { class: 'notice', role: 'status' });

/**
 * A modal dialog with `content`; resolves with the value `onSubmit` gives, or undefined when
 * cancelled (Escape or Cancel). `onSubmit` may throw: its problem is shown in the dialog, which stays.
 * @template T
 * @param {{ title: string, content: (Node | string)[], submit: string, danger?: boolean,
 *   onSubmit: (form: HTMLFormElement) => Promise<T> }} spec
 * @returns {Promise<T | undefined>}
 */
export function dialog(spec) {
  return new Promise((resolve) => {
    const problem = noticeBox();
    const titleId = `dialog-${Math.random().toString(36).slice(2)}`;
    const submit = h(
      'button',
      { type: 'submit', class: spec.danger ? 'primary danger-fill' : 'primary' },
      spec.submit,
    );
    const cancel = h('button', { type: 'button' }, 'Cancel');
    const form = /** @type {HTMLFormElement} */ (
      h('form', { class: 'stack' }, ...spec.content, problem, h('div', { class: 'actions' }, submit, cancel))
    );
    const box = /** @type {HTMLDialogElement} */ (
      h('dialog', { 'aria-labelledby': titleId }, h('h2', { id: titleId }, spec.title), form)
    );
    /** @param {T | undefined} value */
    const finish = (value) => {
      box.close();
      box.remove();
      resolve(value);
    };
    cancel.addEventListener('click', () => finish(undefined));
    box.addEventListener('cancel', (event) => {
      event.preventDefault();
      finish(undefined);
    });
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      /** @type {HTMLButtonElement} */ (submit).disabled = true;
      try {
        finish(await spec.onSubmit(form));
      } catch (error) {
        showProblem(problem, error);
      } finally {
        /** @type {HTMLButtonElement} */ (submit).disabled = false;
      }
    });
    document.body.append(box);
    box.showModal();
  });
}

/**
 * A secret shown once (a new key, a claim link), with a copy button and a button that hides it.
 * @param {string} label what it is, said before it
 * @param {string} secret
 * @param {string} warning
 */
export function secretBox(label, secret, warning) {
  const output = h('output', { class: 'mono', 'aria-label': label }, secret);
  const copied = h('span', { class: 'muted', role: 'status' });
  const copy = h(
    'button',
    {
      type: 'button',
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(secret);
          copied.textContent = 'Copied.';
        } catch {
          // The clipboard may be refused (permissions): select the text for Ctrl+C instead.
          const range = document.createRange();
          range.selectNodeContents(output);
          getSelection()?.removeAllRanges();
          getSelection()?.addRange(range);
          copied.textContent = 'Selected: press Ctrl+C to copy.';
        }
      },
    },
    'Copy',
  );
  const box = h(
    'div',
    { class: 'secret' },
    h('strong', {}, `${label}:`),
    output,
    copy,
    h('button', { type: 'button', onclick: () => box.remove() }, 'Done, hide it'),
    copied,
    h('p', {}, warning),
  );
  return box;
}

/**
 * A labelled control, its hint (if any) tied to it by `aria-describedby` so that the label alone
 * names it.
 * @param {string} label
 * @param {Record<string, unknown>} attrs
 * @param {string} [hint]
 */
export function field(label, attrs, hint) {
  const tag = attrs.tag === 'textarea' ? 'textarea' : attrs.tag === 'select' ? 'select' : 'input';
  const { tag: _tag, options, ...rest } = attrs;
  const id = `field-${String(attrs.name)}-${Math.random().toString(36).slice(2, 8)}`;
  const hintId = hint ? `${id}-hint` : undefined;
  const control = h(tag, { ...rest, id, 'aria-describedby': hintId });
  if (Array.isArray(options)) {
    for (const option of options) {
      const [value, text] = Array.isArray(option) ? option : [option, option];
      control.append(h('option', { value, selected: value === attrs.value }, text));
    }
  }
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    control,
    hint ? h('span', { class: 'hint', id: hintId }, hint) : null,
  );
}

/**
 * The value of the named control of `form`, trimmed.
 * @param {HTMLFormElement} form
 * @param {string} name
 */
export function formValue(form, name) {
  const control = /** @type {HTMLInputElement | null} */ (form.elements.namedItem(name));
  return control ? control.value.trim() : '';
}

/**
 * A `datetime-local` value (read as UTC, as the console shows every time) as RFC 3339, or null.
 * @param {string} value
 */
export function utcInstant(value) {
  if (!value) return null;
  return new Date(`${value.length === 16 ? `${value}:00` : value}Z`).toISOString();
}

/**
 * An RFC 3339 instant as a `datetime-local` value in UTC.
 * @param {string | null | undefined} iso
 */
export function localInputValue(iso) {
  return iso ? new Date(iso).toISOString().slice(0, 16) : '';
}

/**
 * A table with a header row; `rows` are arrays of cells (strings or nodes, or `{ num: value }`).
 * @param {string} caption
 * @param {string[]} headings
 * @param {(Node | string | { num: number })[][]} rows
 * @param {string} [empty] what to say when there are no rows
 */
export function table(caption, headings, rows, empty = 'Nothing here yet.') {
  if (rows.length === 0) return h('p', { class: 'card muted' }, empty);
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      {},
      h('caption', { class: 'visually-hidden' }, caption),
      h('thead', {}, h('tr', {}, ...headings.map((text) => h('th', { scope: 'col' }, text)))),
      h(
        'tbody',
        {},
        ...rows.map((cells) =>
          h(
            'tr',
            {},
            ...cells.map((cell) =>
              typeof cell === 'object' && cell !== null && 'num' in cell
                ? h('td', { class: 'num' }, count(cell.num))
                : h('td', {}, /** @type {Node | string} */ (cell)),
            ),
          ),
        ),
      ),
    ),
  );
}
