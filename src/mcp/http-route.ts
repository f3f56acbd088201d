/**
 * `POST /mcp` (docs/mcp.md): the MCP streamable HTTP transport, stateless (no session: every POST
 * carries a whole exchange), behind the usual key. The POST itself is keyed but not counted; each
 * tool call is an API call the app makes to itself with the caller's key and address, so it passes
 * the same key guard, weights and limits as the call a client would make.
 */
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../domain/errors/api-error.js';
import type { KeyGuard } from '../http/pipeline/admit.js';
import { createMcpServer } from './tools.js';

/**
 * A JSON-RPC message or a batch of them. What is not even that is refused here, as problem+json like
 * every bad request; what the protocol itself refuses (an unknown method) is its own JSON-RPC error.
 */
const McpBody = Type.Union([Type.Object({}), Type.Array(Type.Object({}), { minItems: 1 })]);

/** The transport answers only clients that take both JSON and an event stream (the MCP specification). */
function acceptsBoth(accept: string | undefined): boolean {
  const types = (accept ?? '').split(',').map((part) => part.split(';')[0]?.trim().toLowerCase());
  return types.includes('application/json') && types.includes('text/event-stream');
}

export function mcpRoutes(app: FastifyInstance, deps: { keyGuard: KeyGuard }): void {
  app.post(
    '/mcp',
    // Not in the OpenAPI document: it is a protocol endpoint with its own description (docs/mcp.md).
    { onRequest: deps.keyGuard({ count: false }), schema: { hide: true, body: McpBody } },
    async (request, reply) => {
      if (!acceptsBoth(request.headers.accept)) {
        throw new ApiError(
          'not_acceptable',
          'An MCP client sends Accept: application/json, text/event-stream (docs/mcp.md).',
        );
      }
      const keyHeaders: Record<string, string> = {};
      for (const name of ['x-api-key', 'authorization'] as const) {
        const value = request.headers[name];
        if (typeof value === 'string') keyHeaders[name] = value;
      }
      const server = createMcpServer(async (pathAndQuery) => {
        const answer = await app.inject({
          method: 'GET',
          url: pathAndQuery,
          headers: { ...keyHeaders, accept: 'application/json' },
          remoteAddress: request.ip,
        });
        return { status: answer.statusCode, body: answer.body };
      });
      // JSON answers, not an event stream: a stateless exchange has nothing to stream later.
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      // The SDK writes the answer itself; the headers every answer carries (request id, HSTS) go first.
      reply.hijack();
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (value !== undefined) reply.raw.setHeader(name, value);
      }
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  );
}
