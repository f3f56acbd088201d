/**
 * The `sources:` of the config file (docs/sources.md "Configuring sources"): each entry checked at
 * start by its connector, with its schedule, and its secrets read from the environment variables the
 * file names (`token: ${ENTSOE_TOKEN}`). The secrets live only inside `connect`: a listing, a log line
 * or a JSON dump of the config shows the variable's name, never its value.
 */
import { Cron } from 'croner';
import { type Env, namesOneVariable, substituteVariables } from '../config/environment.js';
import { CONNECTOR_TYPES, createConnector } from './connectors.js';
import { DEFAULT_PLAN, type SourcePlan, TYPE_PLANS } from './source-plans.js';
import { type SourceConnector, SourceSettingsError, type UpstreamOptions } from './types.js';

/** One cron of a source's schedule. */
export interface ScheduleEntry {
  readonly cron: string;
  /** IANA zone the cron's hours are read in. */
  readonly zone: string;
  /** Skipped once the next local day is complete (the day-ahead auction's window). */
  readonly untilTomorrowComplete?: boolean;
}

export interface SourceConfig {
  readonly name: string;
  readonly type: string;
  readonly schedule: readonly ScheduleEntry[];
  /** Which days a scheduled run asks for. */
  readonly plan: SourcePlan;
  /**
   * The least time from one run's end to a manual run's start (`minSpacingSeconds`, default
   * `DEFAULT_MIN_SPACING_S`): an operator's runs in a row do not spend the upstream's quota.
   */
  readonly minSpacingMs: number;
  /** The settings as written, with every `${VAR}` left as written: safe to show. */
  readonly settings: Readonly<Record<string, unknown>>;
  /** The connector, built with the secrets; they exist nowhere else. */
  connect(upstream?: UpstreamOptions): SourceConnector;
}

/** Names of settings that hold a secret: they must name an environment variable. */
const SECRET = /^(token|password|secret|api[-_]?key|key)$/i;
/** Settings of the schedule, not of the connector. */
const SCHEDULE_FIELDS = ['type', 'schedule', 'scheduleZone', 'minSpacingSeconds'];
/** The default least spacing of manual runs of one source (docs/sources.md "Schedules"). */
export const DEFAULT_MIN_SPACING_S = 60;
/** The longest spacing a source may ask for: one day. */
const MAX_SPACING_S = 86_400;

export class SourceConfigError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`setting "${field}" ${message}`);
    this.name = 'SourceConfigError';
  }
}

/**
 * Every source of the file's `sources:`; throws `SourceConfigError` naming the bad field as
 * `sources.NAME.FIELD`.
 * @example parseSources({ entsoe: { type: 'entsoe', zone: 'NO1', token: '${ENTSOE_TOKEN}' } }, { ENTSOE_TOKEN: 's3cret' })
 */
export function parseSources(raw: Readonly<Record<string, unknown>> | undefined, env: Env): SourceConfig[] {
  return Object.entries(raw ?? {}).map(([name, entry]) => parseSource(name, entry, env));
}

function parseSource(name: string, entry: unknown, env: Env): SourceConfig {
  const at = (field: string) => `sources.${name}.${field}`;
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    throw new SourceConfigError(`sources.${name}`, 'must be an object with a "type"');
  }
  const settings = entry as Record<string, unknown>;
  const type = settings['type'];
  if (typeof type !== 'string' || !Object.hasOwn(CONNECTOR_TYPES, type)) {
    throw new SourceConfigError(at('type'), `must be one of ${Object.keys(CONNECTOR_TYPES).join(', ')}`);
  }
  const plan = TYPE_PLANS[type] ?? DEFAULT_PLAN;
  const unknown = Object.keys(settings).find(
    (field) =>
      plan.settings !== undefined && !SCHEDULE_FIELDS.includes(field) && !plan.settings.includes(field),
  );
  if (unknown !== undefined) {
    const known = [...(plan.settings ?? []), ...SCHEDULE_FIELDS.slice(1)].join(', ');
    throw new SourceConfigError(at(unknown), `is not a setting of ${type} sources; they take ${known}`);
  }
  const secrets: string[] = [];
  const resolved: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(settings)) {
    if (SCHEDULE_FIELDS.includes(field)) continue;
    if (SECRET.test(field) && !(typeof value === 'string' && namesOneVariable(value))) {
      throw new SourceConfigError(
        at(field),
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own syntax, shown as written
        'must name an environment variable holding the secret, as ${ENTSOE_TOKEN}, never the secret itself',
      );
    }
    resolved[field] = substitute(value, at(field), env, secrets);
  }
  // A connector's message may quote a value: a secret in it is replaced by its variable's name.
  const scrub = (text: string) =>
    secrets.reduce((t, s) => (s === '' ? t : t.replaceAll(s, '(secret)')), text);
  try {
    createConnector(type, resolved);
  } catch (error) {
    if (!(error instanceof SourceSettingsError)) throw error;
    throw new SourceConfigError(at(error.field), scrub(error.message.slice(error.field.length + 2)));
  }
  return {
    name,
    type,
    schedule: parseSchedule(settings, plan, at),
    plan,
    minSpacingMs: parseSpacing(settings['minSpacingSeconds'], at) * 1000,
    settings: { ...settings },
    connect: (upstream) => createConnector(type, resolved, upstream),
  };
}

/** `${VAR}` in strings (and in lists of strings) replaced by the variable's value. */
function substitute(value: unknown, field: string, env: Env, secrets: string[]): unknown {
  if (Array.isArray(value)) return value.map((v) => substitute(v, field, env, secrets));
  if (typeof value !== 'string') return value;
  return substituteVariables(
    value,
    env,
    (variable) =>
      new SourceConfigError(field, `names the environment variable ${variable}, which is not set`),
    (secret) => secrets.push(secret),
  );
}

function parseSchedule(
  settings: Record<string, unknown>,
  plan: SourcePlan,
  at: (field: string) => string,
): ScheduleEntry[] {
  const { schedule, scheduleZone } = settings;
  if (scheduleZone !== undefined && (typeof scheduleZone !== 'string' || !isZone(scheduleZone))) {
    throw new SourceConfigError(at('scheduleZone'), 'must be an IANA time zone, as Europe/Brussels');
  }
  if (schedule === undefined) {
    return plan.schedule.map((entry) => ({
      ...entry,
      ...(typeof scheduleZone === 'string' && { zone: scheduleZone }),
    }));
  }
  const crons = typeof schedule === 'string' ? [schedule] : schedule;
  if (!Array.isArray(crons) || crons.length === 0 || crons.some((c) => typeof c !== 'string')) {
    throw new SourceConfigError(at('schedule'), 'must be a cron expression or a list of them');
  }
  const zone = typeof scheduleZone === 'string' ? scheduleZone : (plan.schedule[0]?.zone ?? 'UTC');
  return crons.map((cron: string) => {
    try {
      new Cron(cron, { timezone: zone, paused: true }).stop();
    } catch (error) {
      throw new SourceConfigError(
        at('schedule'),
        `"${cron}" is not a cron expression: ${(error as Error).message}`,
      );
    }
    return { cron, zone };
  });
}

function parseSpacing(value: unknown, at: (field: string) => string): number {
  if (value === undefined) return DEFAULT_MIN_SPACING_S;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_SPACING_S) {
    throw new SourceConfigError(
      at('minSpacingSeconds'),
      `must be a whole number of seconds from 0 to ${MAX_SPACING_S}`,
    );
  }
  return value;
}

function isZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
