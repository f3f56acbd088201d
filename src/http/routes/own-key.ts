/**
 * `POST /api/v1/key/rotate` (docs/keys-and-tiers.md, "Rotating your own key"): the calling key
 * rotates itself, where its tier says `selfRotate: true`; the portal offers it where `/usage` says
 * `selfRotate`. The same rotation as the admin API's: the new key in this answer only, the old one
 * working for the grace period. Audited as `keys.rotate` with the key itself as actor and target.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors/api-error.js';
import type { KeyService } from '../../services/key-service.js';
import { jsonAnswer, keyedErrors, RATE_LIMIT_HEADERS } from '../contract/schemas.js';
import type { KeyGuard } from '../pipeline/admit.js';
import { RotateBody, RotatedSchema, rotated } from './keys.js';

export interface OwnKeyRoutesDeps {
  readonly keys: KeyService;
  readonly keyGuard: KeyGuard;
  /** Called after the key changed, so every instance stops answering it from its key cache. */
  readonly changed: (keyId: string) => void;
}

const NoQuery = Type.Object({}, { additionalProperties: false });

export function ownKeyRoutes(app: FastifyInstance, deps: OwnKeyRoutesDeps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  api.post(
    '/api/v1/key/rotate',
    {
      // Any scope: the key acts only on itself.
      onRequest: deps.keyGuard(),
      config: {
        audit: { action: 'keys.rotate', target: (request) => request.caller?.key.id },
      },
      // No body at all means "the defaults", like an empty object.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        operationId: 'rotateOwnKey',
        summary: 'Rotate the calling key',
        description:
          "Issues a new key with the calling key's name, tier, scopes, limits and addresses; the calling key keeps working for `graceSeconds`. Only where the key's tier allows it (`selfRotate` in GET /api/v1/usage); 403 self_rotation_not_allowed elsewhere. The body may be left out.",
        tags: ['usage'],
        querystring: NoQuery,
        body: RotateBody,
        response: {
          201: jsonAnswer(
            'The new key, with `key` shown this once, and the calling key with its new expiry.',
            RotatedSchema,
            RATE_LIMIT_HEADERS,
          ),
          ...keyedErrors(413, 415),
        },
      },
    },
    async (request, reply) => {
      const { key, tier } = request.caller!;
      if (tier.selfRotate !== true) {
        throw new ApiError(
          'self_rotation_not_allowed',
          `Keys of tier ${tier.name} may not rotate themselves; ask the operator for a new key.`,
        );
      }
      // A replaced key works through its grace period but makes no further successor: whoever
      // holds it then may be the one it was rotated away from (docs/keys-and-tiers.md). The key as
      // admitted says so; the store refuses a second rotation too, should the key cache lag.
      if (key.replacedBy != null) {
        throw new ApiError(
          'self_rotation_not_allowed',
          'This key was rotated already; it works until its grace period ends, and only the key that replaced it may rotate.',
        );
      }
      return rotated(reply, deps, key.id, request.body);
    },
  );
}
