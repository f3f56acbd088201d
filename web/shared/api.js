// @ts-check
/**
 * The pages' one way to the API: every request carries the key the page holds in memory (never in
 * storage, a cookie or the URL), and every problem+json answer becomes an `ApiProblem` whose message
 * an operator can read. See docs/console.md.
 */

/** An answer the API refused, with what it said: its code, title, detail and request id. */
export class ApiProblem extends Error {
  /**
   * @param {number} status
   * @param {{ code?: string, title?: string, detail?: string, requestId?: string, parameter?: string, errors?: unknown }} body
   */
  constructor(status, body) {
    const words = [body.title, body.detail].filter(Boolean).join(': ') || `The server answered ${status}.`;
    super(words);
    this.name = 'ApiProblem';
    this.status = status;
    this.code = body.code ?? `http_${status}`;
    this.detail = body.detail;
    this.parameter = body.parameter;
    this.requestId = body.requestId;
  }

  /** The message with the code and request id, for an operator to quote when asking for help. */
  get fullText() {
    const ref = [this.code, this.requestId && `request ${this.requestId}`].filter(Boolean).join(', ');
    return `${this.message} (${ref})`;
  }
}

/**
 * @typedef {object} Client
 * @property {(path: string, query?: Record<string, string | number | undefined>) => Promise<any>} get
 * @property {(path: string, query?: Record<string, string | number | undefined>) => Promise<{ text: string, filename: string | undefined }>} getCsv
 * @property {(path: string, body?: unknown) => Promise<any>} post
 * @property {(path: string, body?: unknown) => Promise<any>} patch
 * @property {(path: string, body?: unknown) => Promise<any>} put
 * @property {(path: string) => Promise<any>} del
 */

/**
 * A client that sends `key` as `x-api-key` to this server; without one, for the calls that need no
 * key (claiming an invitation, signing up).
 * @param {string} [key]
 * @returns {Client}
 */
export function createClient(key) {
  /**
   * @param {string} path
   * @param {Record<string, string | number | undefined>} [query]
   */
  const url = (path, query) => {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== '') params.set(name, String(value));
    }
    const text = params.toString();
    return text ? `${path}?${text}` : path;
  };

  /**
   * @param {string} method
   * @param {string} target
   * @param {unknown} [body]
   * @param {string} [accept]
   */
  const send = async (method, target, body, accept = 'application/json') => {
    /** @type {Record<string, string>} */
    const headers = key === undefined ? { accept } : { 'x-api-key': key, accept };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response;
    try {
      response = await fetch(target, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        // The key is sent by header only; nothing of it goes to another origin or into a cookie.
        credentials: 'omit',
        cache: 'no-store',
        referrerPolicy: 'no-referrer',
      });
    } catch {
      throw new ApiProblem(0, {
        code: 'network',
        title: 'The server could not be reached',
        detail: 'Check the connection and try again.',
      });
    }
    if (response.ok) return response;
    const type = response.headers.get('content-type') ?? '';
    let problem = {};
    if (type.includes('json')) problem = await response.json().catch(() => ({}));
    throw new ApiProblem(response.status, {
      requestId: response.headers.get('x-request-id') ?? undefined,
      ...problem,
    });
  };

  /** @param {Response} response */
  const json = async (response) => (response.status === 204 ? undefined : response.json());

  return {
    get: async (path, query) => json(await send('GET', url(path, query))),
    getCsv: async (path, query) => {
      const response = await send('GET', url(path, { ...query, format: 'csv' }), undefined, 'text/csv');
      const disposition = response.headers.get('content-disposition') ?? '';
      const filename = /filename="([^"]+)"/.exec(disposition)?.[1];
      return { text: await response.text(), filename };
    },
    post: async (path, body) => json(await send('POST', path, body ?? {})),
    patch: async (path, body) => json(await send('PATCH', path, body ?? {})),
    put: async (path, body) => json(await send('PUT', path, body ?? {})),
    del: async (path) => json(await send('DELETE', path)),
  };
}

/**
 * Offers `text` as a file download, made in the page (no second request, so the key is not needed
 * again and never lands in a URL).
 * @param {string} text
 * @param {string} filename
 * @param {string} [type]
 */
export function download(text, filename, type = 'text/csv') {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob([text], { type }));
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}
