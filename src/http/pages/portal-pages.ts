/**
 * The portal's pages besides `/portal` itself (docs/portal.md): `/portal/claim`, which an
 * invitation's link opens (its token rides in the fragment, which never reaches a server), and
 * `/portal/signup`. Each is `web/portal/<name>.html`, served like the other pages (./pages.ts), with
 * the assets' versioned prefix written in; the sign-up page also gets whether open sign-up is on.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { PAGE_HEADERS } from './csp.js';
import { ASSETS_PREFIX } from './pages.js';
import { sendFile, staticFile } from './static-files.js';

// src/http/pages/ and dist/http/pages/ both sit three levels below the package root, where web/ is.
const PORTAL_ROOT = fileURLToPath(new URL('../../../web/portal/', import.meta.url));

/** The sub-pages of the portal, each served at `/portal/<name>` from `web/portal/<name>.html`. */
export const PORTAL_SUBPAGES = ['claim', 'signup'] as const;

export interface PortalPageOptions {
  /** The assets' version (./pages.ts), the same as the main page's. */
  readonly version: string;
  /** The tier open sign-up makes keys in; undefined: sign-up is by invitation only. */
  readonly signupTier?: string | undefined;
}

/** HTML-escapes a value written into an attribute: a tier name is the operator's, but still text. */
function attribute(value: string): string {
  return value
    .replaceAll('&', '&amp;')
    .replaceAll('"', '&quot;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;');
}

export async function registerPortalPages(
  app: FastifyInstance,
  options: PortalPageOptions,
  root: string = PORTAL_ROOT,
): Promise<void> {
  const values: Record<string, string> = {
    '{{assets}}': `${ASSETS_PREFIX}/${options.version}`,
    '{{signup}}': options.signupTier === undefined ? 'closed' : 'open',
    '{{signupTier}}': attribute(options.signupTier ?? ''),
  };
  for (const name of PORTAL_SUBPAGES) {
    let text = await readFile(`${root}${name}.html`, 'utf8');
    for (const [placeholder, value] of Object.entries(values)) text = text.replaceAll(placeholder, value);
    const file = staticFile(`${name}.html`, Buffer.from(text));
    if (file === undefined) continue;
    app.get(`/portal/${name}`, { schema: { hide: true } }, async (request, reply) =>
      sendFile(request, reply.headers(PAGE_HEADERS), file, 'no-cache'),
    );
  }
}
