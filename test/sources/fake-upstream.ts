/**
 * A real HTTP server standing in for an upstream: each path answers with a fixture (or what a test
 * sets), and every request is kept so a test can read what a connector asked for. Nothing here
 * reaches the internet.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export const FIXTURES = join(import.meta.dirname, 'fixtures');

/** The bytes of `test/sources/fixtures/<name>`. */
export function fixture(name: string): Buffer {
  return readFileSync(join(FIXTURES, name));
}

export interface FakeAnswer {
  readonly status?: number;
  readonly headers?: Record<string, string>;
  readonly body?: string | Uint8Array;
  /** Never answer (to see a timeout). */
  readonly hang?: boolean;
}

export class FakeUpstream {
  readonly requests: URL[] = [];
  private readonly answers = new Map<string, FakeAnswer | ((url: URL) => FakeAnswer)>();
  private server: Server | undefined;
  private origin = '';

  /**
   * Answers `path` with `answer` from now on; a path with a query string answers that query only,
   * and a function answers each request by its URL (an upstream asked once per day, as Nord Pool's,
   * answers each day with its own document).
   */
  answer(path: string, answer: FakeAnswer | ((url: URL) => FakeAnswer)): this {
    this.answers.set(path, answer);
    return this;
  }

  /** `http://127.0.0.1:PORT` followed by `path`. */
  url(path = '/'): string {
    return `${this.origin}${path}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', this.origin);
      this.requests.push(url);
      const answerOf = this.answers.get(`${url.pathname}${url.search}`) ?? this.answers.get(url.pathname);
      const answer = typeof answerOf === 'function' ? answerOf(url) : answerOf;
      if (answer === undefined) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end(`no fixture for ${url.pathname}`);
        return;
      }
      if (answer.hang) return;
      res.writeHead(answer.status ?? 200, answer.headers ?? {}).end(answer.body ?? '');
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

/** Points as `[ISO start, price]` pairs, easy to compare and to read in a failing assertion. */
export function pairs(points: readonly { start: number; price: string }[]): [string, string][] {
  return points.map((p) => [new Date(p.start).toISOString(), p.price]);
}
