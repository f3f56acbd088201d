/**
 * The pages Pricepoint serves itself: the operator's console at `/console` and the key holder's
 * portal at `/portal` (docs/console.md), plain ES modules from `web/` with uPlot from node_modules.
 * Nothing is built and nothing comes from another host.
 *
 * A page's HTML is `web/<page>/index.html`, served with `no-cache`; it names its scripts and styles
 * under `/assets/<version>/`, where `<version>` is a hash of every file served, so those are kept
 * for a year and a new release changes every URL at once. Modules import each other by relative
 * paths, which stay under the same version.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors/api-error.js';
import { PAGE_HEADERS } from './csp.js';
import { readTree, type StaticFile, sendFile, staticFile, treeVersion } from './static-files.js';

/** The pages, each served at `/<name>` when `web/<name>/index.html` exists. */
export const PAGE_NAMES = ['console', 'portal'] as const;
export const ASSETS_PREFIX = '/assets';

/** Where a page's HTML puts the assets' versioned prefix (`/assets/<version>`). */
const ASSETS_PLACEHOLDER = '{{assets}}';
const IMMUTABLE = 'public, max-age=31536000, immutable';

// src/http/pages/ and dist/http/pages/ both sit three levels below the package root, where web/ is.
const WEB_ROOT = fileURLToPath(new URL('../../../web/', import.meta.url));

/** uPlot, as `vendor/uplot.js` and `vendor/uplot.css` beside the files of web/ (MIT, see its LICENSE). */
const VENDOR: Readonly<Record<string, string>> = {
  'vendor/uplot.js': 'uplot/dist/uPlot.esm.js',
  'vendor/uplot.css': 'uplot/dist/uPlot.min.css',
};

export interface PageFiles {
  /** Every asset by its path under `/assets/<version>/`. */
  readonly assets: ReadonlyMap<string, StaticFile>;
  /** Each page's HTML, with its assets' prefix written in. */
  readonly pages: ReadonlyMap<string, StaticFile>;
  readonly version: string;
}

/** Reads web/ and the vendored files: the whole set the pages are served from. */
export async function loadPageFiles(root: string = WEB_ROOT): Promise<PageFiles> {
  const tree = await readTree(root);
  const require = createRequire(import.meta.url);
  const assets = new Map<string, StaticFile>();
  for (const [name, file] of tree) if (!name.endsWith('.html')) assets.set(name, file);
  for (const [name, module] of Object.entries(VENDOR)) {
    const file = staticFile(name, await readFile(require.resolve(module)));
    if (file !== undefined) assets.set(name, file);
  }
  const version = treeVersion(new Map([...tree, ...assets]));
  const pages = new Map<string, StaticFile>();
  for (const name of PAGE_NAMES) {
    const html = tree.get(`${name}/index.html`);
    if (html === undefined) continue;
    const text = html.body.toString('utf8').replaceAll(ASSETS_PLACEHOLDER, `${ASSETS_PREFIX}/${version}`);
    const file = staticFile('index.html', Buffer.from(text));
    if (file !== undefined) pages.set(name, file);
  }
  return { assets, pages, version };
}

export async function registerPages(app: FastifyInstance, files?: PageFiles): Promise<void> {
  const { assets, pages, version } = files ?? (await loadPageFiles());

  for (const [name, file] of pages) {
    app.get(`/${name}`, { schema: { hide: true } }, async (request, reply) =>
      sendFile(request, reply.headers(PAGE_HEADERS), file, 'no-cache'),
    );
    // The pages route by the URL's fragment (`/console#keys`): a trailing slash is a typo, not a page.
    app.get(`/${name}/`, { schema: { hide: true } }, async (_request, reply) =>
      reply.headers(PAGE_HEADERS).redirect(`/${name}`),
    );
  }

  app.get<{ Params: { version: string; '*': string } }>(
    `${ASSETS_PREFIX}/:version/*`,
    { schema: { hide: true } },
    async (request, reply) => {
      reply.headers(PAGE_HEADERS);
      const file = assets.get(request.params['*']);
      if (file === undefined) {
        throw new ApiError('not_found', 'There is no such file of the pages.');
      }
      if (request.params.version !== version) {
        // A page loaded before an upgrade asks for its old files: they are gone, the page is not.
        throw new ApiError('not_found', 'This file belongs to an older version of the page; reload it.');
      }
      return sendFile(request, reply, file, IMMUTABLE);
    },
  );
}
