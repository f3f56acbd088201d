/**
 * One reader of the event log per app for all its streams: when the log says events were appended,
 * the hub reads them once and hands each page to every stream, instead of every open stream
 * querying the database for the same rows (thousands of streams, one query per new page).
 */
import type { EventLog, PriceEvent } from '../stores/event-types.js';

/** Events read per query. */
const PAGE = 500;

export class EventHub {
  private readonly streams = new Set<(events: readonly PriceEvent[]) => void>();
  private cursor: Promise<number> | undefined;
  /**
   * The seq of the last event handed to the streams (or the newest when the hub began listening):
   * a stream that has passed every event up to it misses nothing by taking the hub's next pages.
   */
  position = 0;
  private unsubscribe: (() => void) | undefined;
  private reading = false;
  private again = false;

  constructor(
    private readonly log: EventLog,
    private readonly onError: (error: unknown) => void,
  ) {}

  /**
   * Hands `receive` every page of events committed from now on, in order; resolves once the hub's
   * cursor is set. A stream that reads its own catch-up from the log takes the hub's pages once it
   * has passed `position` (it skips what it receives twice by `seq`), so it misses nothing between
   * the two.
   */
  async subscribe(receive: (events: readonly PriceEvent[]) => void): Promise<() => void> {
    this.streams.add(receive);
    if (this.unsubscribe === undefined) {
      const start = this.log.latestSeq();
      this.cursor = start;
      // Registered before the caller's own wait below, so the position is set when it resumes.
      start.then(
        (seq) => {
          if (this.cursor === start) this.position = seq;
        },
        () => {},
      );
      this.unsubscribe = this.log.onAppended(() => void this.read());
    }
    try {
      await this.cursor;
    } catch (error) {
      this.leave(receive);
      throw error;
    }
    return () => this.leave(receive);
  }

  private leave(receive: (events: readonly PriceEvent[]) => void): void {
    this.streams.delete(receive);
    if (this.streams.size > 0 || this.unsubscribe === undefined) return;
    this.unsubscribe();
    this.unsubscribe = undefined;
    this.cursor = undefined;
  }

  private async read(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    try {
      do {
        this.again = false;
        for (;;) {
          const cursor = this.cursor;
          if (cursor === undefined) return;
          const page = await this.log.after(await cursor, PAGE);
          const last = page.at(-1);
          if (last === undefined || this.cursor !== cursor) break;
          this.cursor = Promise.resolve(last.seq);
          this.position = last.seq;
          for (const receive of [...this.streams]) receive(page);
          if (page.length < PAGE) break;
        }
      } while (this.again);
    } catch (error) {
      // The log is away for a moment: the next notice reads from the same cursor.
      this.onError(error);
    } finally {
      this.reading = false;
    }
  }
}
