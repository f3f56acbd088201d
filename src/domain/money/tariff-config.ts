/**
 * `tariffs:` of the config file (docs/tariffs.md): the schema the file is checked against, which
 * names a bad field by its path, and the checks a schema cannot make (real dates, one version per
 * date, decimals written plainly), which name it the same way.
 */
import { type Static, Type } from '@sinclair/typebox';
import { isCalendarDate } from '../time/days.js';
import { timeZoneId } from '../time/zone.js';
import { ENERGY_UNITS, energyExponent } from './exact.js';
import type { FeeRule, Tariff, Versioned, Weekday } from './tariff.js';
import { WEEKDAYS } from './tariff.js';
import { compareDecimals, isPlainDecimal } from './tariff-decimal.js';

const DATE = '^\\d{4}-\\d{2}-\\d{2}$';
const HOURS = '^\\d{2}:\\d{2}-\\d{2}:\\d{2}$';

/**
 * A decimal as YAML or JSON writes it: a number, or a string to keep every digit as written. Checked
 * by `decimal`, whose message says what is expected (a union's would only say "expected union value").
 */
const Amount = Type.Unsafe<string | number>(Type.Unknown());

const strict = { additionalProperties: false } as const;

const FeeRuleSchema = Type.Object(
  {
    amount: Amount,
    hours: Type.Optional(Type.String({ pattern: HOURS })),
    weekdays: Type.Optional(
      Type.Array(Type.String({ pattern: `^(${WEEKDAYS.join('|')})$` }), { minItems: 1, uniqueItems: true }),
    ),
    months: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1, maximum: 12 }), { minItems: 1, uniqueItems: true }),
    ),
  },
  strict,
);

export const TariffSchema = Type.Object(
  {
    description: Type.Optional(Type.String({ maxLength: 200 })),
    currency: Type.String({ pattern: '^[A-Z0-9]{2,10}$' }),
    // Checked by parseTariffs: the file's messages are lower-cased, which would misspell kWh.
    unit: Type.String(),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    vat: Type.Optional(
      Type.Array(Type.Object({ from: Type.String({ pattern: DATE }), percent: Amount }, strict), {
        maxItems: 100,
      }),
    ),
    fixed: Type.Optional(
      Type.Array(Type.Object({ from: Type.String({ pattern: DATE }), amount: Amount }, strict), {
        maxItems: 100,
      }),
    ),
    fees: Type.Optional(
      Type.Array(
        Type.Object(
          {
            from: Type.String({ pattern: DATE }),
            rules: Type.Array(FeeRuleSchema, { minItems: 1, maxItems: 100 }),
          },
          strict,
        ),
        { maxItems: 100 },
      ),
    ),
  },
  strict,
);

export type TariffEntry = Static<typeof TariffSchema>;

/** A tariff entry the schema let through but that cannot be used; `field` is its path in the file. */
export class TariffConfigError extends Error {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`setting "${field}" ${problem}`);
  }
}

/** A decimal written plainly (`0.364`, `"0.364"`); a number YAML reads as `1e-7` must be a string. */
function decimal(value: unknown, field: string): string {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  if (!isPlainDecimal(text)) {
    throw new TariffConfigError(
      field,
      `must be a plain decimal such as 0.364 (write a very small or long one as a string: "0.0000001"), not ${JSON.stringify(value)}`,
    );
  }
  return text;
}

/** Each version's `from` a real date, and no two versions of one part from the same date. */
function versions<T extends Versioned>(list: readonly T[], field: string): readonly T[] {
  const seen = new Set<string>();
  list.forEach((v, i) => {
    if (!isCalendarDate(v.from)) {
      throw new TariffConfigError(`${field}.${i}.from`, `must be a real date YYYY-MM-DD, not ${v.from}`);
    }
    if (seen.has(v.from)) {
      throw new TariffConfigError(`${field}.${i}.from`, `repeats ${v.from}: one version per valid-from date`);
    }
    seen.add(v.from);
  });
  return list;
}

/** `HH:MM-HH:MM` in local time, on whole quarter hours, `24:00` as an end; over midnight when from > to. */
function hoursOf(text: string, field: string): [number, number] {
  const [from, to] = text.split('-').map((part) => {
    const [h, m] = part.split(':').map(Number) as [number, number];
    return h * 60 + m;
  }) as [number, number];
  const bad = [from, to].some((minute) => minute > 24 * 60 || minute % 15 !== 0) || from === 24 * 60;
  if (bad || from === to) {
    throw new TariffConfigError(
      field,
      `must be local times HH:MM-HH:MM on whole quarter hours, from before 24:00, not equal (22:00-06:00 runs over midnight), not ${text}`,
    );
  }
  return [from, to];
}

type RuleEntry = Static<typeof FeeRuleSchema>;

function feeRule(r: RuleEntry, field: string): FeeRule {
  return {
    amount: decimal(r.amount, `${field}.amount`),
    ...(r.hours !== undefined && { minutes: hoursOf(r.hours, `${field}.hours`) }),
    ...(r.weekdays !== undefined && { weekdays: r.weekdays as Weekday[] }),
    ...(r.months !== undefined && { months: r.months }),
  };
}

/**
 * The tariffs of the config file, by name, from entries `TariffSchema` accepted.
 * @example parseTariffs({ household: { currency: 'NOK', unit: 'kWh', vat: [{ from: '2026-01-01', percent: 25 }] } })
 */
export function parseTariffs(entries: Readonly<Record<string, TariffEntry>>): Record<string, Tariff> {
  const tariffs: Record<string, Tariff> = {};
  for (const [name, entry] of Object.entries(entries)) {
    const at = `tariffs.${name}`;
    let timezone: string | undefined;
    if (entry.timezone !== undefined) {
      timezone = timeZoneId(entry.timezone);
      if (timezone === undefined) {
        throw new TariffConfigError(`${at}.timezone`, `must be an IANA time zone such as Europe/Oslo`);
      }
    }
    if (energyExponent(entry.unit) === undefined) {
      throw new TariffConfigError(
        `${at}.unit`,
        `must be one of ${Object.keys(ENERGY_UNITS).join(', ')}, not ${JSON.stringify(entry.unit)}`,
      );
    }
    const vat = versions(entry.vat ?? [], `${at}.vat`).map((v, i) => {
      const percent = decimal(v.percent, `${at}.vat.${i}.percent`);
      if (compareDecimals(percent, '0') < 0 || compareDecimals(percent, '100') > 0) {
        throw new TariffConfigError(`${at}.vat.${i}.percent`, `must be from 0 to 100, not ${percent}`);
      }
      return { from: v.from, percent };
    });
    const fixed = versions(entry.fixed ?? [], `${at}.fixed`).map((v, i) => ({
      from: v.from,
      amount: decimal(v.amount, `${at}.fixed.${i}.amount`),
    }));
    const fees = versions(entry.fees ?? [], `${at}.fees`).map((v, i) => ({
      from: v.from,
      rules: v.rules.map((r, j) => feeRule(r, `${at}.fees.${i}.rules.${j}`)),
    }));
    tariffs[name] = {
      name,
      ...(entry.description !== undefined && { description: entry.description }),
      currency: entry.currency,
      unit: entry.unit as Tariff['unit'],
      ...(timezone !== undefined && { timezone }),
      vat,
      fixed,
      fees,
    };
  }
  return tariffs;
}
