/**
 * Commands that change something are admin actions too (docs/audit.md): recorded with actor `cli`,
 * no address and no HTTP status, and the command's error code when it failed.
 */
import { ApiError } from '../domain/errors/api-error.js';
import { type AuditAction, type AuditService, CLI_ACTOR } from '../services/audit-service.js';
import { CliError } from './cli-error.js';

/** Records one command's action; `error` is what it failed with, if it did. */
export async function recordCli(
  log: AuditService,
  action: AuditAction,
  target: string | null,
  error?: unknown,
): Promise<void> {
  const code =
    error === undefined
      ? null
      : error instanceof ApiError || error instanceof CliError
        ? error.code
        : 'internal';
  await log.record({ actor: CLI_ACTOR, address: null, action, target, status: null, code });
}

/**
 * Runs `run` and records it, failed or not; `target` names what it acted on, from its result when
 * that is where the name comes from (a new webhook's id).
 * @example await audited(services.audit, 'series.upsert', 'NO1', () => series.upsert('NO1', fields))
 */
export async function audited<T>(
  log: AuditService,
  action: AuditAction,
  target: string | null | ((result: T) => string | null),
  run: () => Promise<T>,
): Promise<T> {
  const named = typeof target === 'function' ? null : target;
  let result: T;
  try {
    result = await run();
  } catch (error) {
    await recordCli(log, action, named, error);
    throw error;
  }
  await recordCli(log, action, typeof target === 'function' ? target(result) : target);
  return result;
}
