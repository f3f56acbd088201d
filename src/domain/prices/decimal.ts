/**
 * Price texts (docs/data-model.md): a decimal of at most 15 significant digits, stored as the text it
 * arrived as and served verbatim as a JSON number. So the text must already be a valid JSON number.
 */

/** A plain JSON-number decimal: optional minus, integer part without leading zeros, optional fraction. */
const PLAIN = /^-?(?:0|[1-9]\d*)(?:\.\d+)?$/;
export const MAX_SIGNIFICANT_DIGITS = 15;

/** What `checkPrice` answers: the text to store, or why the input is refused. */
export type PriceCheck =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly reason: string };

/** Significant digits of a text that matches `PLAIN`: leading zeros do not count, trailing ones do. */
function significantDigits(text: string): number {
  let digits = 0;
  let leading = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) continue; // '-' and '.'
    if (leading && c === 48) continue;
    leading = false;
    digits++;
  }
  return digits;
}

/**
 * Checks a price as written in a file. Accepted: `41.27`, `-3.5`, `0`, `0.000125`. Refused with a
 * reason: exponents (`1e3`), a leading `+`, `.5`, `1.`, leading zeros (`007`), more than 15
 * significant digits, and anything else that is not a plain decimal. Trailing zeros are kept
 * (`41.270` is stored and served as `41.270`): what was ingested comes back.
 * @example checkPrice('41.27') // { ok: true, text: '41.27' }
 */
export function checkPrice(text: string): PriceCheck {
  if (text === '') return { ok: false, reason: 'price is empty' };
  if (!PLAIN.test(text)) {
    return {
      ok: false,
      reason: `price "${clip(text)}" is not a plain decimal (digits, an optional minus and decimal point; no exponent, no "+")`,
    };
  }
  const digits = significantDigits(text);
  if (digits > MAX_SIGNIFICANT_DIGITS) {
    return {
      ok: false,
      reason: `price "${clip(text)}" has ${digits} significant digits; at most 15 are kept exactly`,
    };
  }
  // `-0` and `-0.00` are the same number as `0`; a minus on zero is dropped so the JSON stays plain.
  if (text.charCodeAt(0) === 45 && digits === 0) return { ok: true, text: text.slice(1) };
  return { ok: true, text };
}

/**
 * A price that arrived as a JSON number, already parsed: its shortest round-trip text, checked. A
 * double holds every decimal of up to 15 significant digits exactly, so nothing is lost for valid
 * input; trailing zeros of the source (`41.270`) are not known any more and so not kept.
 * @example checkNumberPrice(41.27) // { ok: true, text: '41.27' }
 */
export function checkNumberPrice(value: number): PriceCheck {
  if (!Number.isFinite(value)) return { ok: false, reason: 'price is not a finite number' };
  const text = String(value);
  if (/e/i.test(text)) {
    return { ok: false, reason: `price ${text} is too large or too small for a plain decimal of 15 digits` };
  }
  return checkPrice(text);
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
