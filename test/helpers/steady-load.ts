/**
 * Steady streams of requests against a real server, every answer kept with when it was sent and
 * came back, for tests that break a store under load and then check each answer by when it was
 * sent. Each request has a deadline of its own: a server that never answers shows up as status 0
 * ("no answer"), never as a test that hangs.
 *
 * @example
 * const client = timedClient(certFile, 10_000);
 * const stream = steadyLoad(() => client.get(`${url}/api/v1/prices/today`, { 'x-api-key': key }), 3);
 * await untilSamples(stream, 20, 0, 'answers before the fault');
 * const samples = await stream.stop();
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';

/** One answer of a stream: when it was sent and came back (monotonic ms), its status and body. */
export interface Sample {
  readonly startedAt: number;
  readonly endedAt: number;
  /** 0 when no HTTP answer came (the connection failed or the deadline passed). */
  readonly status: number;
  readonly code: string | undefined;
  readonly text: string;
}

export interface TimedAnswer {
  readonly status: number;
  readonly text: string;
}

/** How long an answer took, ms. */
export const latency = (s: Sample): number => s.endedAt - s.startedAt;

/** The problem code of an error answer, if it has one. */
export function problemCode(answer: TimedAnswer): string | undefined {
  if (answer.status < 400) return undefined;
  try {
    return (JSON.parse(answer.text) as { code?: string }).code;
  } catch {
    return undefined;
  }
}

/**
 * An HTTPS client trusting exactly `certFile` (for `localhost`) whose every request is abandoned
 * after `deadlineMs`; close it with `close()`.
 */
export function timedClient(certFile: string, deadlineMs: number) {
  const agent = new Agent({ connect: { ca: readFileSync(certFile), servername: 'localhost' } });
  return {
    async get(url: string, headers: Record<string, string> = {}): Promise<TimedAnswer> {
      const response = await request(url, {
        method: 'GET',
        headers,
        dispatcher: agent,
        signal: AbortSignal.timeout(deadlineMs),
      });
      return { status: response.statusCode, text: await response.body.text() };
    },
    close: () => agent.destroy(),
  };
}

/** `requesters` loops, each sending one request after the other until `stop()`. */
export function steadyLoad(send: () => Promise<TimedAnswer>, requesters: number) {
  const samples: Sample[] = [];
  let running = true;
  const loops = Array.from({ length: requesters }, async () => {
    while (running) {
      const startedAt = performance.now();
      try {
        const answer = await send();
        const endedAt = performance.now();
        samples.push({
          startedAt,
          endedAt,
          status: answer.status,
          code: problemCode(answer),
          text: answer.text,
        });
      } catch (error) {
        samples.push({
          startedAt,
          endedAt: performance.now(),
          status: 0,
          code: undefined,
          text: String(error),
        });
      }
      await sleep(1);
    }
  });
  return {
    samples,
    /** Samples sent at `from` or later, and before `to` when given. */
    sentBetween(from: number, to = Number.POSITIVE_INFINITY): Sample[] {
      return samples.filter((s) => s.startedAt >= from && s.startedAt < to);
    },
    /** Samples sent at `from` or later and answered by `to`: none was still waiting at `to`. */
    answeredWithin(from: number, to: number): Sample[] {
      return samples.filter((s) => s.startedAt >= from && s.endedAt <= to);
    },
    async stop(): Promise<Sample[]> {
      running = false;
      await Promise.all(loops);
      return samples;
    },
  };
}
export type Stream = ReturnType<typeof steadyLoad>;

/** Waits (bounded) until `stream` holds `count` samples sent at `from` or later. */
export async function untilSamples(stream: Stream, count: number, from: number, what: string): Promise<void> {
  for (let attempt = 0; attempt < 3000; attempt++) {
    if (stream.sentBetween(from).length >= count) return;
    await sleep(10);
  }
  assert.fail(`${what}: only ${stream.sentBetween(from).length} of ${count} answers came`);
}

/** Statuses and codes (of samples or of single answers), counted: `{ "200": 12, "503 service_unavailable": 3 }`. */
export function tally(samples: readonly Pick<Sample, 'status' | 'code'>[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const s of samples) {
    const name = s.code === undefined ? String(s.status) : `${s.status} ${s.code}`;
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}

/** The slowest answer, ms (0 for none). */
export function slowest(samples: readonly Sample[]): number {
  return samples.reduce((most, s) => Math.max(most, latency(s)), 0);
}
