/**
 * Admin actions into the audit log (docs/audit.md). A route declares its action in its config
 * (`config: { audit: { action: 'keys.revoke', target: (r) => r.params.id } }`); one `onSend` hook
 * writes the entry with the acting key, the client address and the answer's status and problem code,
 * before the answer leaves, so a client that has its answer finds the entry. Only authenticated
 * requests are recorded (an unknown caller has no actor, and could otherwise fill the log), with two
 * exceptions. Routes that need no key (claims, sign-up) say which answers are recorded, with actor
 * `anonymous`: only ones a client cannot repeat without bound (docs/invitations.md). And the console
 * sign-in's refusals that the failed-login budget counts (`refusals`), with actor `unknown`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  ANONYMOUS_ACTOR,
  type AuditAction,
  type AuditService,
  UNKNOWN_ACTOR,
} from '../services/audit-service.js';

/** Refusals that took a unit of the address' failed-login budget (docs/keys-and-tiers.md). */
const BUDGETED_REFUSALS: ReadonlySet<string | null> = new Set([
  'invalid_api_key',
  'conflicting_api_keys',
  'api_key_in_query',
]);

export interface AuditRoute {
  readonly action: AuditAction;
  /**
   * Record refusals before any key was known too (actor `unknown`): only those that took a unit of the
   * address' failed-login budget, which bounds how fast anyone can add them.
   */
  readonly refusals?: boolean;
  /** What the action is done to, from the request (a path parameter); a handler that makes the thing sets `request.auditTarget`. */
  readonly target?: (request: FastifyRequest) => string | undefined;
  /** For a route that needs no key: whether an answer of this status is recorded (actor `anonymous`). */
  readonly open?: (status: number) => boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The admin action this route performs, for the audit log. */
    audit?: AuditRoute;
  }
  interface FastifyRequest {
    /** The thing an audited action made (a new key's or webhook's id), set by its handler. */
    auditTarget: string | null;
    /** The key a claim or sign-up made, set by its handler. */
    auditKeyId: string | null;
  }
}

/** The `onSend` hook that records audited routes (registered once in app.ts). */
export function auditHook(audit: AuditService) {
  return async function recordAudit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const route = (request.routeOptions.config as { audit?: AuditRoute }).audit;
    if (route === undefined) return;
    if (request.caller === null) {
      const open = route.open?.(reply.statusCode) === true;
      const refused = route.refusals === true && BUDGETED_REFUSALS.has(request.problemCode);
      if (!open && !refused) return;
    }
    let target = request.auditTarget;
    if (target === null) {
      try {
        target = route.target?.(request) ?? null;
      } catch {
        target = null;
      }
    }
    await audit.record({
      actor: request.caller?.key.id ?? (route.open === undefined ? UNKNOWN_ACTOR : ANONYMOUS_ACTOR),
      address: request.ip,
      action: route.action,
      target,
      status: reply.statusCode,
      code: request.problemCode,
      keyId: request.auditKeyId,
    });
  };
}
