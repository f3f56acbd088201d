/** What every answer to a hostile request must be (docs/errors.md), and the requests a client sends next. */
import assert from 'node:assert/strict';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { ERROR_CODES, type ErrorCode } from '../../src/domain/errors/api-error.js';
import { errorStatus } from '../../src/http/contract/error-status.js';
import type { HostileRequest } from './hostile-request-heads.js';
import { type KeyRing, ROUTES, routeName, secretOf } from './hostile-routes.js';
import { pct } from './hostile-values.js';

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | number | undefined>;
  readonly body: Buffer;
}

/** Header names whose repeats Node drops, keeping the first (`http.IncomingMessage.headers`). */
const FIRST_WINS = new Set(
  ['age', 'authorization', 'content-length', 'content-type', 'etag', 'expires', 'from', 'host']
    .concat(['if-modified-since', 'if-unmodified-since', 'last-modified', 'location', 'max-forwards'])
    .concat(['proxy-authorization', 'referer', 'retry-after', 'server', 'user-agent']),
);

/** The headers object Node would build from these header lines. */
export function nodeHeaders(lines: HostileRequest['headers']): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [rawName, value] of lines) {
    const name = rawName.toLowerCase();
    const held = out[name];
    if (held === undefined) out[name] = name === 'set-cookie' ? [value] : value;
    else if (Array.isArray(held)) held.push(value);
    else if (!FIRST_WINS.has(name)) out[name] = `${held}${name === 'cookie' ? '; ' : ', '}${value}`;
  }
  return out;
}

/** Percent-decodes byte by byte, as leniently as `maskKeysInUrl`, so an encoded key is seen too. */
function lenientDecode(text: string): string {
  return text.replace(/%[0-9A-Fa-f]{2}/g, (m) => String.fromCharCode(Number.parseInt(m.slice(1), 16)));
}

/**
 * The secrets a request carries: the run after every `pp_<kind>_` anywhere in it (URL decoded,
 * header values, body), overlapping ones included, so a key written twice in a row counts twice;
 * and a known key's own secret where a run starts with it. Runs under 16 characters are left out:
 * they would match innocent text by chance.
 */
function secretsIn(request: HostileRequest, ring: KeyRing): string[] {
  const parts = [lenientDecode(request.url), ...request.headers.map(([, value]) => value)];
  if (request.body) parts.push(request.body.toString('utf8'), request.body.toString('latin1'));
  const found = new Set<string>();
  for (const match of parts.join('\n').matchAll(/(?=pp_(?:live|test|demo)_([0-9A-Za-z]{16,}))/g)) {
    found.add(match[1] as string);
  }
  const known = [
    ring.read,
    ring.write,
    ring.admin,
    ring.demo,
    ring.test,
    ring.revoked,
    ring.unknown,
    ...ring.selfRotating,
  ].map(secretOf);
  for (const secret of known) if ([...found].some((run) => run.startsWith(secret))) found.add(secret);
  return [...found];
}

function bodyText(answer: Answer): string {
  const coding = String(answer.headers['content-encoding'] ?? '');
  // A HEAD answer carries the headers of the GET, content-encoding included, and no body.
  if (answer.body.length === 0) return '';
  if (coding === 'br') return brotliDecompressSync(answer.body).toString('utf8');
  if (coding === 'gzip') return gunzipSync(answer.body).toString('utf8');
  if (coding === 'deflate') return inflateSync(answer.body).toString('utf8');
  return answer.body.toString('utf8');
}

/** Statuses seen per route, to prove the requests reached the handlers and not only the guards. */
export const seen = new Map<string, Set<number>>();

/**
 * What docs/errors.md promises of every answer, whatever was asked. The closed list of codes is
 * the source's `ERROR_CODES`, which errors.test.ts proves equal to the one docs/errors.md writes down.
 */
export function checkAnswer(request: HostileRequest, answer: Answer, ring: KeyRing): void {
  const where = `${request.method} ${request.url.slice(0, 300)} (${request.route})`;
  const body = bodyText(answer);
  assert.ok(answer.status < 500, `${where} answered ${answer.status}: ${body.slice(0, 500)}`);
  if (answer.status >= 400) {
    const type = String(answer.headers['content-type']);
    assert.match(type, /^application\/problem\+json(;|$)/, `${where} answered ${answer.status} as ${type}`);
    if (request.method !== 'HEAD') {
      let problem: Record<string, unknown> = {};
      assert.doesNotThrow(
        () => {
          problem = JSON.parse(body) as Record<string, unknown>;
        },
        `${where}: the ${answer.status} body is JSON: ${body.slice(0, 300)}`,
      );
      for (const member of ['type', 'title', 'detail', 'instance', 'code', 'requestId']) {
        assert.equal(
          typeof problem[member],
          'string',
          `${where}: "${member}" is a string in ${body.slice(0, 500)}`,
        );
      }
      assert.equal(problem.status, answer.status, `${where}: "status" is the answer's status`);
      const code = problem.code as ErrorCode;
      assert.ok(ERROR_CODES.includes(code), `${where}: ${code} is a code of docs/errors.md`);
      assert.equal(errorStatus(code), answer.status, `${where}: ${code} comes with its own status`);
      assert.equal(
        problem.requestId,
        answer.headers['x-request-id'],
        `${where}: requestId is the x-request-id`,
      );
    }
  }
  const headers = JSON.stringify(answer.headers);
  for (const secret of secretsIn(request, ring)) {
    assert.ok(
      !body.includes(secret),
      `${where}: the body holds a key the request carried: ${body.slice(0, 500)}`,
    );
    assert.ok(!headers.includes(secret), `${where}: a header holds a key the request carried: ${headers}`);
  }
  const statuses = seen.get(request.route) ?? new Set<number>();
  seen.set(request.route, statuses.add(answer.status));
}

/**
 * What a client does next with what a write accepted: use the key it was just given, read the
 * series it just made or the prices it just wrote. Whatever a write lets in must be servable too.
 */
export function followUps(request: HostileRequest, answer: Answer, ring: KeyRing): HostileRequest[] {
  // Only a write the write route itself accepted (not a preflight's 204 on the same path).
  const writes = ROUTES.filter((route) => route.body !== 'none').map(routeName);
  if (!writes.includes(request.route) || !request.route.startsWith(`${request.method} `)) return [];
  if (answer.status !== 200 && answer.status !== 201) return [];
  const read = (url: string, key = ring.read): HostileRequest => ({
    route: `${request.route}, then GET`,
    method: 'GET',
    url,
    headers: [['x-api-key', key]],
    body: undefined,
    remoteAddress: request.remoteAddress,
  });
  const written = JSON.parse(bodyText(answer)) as { key?: unknown; symbol?: unknown };
  if (typeof written.key === 'string') {
    const urls = ['/api/v1/usage', '/api/v1/prices/today?symbols=NO1', '/api/v1/series/NO1', '/api/v1/keys'];
    return urls.map((url) => read(url, written.key as string));
  }
  if (typeof written.symbol === 'string') {
    const symbols = `symbols=${pct(written.symbol)}`;
    const urls = [`/api/v1/series/${pct(written.symbol)}`, `/api/v1/series?${symbols}&format=csv`];
    urls.push(`/api/v1/prices/today?${symbols}`, `/api/v1/prices/latest?${symbols}&tz=Asia/Kathmandu`);
    urls.push(`/api/v1/prices?from=2026-11-20&to=2026-11-24&${symbols}&resolution=PT1H&format=csv`);
    return urls.map((url) => read(url));
  }
  return [];
}
