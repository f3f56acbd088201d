/**
 * The kinds of value a setting can hold. Each kind brings the schema the config file is checked
 * against (and the type that follows from it), how the environment's text becomes a value, and what
 * docs/settings.md says it accepts, so the three cannot drift apart.
 */
import { isIP } from 'node:net';
import { type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface SettingKind<T> {
  /** What the config file must hold; the environment's value must meet it too. */
  readonly schema: TSchema;
  /**
   * The environment's text as a value, or undefined when it counts as not set (empty).
   * A bad value throws a ConfigError that starts with `name`.
   */
  parse(raw: string, name: string): T | undefined;
  /** A rule beyond the schema, for values from either source: what is wrong, or undefined. */
  readonly problem?: ((value: T) => string | undefined) | undefined;
  /** What docs/settings.md's settings table says the setting accepts (Markdown). */
  readonly accepts: string;
}

const code = (text: string | number) => `\`${text}\``;

/** Text of at least one character, taken as it is. */
export function text(accepts: string): SettingKind<string> {
  return {
    schema: Type.String({ minLength: 1 }),
    parse: (raw) => (raw === '' ? undefined : raw),
    accepts,
  };
}

/** A whole number from `min` to `max`, in decimal digits only (`0x50` and `1.5` are refused). */
export function integer(min: number, max: number): SettingKind<number> {
  const schema = Type.Integer({ minimum: min, maximum: max });
  return {
    schema,
    parse(raw, name) {
      if (raw === '') return undefined;
      const value = Number(raw);
      if (!/^\d+$/.test(raw.trim()) || !Value.Check(schema, value)) {
        throw new ConfigError(`${name}: must be a whole number from ${min} to ${max}, got "${raw}"`);
      }
      return value;
    },
    accepts: `${code(min)} to ${code(max)}`,
  };
}

const TRUE = ['1', 'true', 'yes', 'on'];
const FALSE = ['0', 'false', 'no', 'off'];

/** `true` or `false`, also spelt 1/0, yes/no, on/off, in any case. */
export function boolean(): SettingKind<boolean> {
  return {
    schema: Type.Boolean(),
    parse(raw, name) {
      const word = raw.trim().toLowerCase();
      if (word === '') return undefined;
      if (TRUE.includes(word)) return true;
      if (FALSE.includes(word)) return false;
      throw new ConfigError(`${name}: must be true or false, got "${raw}"`);
    },
    accepts: `${code('true')} or ${code('false')}`,
  };
}

/** One of a closed list of words. */
export function oneOf<const T extends string>(values: readonly T[]): SettingKind<T> {
  return {
    schema: Type.Union(values.map((value) => Type.Literal(value))),
    parse(raw, name) {
      if (raw === '') return undefined;
      if (!(values as readonly string[]).includes(raw)) {
        throw new ConfigError(`${name}: must be one of ${values.join(', ')}, got "${raw}"`);
      }
      return raw as T;
    },
    accepts: values.map(code).join(', '),
  };
}

/** Text that matches `pattern`, described in words by `rule` (in the message and in docs/settings.md). */
export function matching(pattern: RegExp, rule: string): SettingKind<string> {
  return {
    schema: Type.String({ pattern: pattern.source }),
    parse(raw, name) {
      if (raw === '') return undefined;
      if (!pattern.test(raw)) throw new ConfigError(`${name}: ${rule}`);
      return raw;
    },
    accepts: rule,
  };
}

/** A secret of at least `minLength` characters; no message ever repeats it. */
export function secret(minLength: number): SettingKind<string> {
  return {
    schema: Type.String({ minLength }),
    parse(raw, name) {
      if (raw === '') return undefined;
      if (raw.length < minLength) throw new ConfigError(`${name}: must be at least ${minLength} characters`);
      return raw;
    },
    accepts: `at least ${minLength} characters`,
  };
}

/** A connection URL with one of `schemes`; the message never repeats the URL (it may hold a password). */
export function url(schemes: readonly string[]): SettingKind<string> {
  return {
    schema: Type.String({ minLength: 1 }),
    parse(raw, name) {
      if (raw === '') return undefined;
      let protocol: string;
      try {
        protocol = new URL(raw).protocol.slice(0, -1);
      } catch {
        throw new ConfigError(
          `${name}: not a URL (expected ${schemes.map((s) => `${s}://...`).join(' or ')})`,
        );
      }
      if (!schemes.includes(protocol)) {
        throw new ConfigError(`${name}: must start with ${schemes.map((s) => `${s}://`).join(' or ')}`);
      }
      return raw;
    },
    accepts: schemes.map((s) => code(`${s}://…`)).join(' or '),
  };
}

const NAMED_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

/** Fastify's named ranges, an IP address, or a CIDR range: what `trustProxy` accepts. */
function isProxyRange(entry: string): boolean {
  if (NAMED_RANGES.includes(entry)) return true;
  const [address = '', prefix, extra] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  const bits = Number(prefix);
  return /^\d{1,3}$/.test(prefix) && bits >= 1 && bits <= (version === 4 ? 32 : 128);
}

/**
 * Proxy addresses: a comma-separated list in the environment, a list in the file. Checked here, or
 * Fastify refuses a bad entry later with a message that does not name the setting.
 */
export function proxyRanges(): SettingKind<readonly string[]> {
  return {
    schema: Type.Array(Type.String({ minLength: 1 })),
    parse(raw) {
      if (raw.trim() === '') return undefined;
      return raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    },
    problem(entries) {
      const bad = entries.find((entry) => !isProxyRange(entry));
      return bad === undefined ? undefined : `"${bad}" is not an IP address or CIDR range`;
    },
    accepts: `comma-separated IP addresses, CIDR ranges or ${NAMED_RANGES.map(code).join(', ')}`,
  };
}

/** Why `value` is no public address of the server (an `http(s)://` URL without query or fragment), or undefined. */
function publicUrlProblem(value: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return 'not a URL (expected https://… such as https://prices.example.com)';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    return 'must start with https:// or http://';
  if (parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '') {
    return 'must be an address without query, fragment or credentials, such as https://prices.example.com';
  }
  return undefined;
}

/** The address customers reach the server at, for links the server hands out (docs/invitations.md). */
export function publicUrl(): SettingKind<string> {
  return {
    schema: Type.String({ minLength: 1 }),
    parse(raw, name) {
      if (raw === '') return undefined;
      const problem = publicUrlProblem(raw);
      if (problem !== undefined) throw new ConfigError(`${name}: ${problem}`);
      return raw;
    },
    problem: publicUrlProblem,
    accepts: `${code('https://…')} or ${code('http://…')}, a path allowed`,
  };
}
