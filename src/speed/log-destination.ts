/**
 * Where `pricepoint serve` writes its log: standard output, in batches (docs/settings.md "Logs").
 *
 * Every request writes one line. pino's asynchronous destination (sonic-boom) gathers lines into a
 * batch itself, but measures the UTF-8 length of the batch it is growing on every line it takes:
 * on a cached answer that cost more than building the line. Lines are gathered here instead, each
 * encoded once into a buffer of bytes as it comes, and a batch of about 64 KiB
 * is handed to sonic-boom (in its buffer mode) whole, which writes it at once: nothing is measured
 * or converted again (bench/README.md has what that saves against smaller batches). Lines stay whole and in their order; what
 * is gathered is handed over at least every 250 ms and at exit, so a SIGKILL loses at most the last
 * quarter of a second, as before.
 */
import { type DestinationStream, destination } from 'pino';

export interface BatchedDestination extends DestinationStream {
  write(line: string): void;
  /** Hands what is gathered to the file now; `done` once it is written. */
  flush(done?: (error?: Error) => void): void;
  /** Stops the timer and hands the rest over; later lines are handed over as they come. */
  close(): void;
}

export interface BatchOptions {
  /** File descriptor to write to (1: standard output). */
  readonly fd?: number;
  /** Bytes gathered before a batch is handed over. */
  readonly batchBytes?: number;
  /** Longest a line waits, in milliseconds. */
  readonly everyMs?: number;
}

/**
 * @example const log = batchedDestination(); Fastify({ logger: { stream: log } }); ... log.close()
 */
export function batchedDestination({
  fd = 1,
  batchBytes = 65_536,
  everyMs = 250,
}: BatchOptions = {}): BatchedDestination {
  // minLength 0: sonic-boom writes each batch as it comes (while one is being written, the next waits).
  // In its buffer mode sonic-boom takes bytes, though its types name only strings.
  const file = destination({ dest: fd, sync: false, minLength: 0, contentMode: 'buffer' }) as unknown as {
    write(bytes: Buffer): boolean;
    flush(done: (error?: Error) => void): void;
  };
  // A batch is handed over once it holds `batchBytes`. Its buffer holds twice that, so the line that
  // fills a batch mostly fits in whole; a line that does not starts the next batch (a character
  // takes at most three bytes in UTF-8, and room is made for that many).
  const capacity = batchBytes * 2;
  let batch = Buffer.allocUnsafe(capacity);
  let used = 0;
  let open = true;
  const handOver = () => {
    if (used === 0) return;
    const full = batch.subarray(0, used);
    // sonic-boom keeps the bytes until they are written: the next batch gets a buffer of its own.
    batch = Buffer.allocUnsafe(capacity);
    used = 0;
    file.write(full);
  };
  /** Makes room for `most` more bytes in the batch: `false` if a line that long never fits. */
  const room = (most: number): boolean => {
    if (used + most <= capacity) return true;
    handOver();
    return most <= capacity;
  };
  const written = () => {
    if (!open || used >= batchBytes) handOver();
  };
  const timer = setInterval(handOver, everyMs);
  timer.unref();
  // pino writes out its asynchronous destination when the process exits; what is gathered here must
  // reach it first, so this runs before pino's own exit handler.
  process.prependListener('exit', handOver);
  return {
    write(line: string): void {
      if (!room(line.length * 3)) {
        file.write(Buffer.from(line, 'utf8'));
        return;
      }
      used += batch.write(line, used);
      written();
    },
    flush(done?: (error?: Error) => void): void {
      handOver();
      if (done !== undefined) file.flush(done);
    },
    close(): void {
      open = false;
      clearInterval(timer);
      process.removeListener('exit', handOver);
      handOver();
    },
  };
}
