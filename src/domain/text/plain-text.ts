/**
 * Names and labels are plain text (docs/decisions.md): a key's or a series' name is shown in
 * listings, terminals and dashboards, so it may not hold anything that moves the cursor, starts a
 * new line, rings a terminal's escape sequences or turns the text around. One rule for every name,
 * and one way to show text stored before the rule without acting on what it holds.
 */

/**
 * Characters no name may hold: C0 controls (NUL, tab, line feed, ESC), DEL and C1 controls
 * (`\p{Cc}`), unpaired surrogates, the Unicode line and paragraph separators, and the bidirectional
 * marks, embeddings, overrides and isolates that make text display in another order than it is
 * stored (the "Trojan Source" characters).
 */
const NOT_PLAIN = /[\p{Cc}\p{Cs}\u2028\u2029\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
const NOT_PLAIN_ALL = new RegExp(NOT_PLAIN.source, 'gu');

/**
 * Whether `text` is plain text: none of the characters above.
 * @example isPlainText('Oslo day-ahead') // true; isPlainText('a\nb') // false; isPlainText('\u202Egnp.exe') // false
 */
export function isPlainText(text: string): boolean {
  return !NOT_PLAIN.test(text);
}

/** What a refusal says, after the field's name: the same words for every field. */
export const PLAIN_TEXT_RULE =
  'must be plain text: no control characters (such as tab, line feed or escape), line or paragraph separators or bidirectional overrides';

function escaped(char: string): string {
  return `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`;
}

/**
 * `text` with every character that is not plain written as a `\uXXXX` escape, for a terminal:
 * a name stored before the rule is shown, never acted on.
 * @example printable('evil\u001b[2J') // 'evil\\u001b[2J'
 */
export function printable(text: string): string {
  return text.replace(NOT_PLAIN_ALL, escaped);
}

/**
 * `JSON.stringify(value)` that holds no character a terminal acts on. JSON itself escapes C0
 * controls but leaves DEL, C1 controls (U+009B starts an escape sequence on some terminals), the
 * separators and bidirectional overrides raw; as `\uXXXX` escapes they parse back to the same value.
 * @example printableJson({ name: 'a\u009bb' }) // '{"name":"a\\u009bb"}'
 */
export function printableJson(value: unknown): string {
  return JSON.stringify(value).replace(NOT_PLAIN_ALL, escaped);
}
