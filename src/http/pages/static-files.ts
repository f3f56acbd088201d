/**
 * The files the pages load, read into memory once at start: a fixed table, so a request can only
 * name a file that is in it (no path from the URL ever reaches the file system) and no client can
 * make the server hold more. Each file carries its content type, an ETag, and its compressed bytes,
 * made on first request off the event loop.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { extname, join, relative, sep } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { codedTag, entityTag, noneMatch } from '../pipeline/answer.js';
import { type Coding, preferredCoding } from '../pipeline/answer-cache.js';

/** The types of the files served; a file of any other kind in `web/` is not served. */
export const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** Kinds worth compressing; images and fonts are compressed already. */
const TEXT = new Set(['.html', '.js', '.mjs', '.css', '.svg', '.json', '.txt']);
/** Below this a compressed body saves less than its headers cost. */
const MIN_COMPRESS_BYTES = 1024;

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

export interface StaticFile {
  readonly type: string;
  readonly etag: string;
  readonly body: Buffer;
  readonly compressible: boolean;
  /** The body in each coding, made once on first request. */
  readonly coded: Map<Coding, Promise<Buffer>>;
}

export function staticFile(name: string, body: Buffer): StaticFile | undefined {
  const extension = extname(name).toLowerCase();
  const type = CONTENT_TYPES[extension];
  if (type === undefined) return undefined;
  return {
    type,
    etag: entityTag(name, body),
    body,
    compressible: TEXT.has(extension) && body.length >= MIN_COMPRESS_BYTES,
    coded: new Map(),
  };
}

/** Every servable file under `root`, by its path from `root` with `/` separators (`shared/api.js`). */
export async function readTree(root: string): Promise<Map<string, StaticFile>> {
  const files = new Map<string, StaticFile>();
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  for (const entry of entries) {
    if (!entry.isFile() || entry.name.startsWith('.')) continue;
    const path = join(entry.parentPath, entry.name);
    const name = relative(root, path).split(sep).join('/');
    const file = staticFile(name, await readFile(path));
    if (file !== undefined) files.set(name, file);
  }
  return files;
}

/** A short hash of every file's name and bytes: the version in the assets' URLs. */
export function treeVersion(files: ReadonlyMap<string, StaticFile>): string {
  const hash = createHash('sha256');
  for (const name of [...files.keys()].sort()) hash.update(name).update('\0').update(files.get(name)!.etag);
  return hash.digest('base64url').slice(0, 12);
}

function coded(file: StaticFile, coding: Coding): Promise<Buffer> {
  let body = file.coded.get(coding);
  if (body === undefined) {
    body =
      coding === 'br'
        ? brotli(file.body, { params: { [constants.BROTLI_PARAM_SIZE_HINT]: file.body.length } })
        : gzipAsync(file.body, { level: 9 });
    file.coded.set(coding, body);
  }
  return body;
}

/**
 * Sends `file` as 200 (compressed when the client takes it) or 304 when `If-None-Match` names it.
 * `cacheControl` says how long the browser may keep it: `no-cache` for a page, a year for an asset
 * whose URL changes with its content.
 */
export async function sendFile(
  request: FastifyRequest,
  reply: FastifyReply,
  file: StaticFile,
  cacheControl: string,
): Promise<FastifyReply> {
  const coding = file.compressible ? preferredCoding(request.headers['accept-encoding']) : undefined;
  const etag = codedTag(file.etag, coding);
  reply.header('etag', etag).header('cache-control', cacheControl);
  if (file.compressible) reply.header('vary', 'accept-encoding');
  if (noneMatch(request.headers['if-none-match'], etag)) return reply.code(304).send();
  if (coding !== undefined) reply.header('content-encoding', coding);
  return reply.type(file.type).send(coding === undefined ? file.body : await coded(file, coding));
}
