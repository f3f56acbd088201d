/**
 * Rewrites the document @fastify/swagger generates so that what many operations share is described
 * once, under `components`, and referenced by `$ref` (docs/api.md): response headers (each route
 * schema names its header's component, see schemas.ts) and problem+json answers. The route schemas
 * keep their full objects, because they also serialise answers; only the published document is
 * shortened. A generated client gets the same types either way, a reader a short operation.
 */

type Json = Record<string, unknown>;

interface HeaderObject {
  schema?: Json & { required?: unknown; component?: unknown };
  required?: boolean;
  description?: string;
}
interface ResponseObject {
  description?: string;
  headers?: Record<string, HeaderObject | { $ref: string }>;
  content?: Record<string, unknown>;
}
interface Components {
  headers?: Record<string, unknown>;
  responses?: Record<string, unknown>;
}
interface Document {
  paths?: Record<string, Record<string, { responses?: Record<string, ResponseObject | { $ref: string }> }>>;
  components?: Components;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']);

/** The name of each problem status under `components/responses`, as in RFC 9110. */
const STATUS_NAMES: Record<string, string> = {
  '400': 'BadRequest',
  '401': 'Unauthorized',
  '403': 'Forbidden',
  '404': 'NotFound',
  '405': 'MethodNotAllowed',
  '406': 'NotAcceptable',
  '408': 'RequestTimeout',
  '410': 'Gone',
  '413': 'ContentTooLarge',
  '415': 'UnsupportedMediaType',
  '422': 'UnprocessableContent',
  '429': 'TooManyRequests',
  '431': 'RequestHeaderFieldsTooLarge',
  '500': 'InternalServerError',
  '503': 'ServiceUnavailable',
};

/**
 * What Node's HTTP parser refuses before any route is chosen (a malformed request line or header),
 * answered by `clientErrorAnswer` in problem.ts on every path. Documented on operations that have
 * no other 4xx answer, which would otherwise suggest they cannot fail on the client's side.
 */
const MALFORMED_REQUEST = {
  description:
    'The request could not be read as HTTP (a malformed request line or header): answered before any route is chosen, then the connection is closed.',
  headers: { 'x-request-id': { $ref: '#/components/headers/XRequestId' } },
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
};

function operationsOf(document: Document) {
  return Object.values(document.paths ?? {}).flatMap((item) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([, operation]) => operation),
  );
}

/** Adds `value` under `name`, or checks that what is there is the same: one name, one meaning. */
function share(table: Record<string, unknown>, name: string, value: unknown, kind: string): void {
  const existing = table[name];
  if (existing === undefined) {
    table[name] = value;
  } else if (JSON.stringify(existing) !== JSON.stringify(value)) {
    throw new Error(
      `OpenAPI: two different ${kind} are both named ${name}; give one another name in schemas.ts`,
    );
  }
}

/**
 * Moves every named response header into `components/headers`. @fastify/swagger copies the whole
 * definition into the Header Object's `schema`, where `required` and `component` are no JSON
 * Schema: `required` goes onto the Header Object, where OpenAPI reads it ("every answer of this
 * status carries this header"), and `component` becomes the name.
 */
function shareHeaders(document: Document, components: Components): void {
  components.headers ??= {};
  const table = components.headers;
  for (const operation of operationsOf(document)) {
    for (const response of Object.values(operation.responses ?? {})) {
      if ('$ref' in response) continue;
      for (const [name, headerObject] of Object.entries(response.headers ?? {})) {
        if ('$ref' in headerObject) continue;
        const { schema } = headerObject;
        if (typeof schema?.required === 'boolean') {
          if (schema.required) headerObject.required = true;
          delete schema.required;
        }
        const component = schema?.component;
        if (typeof component !== 'string') continue;
        delete schema?.component;
        share(table, component, headerObject, 'headers');
        (response.headers as Record<string, unknown>)[name] = { $ref: `#/components/headers/${component}` };
      }
    }
  }
}

const refersTo = (headers: ResponseObject['headers'], prefix: string) =>
  Object.values(headers ?? {}).some(
    (h) => '$ref' in h && h.$ref.startsWith(`#/components/headers/${prefix}`),
  );

/**
 * The name of a problem answer: its status, and `Uncounted` when the request is answered before
 * it is counted against a limit (open operations, `/usage`), so it carries no rate-limit headers.
 * 401 and 405 come before counting on every operation, so they have one form only.
 */
function problemName(status: string, response: ResponseObject): string | undefined {
  const base = STATUS_NAMES[status];
  if (base === undefined) return undefined;
  if (status === '401' || status === '405' || refersTo(response.headers, 'RateLimit')) return base;
  return `${base}Uncounted`;
}

function shareProblems(document: Document, components: Components): void {
  components.responses ??= {};
  const table = components.responses;
  for (const operation of operationsOf(document)) {
    const responses = operation.responses ?? {};
    for (const [status, response] of Object.entries(responses)) {
      if ('$ref' in response || response.content?.['application/problem+json'] === undefined) continue;
      const name = problemName(status, response);
      if (name === undefined) continue;
      share(table, name, response, 'responses');
      responses[status] = { $ref: `#/components/responses/${name}` };
    }
    if (!Object.keys(responses).some((status) => status.startsWith('4'))) {
      table.MalformedRequest ??= MALFORMED_REQUEST;
      responses['400'] = { $ref: '#/components/responses/MalformedRequest' };
    }
  }
}

/** Shares headers and problem answers through `components`; returns the same document. */
export function shareComponents<T>(document: T): T {
  const doc = document as Document;
  doc.components ??= {};
  const components = doc.components;
  shareHeaders(doc, components);
  shareProblems(doc, components);
  return document;
}
