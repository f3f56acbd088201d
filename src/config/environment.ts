/**
 * What is read from the environment besides the declared settings (settings.ts): the variables a
 * config file names as `${VAR}` for its secrets, and the clients' own `PRICEPOINT_URL` and
 * `PRICEPOINT_API_KEY` (docs/settings.md). Read here so that only config/ looks into the environment;
 * the callers get values, or a refusal naming the variable.
 */

/** The environment as the process has it (`process.env`), or as a test or a caller gives it. */
export type Env = Readonly<Record<string, string | undefined>>;

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const VARIABLE_ONLY = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/;

/**
 * Whether `text` is only the name of a variable, as a secret must be written (`${ENTSOE_TOKEN}`).
 * @example namesOneVariable('${MQTT_PASSWORD}') // true; namesOneVariable('hunter2') // false
 */
export function namesOneVariable(text: string): boolean {
  return VARIABLE_ONLY.test(text);
}

/**
 * `text` with every `${VAR}` replaced by the variable's value. A variable that is unset or empty
 * stops the caller with `unset(name)`, which names it; `found` sees each value put in, so a caller
 * can keep a secret out of its messages.
 * @example substituteVariables('${TOKEN}', { TOKEN: 's3cret' }, (name) => new Error(`${name} is not set`)) // 's3cret'
 */
export function substituteVariables(
  text: string,
  env: Env,
  unset: (variable: string) => Error,
  found: (value: string) => void = () => {},
): string {
  return text.replace(VARIABLE, (_, variable: string) => {
    const value = env[variable];
    if (value === undefined || value === '') throw unset(variable);
    found(value);
    return value;
  });
}

/** Where a client command (`pricepoint mcp`) finds the API and its key: the clients' own variables. */
export interface ClientEnvironment {
  /** `PRICEPOINT_URL`, as written; `undefined` when unset or empty. */
  readonly url: string | undefined;
  /** `PRICEPOINT_API_KEY`; `undefined` when unset or empty. */
  readonly apiKey: string | undefined;
}

/**
 * The clients' own variables, which are no server settings: `loadConfig` leaves them alone.
 * @example clientEnvironment({ PRICEPOINT_URL: 'https://localhost:8443' }) // { url: 'https://localhost:8443', apiKey: undefined }
 */
export function clientEnvironment(env: Env): ClientEnvironment {
  return { url: env.PRICEPOINT_URL || undefined, apiKey: env.PRICEPOINT_API_KEY || undefined };
}
