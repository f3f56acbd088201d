/**
 * The `mqtt:` block of the config file (docs/mqtt.md "Configuring"): the broker, the series to
 * publish and how. Checked at start; a bad entry is named by its path (`mqtt.series.1.tariff`). The
 * password comes only from the environment variable the file names (`password: ${MQTT_PASSWORD}`)
 * and lives only inside `credentials`: a listing or a JSON dump of the config shows the name.
 */
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { type Env, namesOneVariable, substituteVariables } from '../config/environment.js';

/** A topic level path without wildcards or empty levels: `pricepoint`, `home/prices`. */
const TOPIC_PATH = '^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$';
const SYMBOL = '^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$';
const TARIFF = '^[a-z][a-z0-9_-]{0,31}$';

const Hours = Type.Integer({ minimum: 1, maximum: 24 });

const MqttSchema = Type.Object(
  {
    url: Type.String({ minLength: 1 }),
    username: Type.Optional(Type.String({ minLength: 1 })),
    password: Type.Optional(Type.String({ minLength: 1 })),
    topicPrefix: Type.Optional(Type.String({ pattern: TOPIC_PATH, maxLength: 64 })),
    discoveryPrefix: Type.Optional(Type.String({ pattern: TOPIC_PATH, maxLength: 64 })),
    discovery: Type.Optional(Type.Boolean()),
    tariff: Type.Optional(Type.String({ pattern: TARIFF })),
    series: Type.Array(
      Type.Union([
        Type.String({ pattern: SYMBOL }),
        Type.Object(
          {
            symbol: Type.String({ pattern: SYMBOL }),
            tariff: Type.Optional(Type.String({ pattern: TARIFF })),
          },
          { additionalProperties: false },
        ),
      ]),
      { minItems: 1, maxItems: 100 },
    ),
    cheapestHours: Type.Optional(Type.Union([Hours, Type.Array(Hours, { maxItems: 24 })])),
  },
  { additionalProperties: false },
);

type MqttEntry = Static<typeof MqttSchema>;

const UNION_RULES: Readonly<Record<string, string>> = {
  cheapestHours: 'must be a whole number of hours from 1 to 24, or a list of them',
  series: 'must be a list of series symbols, or of { symbol, tariff }',
};

/** One series to publish, with the tariff its totals are computed under. */
export interface MqttSeries {
  /** Upper-case, as the API matches it. */
  readonly symbol: string;
  readonly tariff?: string | undefined;
  /** Where the tariff was named in the file, for the message when it names none. */
  readonly tariffField?: string | undefined;
}

export interface MqttConfig {
  /** `mqtt://` or `mqtts://`, without credentials. */
  readonly url: string;
  readonly topicPrefix: string;
  readonly discoveryPrefix: string;
  /** Home Assistant discovery configs are published (default true). */
  readonly discovery: boolean;
  readonly series: readonly MqttSeries[];
  /** One "in the cheapest N hours today" flag per N, ascending. */
  readonly cheapestHours: readonly number[];
  /** The settings as written, with every `${VAR}` left as written: safe to show. */
  readonly settings: Readonly<Record<string, unknown>>;
  /** The username and password with the variables' values; they exist nowhere else. */
  credentials(): { readonly username?: string; readonly password?: string };
}

export class MqttConfigError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`setting "${field}" ${message}`);
    this.name = 'MqttConfigError';
  }
}

/**
 * The file's `mqtt:` entry checked, or undefined without one; throws `MqttConfigError` naming the
 * field as `mqtt.FIELD`. Tariff names are checked against the tariffs by `checkMqttTariffs`.
 * @example parseMqtt({ url: 'mqtt://127.0.0.1:1883', series: ['NO1'], password: '${MQTT_PASSWORD}' }, { MQTT_PASSWORD: 's3cret' })
 */
export function parseMqtt(raw: unknown, env: Env): MqttConfig | undefined {
  if (raw === undefined || raw === null) return undefined;
  const first = Value.Errors(MqttSchema, raw).First();
  if (first !== undefined) {
    const path = first.path.split('/').filter(Boolean);
    const where = ['mqtt', ...path].join('.');
    // A union's own message ("expected union value") says nothing of what would do.
    const said = UNION_RULES[path[0] ?? ''];
    throw new MqttConfigError(
      where,
      said !== undefined && path.length <= 2 ? said : first.message.toLowerCase(),
    );
  }
  const entry = raw as MqttEntry;
  const url = brokerUrl(entry.url);
  if (entry.password !== undefined && !namesOneVariable(entry.password)) {
    throw new MqttConfigError(
      'mqtt.password',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own syntax, shown as written
      'must name an environment variable holding the password, as ${MQTT_PASSWORD}, never the password itself',
    );
  }
  const username =
    entry.username === undefined ? undefined : substitute(entry.username, 'mqtt.username', env);
  const password =
    entry.password === undefined ? undefined : substitute(entry.password, 'mqtt.password', env);
  const seen = new Set<string>();
  const series = entry.series.map((item, n): MqttSeries => {
    const symbol = (typeof item === 'string' ? item : item.symbol).toUpperCase();
    if (seen.has(symbol)) throw new MqttConfigError(`mqtt.series.${n}`, `names ${symbol} twice`);
    seen.add(symbol);
    const own = typeof item === 'string' ? undefined : item.tariff;
    const tariff = own ?? entry.tariff;
    return {
      symbol,
      ...(tariff !== undefined && {
        tariff,
        tariffField: own !== undefined ? `mqtt.series.${n}.tariff` : 'mqtt.tariff',
      }),
    };
  });
  const hours = entry.cheapestHours;
  const cheapestHours = [...new Set(hours === undefined ? [] : typeof hours === 'number' ? [hours] : hours)];
  return {
    url,
    topicPrefix: entry.topicPrefix ?? 'pricepoint',
    discoveryPrefix: entry.discoveryPrefix ?? 'homeassistant',
    discovery: entry.discovery ?? true,
    series,
    cheapestHours: cheapestHours.sort((a, b) => a - b),
    settings: { ...entry },
    credentials: () => ({
      ...(username !== undefined && { username }),
      ...(password !== undefined && { password }),
    }),
  };
}

/**
 * Refuses a series whose tariff is none of `tariffs` (the file's, or the development data set's),
 * as a message naming the field.
 */
export function checkMqttTariffs(mqtt: MqttConfig | undefined, tariffs: readonly string[]): void {
  for (const { tariff, tariffField } of mqtt?.series ?? []) {
    if (tariff === undefined || tariffs.includes(tariff)) continue;
    const known =
      tariffs.length === 0 ? 'there are none' : `the tariffs are ${[...tariffs].sort().join(', ')}`;
    throw new MqttConfigError(tariffField ?? 'mqtt.tariff', `names no tariff of tariffs: (${known})`);
  }
}

/** The broker's URL: `mqtt://` or `mqtts://` with a host, credentials only in their own settings. */
function brokerUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new MqttConfigError('mqtt.url', 'is not a URL (expected mqtt://HOST:PORT or mqtts://HOST:PORT)');
  }
  if (url.protocol !== 'mqtt:' && url.protocol !== 'mqtts:') {
    throw new MqttConfigError('mqtt.url', 'must start with mqtt:// or mqtts://');
  }
  if (url.hostname === '') throw new MqttConfigError('mqtt.url', 'has no host');
  if (url.username !== '' || url.password !== '') {
    // Never echo the URL: it holds what looks like a password.
    throw new MqttConfigError(
      'mqtt.url',
      'must not hold a username or password; set mqtt.username and mqtt.password (from the environment)',
    );
  }
  return text;
}

/** `${VAR}` replaced by the variable's value; an unset variable stops the start, naming it. */
function substitute(value: string, field: string, env: Env): string {
  return substituteVariables(
    value,
    env,
    (variable) => new MqttConfigError(field, `names the environment variable ${variable}, which is not set`),
  );
}
