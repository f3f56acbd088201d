/**
 * `GET /llms.txt` (docs/mcp.md): a short guide to the API for agents, after the llms.txt convention
 * (a Markdown file: a title, a summary, then lists of links). No key, not counted. Its list of
 * endpoints is written from the OpenAPI document the server serves, so it names exactly the
 * operations there are; the pages it links are the repository's docs (test/mcp checks each resolves).
 */
import type { FastifyInstance } from 'fastify';
import { DOCS_PREFIX, OPENAPI_PATH } from '../http/contract/docs.js';

interface Operation {
  readonly summary?: string;
  readonly security?: readonly unknown[];
}

/** The guide, from the OpenAPI document `paths`. */
export function llmsTxt(paths: Record<string, Record<string, Operation>>): string {
  const endpoints: string[] = [];
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const keyed = operation.security === undefined || operation.security.length > 0 ? '' : ' (no key)';
      endpoints.push(`- ${method.toUpperCase()} ${path}: ${operation.summary ?? ''}${keyed}`);
    }
  }
  return [
    '# Pricepoint',
    '',
    '> A price data API over HTTPS: day-ahead electricity prices, FX rates, commodities, crypto and equities, per interval, with currency and unit conversion, tariffs and the cheapest window. Every call under /api/v1/ needs an API key in the `x-api-key` header or `Authorization: Bearer KEY` (never in the URL) and is rate limited per access tier.',
    '',
    'Answers are JSON (or CSV with `format=csv`); prices are JSON numbers, exactly as published. Times are RFC 3339 with the offset in force in the series time zone; a day is local midnight to local midnight, so it can have 23 or 25 hours. Errors are application/problem+json with a `code` from a closed list; 429 carries `Retry-After`. Agents can use the MCP server instead of calling the API: `POST /mcp` (streamable HTTP, same key) or `pricepoint mcp` over stdio.',
    '',
    '## Docs',
    '',
    `- [API reference](${DOCS_PREFIX}): every endpoint, parameter and answer, with examples`,
    `- [OpenAPI 3.1 document](${OPENAPI_PATH}): the machine-readable description of the API`,
    '- [Using the API](docs/using-the-api.md): parameters, caching, rate limits and errors, in the repository',
    '- [Errors](docs/errors.md): the problem codes and what to do about each',
    '- [Tariffs](docs/tariffs.md): what a household pays, rank and level',
    '- [MCP](docs/mcp.md): the MCP tools and how to connect a client',
    '',
    '## Endpoints',
    '',
    ...endpoints,
    '',
    '## Optional',
    '',
    '- [Data model](docs/data-model.md): series, intervals, days and time zones',
    '- [Keys and tiers](docs/keys-and-tiers.md): key format, tiers, limits and request weights',
    '',
  ].join('\n');
}

export function llmsTxtRoute(app: FastifyInstance): void {
  let body: string | undefined;
  // Kept out of the OpenAPI document, as the other signposts are (routes/pointers.ts).
  app.get('/llms.txt', { schema: { hide: true } }, async (_request, reply) => {
    // Written once, on first request: the document is complete only after every route is registered.
    body ??= llmsTxt((app.swagger() as { paths: Record<string, Record<string, Operation>> }).paths);
    return reply
      .header('cache-control', 'public, max-age=3600')
      .type('text/markdown; charset=utf-8')
      .send(body);
  });
}
