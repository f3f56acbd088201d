/**
 * What a valid series is (docs/data-model.md): the rules for each metadata field, checked all at once
 * so that an operator sees every problem of a request in one answer, each with its field name.
 * Knows nothing of HTTP or storage.
 */
import { holdsKey } from '../keys/key-format.js';
import { isPlainText, PLAIN_TEXT_RULE } from '../text/plain-text.js';
import { isResolution, RESOLUTIONS, type Resolution } from '../time/days.js';
import { canonicalTimeZone, isTimeZone } from '../time/zone.js';

/** The symbol pattern of docs/data-model.md, in its stored (upper-case) spelling. */
export const SYMBOL_PATTERN = /^[A-Z0-9][A-Z0-9._-]{0,31}$/;
const KIND_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;
/** A crypto code: 2 to 10 upper-case letters and digits, starting with a letter (BTC, USDT; not 1INCH). */
const CRYPTO_PATTERN = /^[A-Z][A-Z0-9]{1,9}$/;

/** The metadata of a series, every field already checked and normalised. */
export interface SeriesFields {
  readonly name: string;
  readonly kind: string;
  readonly currency: string;
  readonly unit: string;
  readonly timezone: string;
  readonly resolution: Resolution;
}

export type SeriesField = keyof SeriesFields | 'symbol';

/** One thing wrong with a request, named by its field. */
export interface FieldProblem {
  readonly field: SeriesField;
  readonly detail: string;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; problems: FieldProblem[] };

/** ISO 4217 as the platform's ICU knows it (current legal tender), and the precious metals it leaves out. */
const ISO_CURRENCIES: ReadonlySet<string> = new Set([
  ...Intl.supportedValuesOf('currency'),
  'XAU',
  'XAG',
  'XPT',
  'XPD',
]);

/**
 * Whether `code` is an ISO 4217 code: one the platform's ICU knows (current legal tender) or one of
 * the precious metals, which ISO 4217 lists but ICU leaves out.
 * @example isIsoCurrency('NOK') // true; isIsoCurrency('XAU') // true; isIsoCurrency('BTC') // false
 */
export function isIsoCurrency(code: string): boolean {
  return ISO_CURRENCIES.has(code);
}

/**
 * A symbol in its stored spelling, or `undefined` when it is not one. Input is case-insensitive.
 * @example normaliseSymbol('de-lu') // 'DE-LU'; normaliseSymbol('-X') // undefined
 */
export function normaliseSymbol(raw: string): string | undefined {
  const upper = raw.toUpperCase();
  return SYMBOL_PATTERN.test(upper) ? upper : undefined;
}

/**
 * The currency rule: an ISO 4217 code, or else a crypto code of 2 to 10 upper-case letters and
 * digits starting with a letter. A code that ISO 4217 defines always means the ISO currency, so a
 * crypto code can never be mistaken for one; input is case-insensitive and stored upper-case.
 * @example checkCurrency('eur') // 'EUR'; checkCurrency('btc') // 'BTC'; checkCurrency('€') // a problem
 */
function checkCurrency(raw: string): string | FieldProblem {
  const code = raw.toUpperCase();
  if (isIsoCurrency(code) || CRYPTO_PATTERN.test(code)) return code;
  return {
    field: 'currency',
    detail:
      'The field "currency" must be an ISO 4217 code such as EUR, or a crypto code of 2 to 10 letters and digits starting with a letter, such as BTC.',
  };
}

function checkText(field: 'name' | 'unit', raw: string, max: number): string | FieldProblem {
  if (!isPlainText(raw)) return { field, detail: `The field "${field}" ${PLAIN_TEXT_RULE}.` };
  if (raw.trim() === '' || raw.length > max || raw !== raw.trim()) {
    return {
      field,
      detail: `The field "${field}" must be 1 to ${max} characters, without surrounding spaces.`,
    };
  }
  // It is stored and shown in every listing: a key pasted here would be kept in clear.
  if (holdsKey(raw)) return { field, detail: `The field "${field}" must not hold an API key.` };
  return raw;
}

function checkTimezone(raw: string): string | FieldProblem {
  if (isTimeZone(raw)) return raw;
  const spelled = canonicalTimeZone(raw);
  return {
    field: 'timezone',
    detail:
      spelled !== undefined
        ? `The field "timezone" must be spelt exactly as the IANA database does: ${spelled}.`
        : 'The field "timezone" must be an IANA time zone such as Europe/Oslo.',
  };
}

/**
 * Checks every field of a series' metadata and answers the normalised fields, or every problem.
 * A field that is missing (`undefined`) is a problem too: merge an existing series' fields first.
 * @example checkSeriesFields({ name: 'Oslo', kind: 'electricity', currency: 'eur', unit: 'MWh', timezone: 'Europe/Oslo', resolution: 'PT15M' })
 */
export function checkSeriesFields(input: Partial<Record<keyof SeriesFields, string>>): Checked<SeriesFields> {
  const problems: FieldProblem[] = [];
  const missing = (field: keyof SeriesFields) =>
    problems.push({ field, detail: `The field "${field}" is required for a new series.` });
  const take = <T>(field: keyof SeriesFields, check: (raw: string) => T | FieldProblem): T | undefined => {
    const raw = input[field];
    if (raw === undefined) return void missing(field);
    const result = check(raw);
    if (typeof result === 'object' && result !== null && 'field' in result) return void problems.push(result);
    return result as T;
  };
  const name = take('name', (raw) => checkText('name', raw, 200));
  const kind = take('kind', (raw) =>
    KIND_PATTERN.test(raw)
      ? raw
      : {
          field: 'kind' as const,
          detail:
            'The field "kind" must be a lower-case word of letters, digits, _ and - (at most 32), such as electricity.',
        },
  );
  const currency = take('currency', checkCurrency);
  const unit = take('unit', (raw) => checkText('unit', raw, 32));
  const timezone = take('timezone', checkTimezone);
  const resolution = take<Resolution>('resolution', (raw) =>
    isResolution(raw)
      ? raw
      : {
          field: 'resolution' as const,
          detail: `The field "resolution" must be one of ${Object.keys(RESOLUTIONS).join(', ')}.`,
        },
  );
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    value: {
      name: name as string,
      kind: kind as string,
      currency: currency as string,
      unit: unit as string,
      timezone: timezone as string,
      resolution: resolution as Resolution,
    },
  };
}
