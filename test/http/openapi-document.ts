/**
 * The served OpenAPI document as the tests read it: its shapes, its operations, and a validator for
 * its schemas. Shared headers and answers sit under `components` and are referenced by `$ref`;
 * `resolveShared` puts them back in place, so a test reads each operation's answers whole.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';

export interface MediaType {
  schema?: object;
}
export interface ResponseDoc {
  description: string;
  headers?: Record<string, { schema?: { type?: string; required?: unknown }; required?: boolean }>;
  content?: Record<string, MediaType>;
}
export interface ParameterDoc {
  name: string;
  in: string;
  required?: boolean;
}
export interface OperationDoc {
  operationId?: string;
  requestBody?: { content: Record<string, { schema?: { type?: string }; example?: unknown }> };
  responses: Record<string, ResponseDoc>;
  description?: string;
  parameters?: ParameterDoc[];
  security?: Record<string, string[]>[];
}
export interface OpenApiDoc {
  openapi: string;
  paths: Record<string, Record<string, OperationDoc>>;
  components?: Record<string, unknown>;
  security?: Record<string, string[]>[];
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** Every operation, named `METHOD /path`. */
export function listOperations(doc: OpenApiDoc) {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, path, method, operation })),
  );
}
export type Operation = ReturnType<typeof listOperations>[number];

/**
 * A copy of the document with every `#/components/responses/...` and `#/components/headers/...`
 * reference replaced by what it names (schemas stay references: the validator resolves them).
 */
export function resolveShared(doc: OpenApiDoc): OpenApiDoc {
  const components = (doc.components ?? {}) as Record<string, Record<string, unknown>>;
  const resolve = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(resolve);
    if (node === null || typeof node !== 'object') return node;
    const ref = (node as { $ref?: unknown }).$ref;
    const shared = typeof ref === 'string' && /^#\/components\/(responses|headers)\/([^/]+)$/.exec(ref);
    if (shared) {
      const target = components[shared[1] as string]?.[shared[2] as string];
      if (target === undefined) throw new Error(`${ref} names nothing`);
      return resolve(target);
    }
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, resolve(value)]));
  };
  return { ...doc, paths: resolve(doc.paths) as OpenApiDoc['paths'] };
}

/** Validates against a schema of the document; `#/components/...` references resolve in the document. */
export function schemaValidator(doc: OpenApiDoc) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  // ajv-formats is CommonJS: under NodeNext its default export sits on `.default`.
  ajvFormats.default(ajv);
  return (schema: object, value: unknown): string | undefined => {
    const check = ajv.compile({ components: doc.components ?? {}, allOf: [schema] });
    return check(value) ? undefined : ajv.errorsText(check.errors);
  };
}
