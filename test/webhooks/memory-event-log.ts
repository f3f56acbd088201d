/** An event log in memory for the webhook tests: the `EventLog` interface, fed by `append`. */
import type { EventLog, PriceEvent, PriceEventType } from '../../src/stores/event-types.js';

export class MemoryEventLog implements EventLog {
  private readonly events: PriceEvent[] = [];
  private readonly listeners = new Set<() => void>();

  append(type: PriceEventType, symbol: string, date: string): PriceEvent {
    const seq = this.events.length + 1;
    const event: PriceEvent = {
      id: `evt_${String(seq).padStart(12, '0')}`,
      seq,
      type,
      time: new Date().toISOString(),
      data: { symbol, date, timezone: 'Europe/Oslo', intervals: 96, etag: `"${symbol}-${date}-${seq}"` },
    };
    this.events.push(event);
    for (const listener of this.listeners) listener();
    return event;
  }

  async after(after: number, limit: number): Promise<PriceEvent[]> {
    return this.events.filter((e) => e.seq > after).slice(0, limit);
  }

  async latestSeq(): Promise<number> {
    return this.events.length;
  }

  onAppended(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
