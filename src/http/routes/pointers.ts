/**
 * What a newcomer's first request finds: `/`, `/api` and `/api/v1/` answer with where the reference
 * page and the OpenAPI document are, instead of a bare 404. No key, not counted, and kept out of the
 * OpenAPI document (they are signposts, not part of the API).
 */
import type { FastifyInstance } from 'fastify';
import { DOCS_PREFIX, OPENAPI_PATH } from '../contract/docs.js';
import { DOCS_FAVICON_SVG } from '../contract/docs-theme.js';

/** The paths that point the way, with and without their trailing slash. */
export const POINTER_PATHS = ['/', '/api', '/api/', '/api/v1', '/api/v1/'] as const;

export function pointerRoutes(app: FastifyInstance): void {
  const body = JSON.stringify({
    name: 'Pricepoint',
    detail: `The API lives under /api/v1/. Read ${DOCS_PREFIX} to try it, or ${OPENAPI_PATH} for the OpenAPI document.`,
    links: { docs: DOCS_PREFIX, openapi: OPENAPI_PATH, api: '/api/v1/', health: '/healthz' },
  });
  // RFC 8631 link relations, so that tools find the documentation without reading the body.
  const link = `<${DOCS_PREFIX}>; rel="service-doc", <${OPENAPI_PATH}>; rel="service-desc"`;
  for (const url of POINTER_PATHS) {
    app.get(url, { schema: { hide: true } }, async (_request, reply) =>
      reply
        .header('cache-control', 'public, max-age=3600')
        .header('link', link)
        .type('application/json; charset=utf-8')
        .send(body),
    );
  }
  // Browsers ask for /favicon.ico by themselves on any page of this origin: the docs page's mark,
  // rather than a 404 in every server log.
  app.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=86400').type('image/svg+xml').send(DOCS_FAVICON_SVG),
  );
}
