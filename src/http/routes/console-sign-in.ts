/**
 * `POST /api/v1/console/sign-in` (docs/audit.md, "Console sign-ins"): the console calls it once when
 * an operator signs in with an admin key, to learn whose key it holds and to leave an entry in the
 * audit log. A refusal is recorded too (a non-admin key with its id; a wrong key with actor
 * `anonymous`, never the key), as far as the failed-login budget lets it be tried.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { SCOPES, type Scope } from '../../stores/types.js';
import { jsonAnswer, keyedErrors, RATE_LIMIT_HEADERS } from '../contract/schemas.js';
import type { KeyGuard } from '../pipeline/admit.js';

const SignedIn = Type.Object({
  id: Type.String({ description: 'The id of the key the console signed in with.' }),
  name: Type.String(),
  tier: Type.String(),
  scopes: Type.Array(Type.Unsafe<Scope>({ type: 'string', enum: [...SCOPES] })),
  expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the key stops working, RFC 3339; null: never.',
  }),
});
/**
 * Refusals of a key that took a unit of the address' failed-login budget (docs/keys-and-tiers.md):
 * recorded, since the budget bounds how fast anyone adds them. A request without a key takes none.
 */
const BUDGETED_REFUSALS: ReadonlySet<string | null> = new Set([
  'invalid_api_key',
  'conflicting_api_keys',
  'api_key_in_query',
]);
const NoQuery = Type.Object({}, { additionalProperties: false });
// Nothing to send: an empty object or no body at all.
const NoBody = Type.Object({}, { additionalProperties: false });

export function consoleSignInRoutes(app: FastifyInstance, deps: { keyGuard: KeyGuard }): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  api.post(
    '/api/v1/console/sign-in',
    {
      onRequest: deps.keyGuard({ scope: 'admin' }),
      config: {
        audit: {
          action: 'console.sign_in',
          target: (request) => request.caller?.key.id,
          open: (_status, code) => BUDGETED_REFUSALS.has(code),
        },
      },
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        operationId: 'signInToConsole',
        summary: 'Sign in to the console',
        description:
          'Answers who the admin key is and records the sign-in in the audit log (`console.sign_in`); a refused one is recorded too. The body may be left out.',
        tags: ['keys'],
        querystring: NoQuery,
        body: NoBody,
        response: {
          200: jsonAnswer('The key the console signed in with.', SignedIn, RATE_LIMIT_HEADERS),
          ...keyedErrors(413, 415),
        },
      },
    },
    async (request, reply) => {
      const { key } = request.caller!;
      reply.header('cache-control', 'no-store');
      return {
        id: key.id,
        name: key.name,
        tier: key.tier,
        scopes: [...key.scopes],
        expiresAt: key.expiresAt === null ? null : new Date(key.expiresAt).toISOString(),
      };
    },
  );
}
