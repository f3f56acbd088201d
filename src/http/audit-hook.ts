/**
 * Admin actions into the audit log (docs/audit.md). A route declares its action in its config
 * (`config: { audit: { action: 'keys.revoke', target: (r) => r.params.id } }`); one `onSend` hook
 * writes the entry with the acting key, the client address and the answer's status and problem code,
 * before the answer leaves, so a client that has its answer finds the entry. Only authenticated
 * requests are recorded: an unknown caller has no actor, and could otherwise fill the log. Routes
 * that need no key (claims, sign-up) say which answers are recorded, with actor `anonymous`: only
 * ones a client cannot repeat without bound (docs/invitations.md); the console sign-in records its
 * refusals that the failed-login budget counts (docs/audit.md).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ANONYMOUS_ACTOR, type AuditAction, type AuditService } from '../services/audit-service.js';

export interface AuditRoute {
  readonly action: AuditAction;
  /** What the action is done to, from the request (a path parameter); a handler that makes the thing sets `request.auditTarget`. */
  readonly target?: (request: FastifyRequest) => string | undefined;
  /**
   * Whether an answer without a known key is recorded (actor `anonymous`), by its status and problem
   * code: for routes that need no key, and the console sign-in's refusals.
   */
  readonly open?: (status: number, code: string | null) => boolean;
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

/**
 * The `onSend` hook that records audited routes (registered once in app.ts). It runs for every
 * request, so it takes `done` and makes a promise only for an audited one.
 */
export function auditHook(audit: AuditService) {
  return function recordAudit(
    request: FastifyRequest,
    reply: FastifyReply,
    payload: unknown,
    done: (error: Error | null, payload?: unknown) => void,
  ): void {
    const route = (request.routeOptions.config as { audit?: AuditRoute }).audit;
    if (
      route === undefined ||
      (request.caller === null && route.open?.(reply.statusCode, request.problemCode) !== true)
    ) {
      done(null, payload);
      return;
    }
    let target = request.auditTarget;
    if (target === null) {
      try {
        target = route.target?.(request) ?? null;
      } catch {
        target = null;
      }
    }
    audit
      .record({
        actor: request.caller?.key.id ?? ANONYMOUS_ACTOR,
        address: request.ip,
        action: route.action,
        target,
        status: reply.statusCode,
        code: request.problemCode,
        keyId: request.auditKeyId,
      })
      .then(() => done(null, payload), done);
  };
}
