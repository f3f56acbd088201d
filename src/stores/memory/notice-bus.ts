/** Notices within one process: the embedded default, where there are no other instances to tell. */
import type { Notice, NoticeBus } from '../types.js';

export class MemoryNoticeBus implements NoticeBus {
  private readonly listeners: ((notice: Notice) => void)[] = [];

  async publish(notice: Notice): Promise<void> {
    for (const listener of this.listeners) listener(notice);
  }

  subscribe(listener: (notice: Notice) => void): void {
    this.listeners.push(listener);
  }
}
