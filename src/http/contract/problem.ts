/**
 * One error body for everything (RFC 9457 problem+json), one handler for thrown errors (the status
 * each error maps to is error-status.ts's), and the 404/405 answers for paths and methods no route serves.
 */

import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay from 'find-my-way';
import { ApiError, type ErrorCode, errorTitle } from '../../domain/errors/api-error.js';
import { maskKeys, maskKeysInUrl } from '../../domain/keys/key-format.js';
import { commonHeaders } from '../pipeline/headers.js';
import { rateLimitHeaders } from '../pipeline/rate-limit-headers.js';
import { DOCS_PREFIX } from './docs.js';
import { errorStatus } from './error-status.js';

/**
 * A problem's `type`: the IANA registered type where one exists, else a reference to this server's
 * own reference page, `/docs#problem-CODE` (docs/using-the-api.md "Errors"). Relative, as RFC 9457 allows: it
 * resolves against the request's URL, so it reaches the served docs under whatever name and port
 * the client used, behind a proxy too, and never a host that may not exist.
 * @example problemType('not_found') // '/docs#problem-not_found'
 */
export function problemType(code: ErrorCode): string {
  if (code === 'rate_limited') return 'https://iana.org/assignments/http-problem-types#quota-exceeded';
  return `${DOCS_PREFIX}#problem-${code}`;
}

/** The challenge of every 401 (RFC 9110 section 11.6.1): the key goes in as a bearer token. */
const WWW_AUTHENTICATE = 'Bearer realm="pricepoint"';

/**
 * The header fields an error answer carries besides the common ones: the challenge of a 401, the
 * limits of a rate-limit refusal (`Retry-After` included) and when to retry.
 */
export function problemHeaders(error: ApiError): Record<string, string> {
  const { limits, retryAfterSeconds } = error.options;
  const fields: Record<string, string> = {};
  if (errorStatus(error.code) === 401) fields['www-authenticate'] = WWW_AUTHENTICATE;
  if (limits !== undefined)
    Object.assign(fields, rateLimitHeaders(limits.decision, limits.nowMs, limits.cost));
  else if (retryAfterSeconds !== undefined) fields['retry-after'] = String(retryAfterSeconds);
  return fields;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The problem code answered, for metrics; `null` when the answer is no error. */
    problemCode: ErrorCode | null;
  }
}

/**
 * Sends `error` as problem+json. The whole body is masked, `extra` members included (they can echo
 * a parameter name), so a response never contains a key.
 */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  const path = maskKeysInUrl(request.url.split('?')[0] ?? '/');
  const body = {
    type: problemType(error.code),
    title: errorTitle(error.code),
    status: errorStatus(error.code),
    detail: maskKeys(error.detail),
    instance: path,
    code: error.code,
    requestId: request.id,
    ...error.options.extra,
  };
  request.problemCode = error.code;
  reply.headers(problemHeaders(error));
  return reply
    .code(errorStatus(error.code))
    .header('cache-control', 'no-store')
    .type('application/problem+json; charset=utf-8')
    .send(maskKeys(JSON.stringify(body)));
}

/** A parameter name and a readable reason from a schema validation failure. */
function validationProblem(error: FastifyError, query: unknown): ApiError {
  const first = error.validation?.[0];
  const context = error.validationContext ?? 'querystring';

  const where = context === 'querystring' ? 'parameter' : context === 'params' ? 'path segment' : 'field';
  if (first?.keyword === 'additionalProperties') {
    const name = String((first.params as { additionalProperty?: unknown }).additionalProperty);
    return new ApiError('invalid_parameter', `Unknown ${where} "${name}".`, { extra: { parameter: name } });
  }
  if (first?.keyword === 'required') {
    const name = String((first.params as { missingProperty?: unknown }).missingProperty);
    return new ApiError('invalid_parameter', `The ${where} "${name}" is missing.`, {
      extra: { parameter: name },
    });
  }
  const name = (first?.instancePath ?? '').replace(/^\//, '').split('/')[0] || context;
  if (context === 'querystring' && Array.isArray((query as Record<string, unknown> | null)?.[name])) {
    // Refused rather than merged: `tz=A&tz=B` has no meaning to merge into, and one rule for every
    // parameter is easier to remember than a list of those that could be merged.
    return new ApiError(
      'invalid_parameter',
      `The parameter "${name}" is given more than once; give it once, with several values separated by commas (symbols=A,B).`,
      { extra: { parameter: name } },
    );
  }
  const allowed = (first?.params as { allowedValues?: unknown[] } | undefined)?.allowedValues;
  const reason = allowed ? `must be one of ${allowed.join(', ')}` : (first?.message ?? 'is malformed');
  return new ApiError('invalid_parameter', `The ${where} "${name}" ${reason}.`, {
    extra: { parameter: name },
  });
}

/**
 * Every media type a Pricepoint route reads a body in. A 415 names those the route it was sent to
 * has a parser for (Fastify's own `text/plain` parser is left out: no route is meant to get text).
 */
const BODY_MEDIA_TYPES = ['application/json', 'application/x-ndjson', 'application/jsonl', 'text/csv'];

/** "Send the body as a, b or c." for the media types `server` (a route's context) parses. */
function acceptedMediaTypes(server: FastifyInstance): string {
  const types = BODY_MEDIA_TYPES.filter((type) => server.hasContentTypeParser(type));
  if (types.length === 0) return 'This endpoint takes no body.';
  const list = types.length === 1 ? types[0] : `${types.slice(0, -1).join(', ')} or ${types.at(-1)}`;
  return `Send the body as ${list}, named in Content-Type.`;
}

/** Fastify's own client errors (bad body, media type, size) mapped onto our closed list of codes. */
function frameworkProblem(error: FastifyError, server: FastifyInstance): ApiError | undefined {
  const status = error.statusCode ?? 500;
  const byCode: Partial<Record<string, ErrorCode>> = {
    FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
    FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
    FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_parameter',
  };
  const code =
    byCode[error.code] ??
    (status === 413 ? 'payload_too_large' : status === 415 ? 'unsupported_media_type' : undefined);
  if (code === 'unsupported_media_type') {
    return new ApiError(code, `${errorTitle(code)}. ${acceptedMediaTypes(server)}`);
  }
  if (code !== undefined) return new ApiError(code, `${errorTitle(code)}.`);
  if (status >= 400 && status < 500) return new ApiError('invalid_parameter', 'The request is malformed.');
  return undefined;
}

/**
 * Answers a request Node's HTTP parser refused (malformed request line or headers, headers too
 * large, too slow to arrive) on the raw socket, still as problem+json and without echoing anything
 * the client sent. Any other client error (a reset, a TLS handshake that failed or took too long)
 * has no HTTP to answer: the connection is closed, else it would stay open with the answer queued
 * behind a handshake that never comes.
 */
export function clientErrorAnswer(error: NodeJS.ErrnoException, socket: Duplex): void {
  const http = error.code?.startsWith('HPE_') === true || error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
  if (!http || !socket.writable) {
    socket.destroy();
    return;
  }
  const status =
    error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const reason = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }[
    status
  ];
  const detail = {
    400: 'The request could not be parsed as HTTP.',
    408: 'The request took too long to arrive.',
    431: 'The request headers are too large.',
  }[status];
  writeRawProblem(socket, status, reason ?? 'Bad Request', detail ?? '', 'encrypted' in socket);
}

/**
 * Answers a plain `http://` request sent to the HTTPS port. TLS sees its first bytes (`GET /...`)
 * as a failed handshake; without this answer the client gets an empty reply and no hint why.
 * `socket` is the TCP connection beneath the failed TLS one, so the answer goes out unencrypted.
 */
export function plainHttpAnswer(socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  writeRawProblem(
    socket,
    400,
    'Bad Request',
    'This port speaks HTTPS only: send the request to https:// instead of http://.',
    false,
  );
}

/** Writes a whole problem+json answer on a raw socket and closes it. */
function writeRawProblem(socket: Duplex, status: number, reason: string, detail: string, tls: boolean): void {
  // No `instance`: the request line may be what could not be read, and nothing sent is echoed.
  const id = randomUUID();
  const body = JSON.stringify({
    type: problemType('invalid_parameter'),
    title: reason,
    status,
    detail,
    code: 'invalid_parameter',
    requestId: id,
  });
  // The fields every answer carries (../pipeline/headers.ts), HSTS only over TLS.
  const common = Object.entries(commonHeaders(tls))
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
      `X-Request-Id: ${id}\r\n${common}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export function registerProblemHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof ApiError) return sendProblem(request, reply, error);
    if (error.validation) return sendProblem(request, reply, validationProblem(error, request.query));
    const known = frameworkProblem(error, reply.server);
    if (known) return sendProblem(request, reply, known);
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(
      request,
      reply,
      new ApiError(
        'internal',
        `Something went wrong on our side. Quote request id ${request.id} when reporting it.`,
      ),
    );
  });

  // Every route is also entered here, so that a path served under other methods answers 405 + Allow.
  const router = FindMyWay({ ignoreTrailingSlash: false });
  app.addHook('onRoute', (route) => {
    // The CORS preflight route matches every path; it must not turn a 404 into a 405.
    if (route.url === '*') return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (!router.hasRoute(method as never, route.url)) router.on(method as never, route.url, () => {});
    }
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allow = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].filter(
      (m) => router.find(m as never, path) !== null,
    );
    if (allow.length > 0) {
      reply.header('allow', allow.join(', '));
      return sendProblem(
        request,
        reply,
        new ApiError('method_not_allowed', `${request.method} is not allowed here; use ${allow.join(', ')}.`),
      );
    }
    const version = /^\/api\/(v[^/]*)(\/|$)/.exec(path)?.[1];
    const detail =
      version !== undefined && version !== 'v1'
        ? `API version ${version} does not exist; this server serves /api/v1/.`
        : 'There is nothing at this path. The API lives under /api/v1/.';
    return sendProblem(request, reply, new ApiError('not_found', detail));
  });
}
