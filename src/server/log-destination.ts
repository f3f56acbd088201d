/**
 * Where `pricepoint serve` writes its log: standard output, in batches (README "Logs").
 *
 * Every request writes one line. pino's asynchronous destination (sonic-boom) gathers lines into a
 * batch itself, but measures the UTF-8 length of the batch it is growing on every line it takes:
 * on a cached answer that cost more than building the line. Lines are gathered here instead, each
 * encoded once into a buffer of bytes as it comes (a request line known to be ASCII is copied as
 * it is: request-log.ts), and a batch of about 64 Ki characters is handed to sonic-boom (in its
 * buffer mode) whole, which writes it at once: nothing is measured or converted again (against
 * 8 KiB batches, a server under load used about 3% less CPU per request and was preempted less
 * often: bench/README.md). Lines stay whole and in their order; what is gathered is handed over at
 * least every 250 ms and at exit, so a SIGKILL loses at most the last quarter of a second, as before.
 */
import { type DestinationStream, destination } from 'pino';

export interface BatchedDestination extends DestinationStream {
  write(line: string): void;
  /** The same for a line of ASCII only, copied as it is: no UTF-8 encoding to work out. */
  writeAscii(line: string): void;
  /** Hands what is gathered to the file now; `done` once it is written. */
  flush(done?: (error?: Error) => void): void;
  /** Stops the timer and hands the rest over; later lines are handed over as they come. */
  close(): void;
}

export interface BatchOptions {
  /** File descriptor to write to (1: standard output). */
  readonly fd?: number;
  /** Characters gathered before a batch is handed over. */
  readonly batchChars?: number;
  /** Longest a line waits, in milliseconds. */
  readonly everyMs?: number;
}

/**
 * @example const log = batchedDestination(); Fastify({ logger: { stream: log } }); ... log.close()
 */
export function batchedDestination({
  fd = 1,
  batchChars = 65_536,
  everyMs = 250,
}: BatchOptions = {}): BatchedDestination {
  // minLength 0: sonic-boom writes each batch as it comes (while one is being written, the next waits).
  // In its buffer mode sonic-boom takes bytes, though its types name only strings.
  const file = destination({ dest: fd, sync: false, minLength: 0, contentMode: 'buffer' }) as unknown as {
    write(bytes: Buffer): boolean;
    flush(done: (error?: Error) => void): void;
  };
  // A character takes at most three bytes in UTF-8 (a surrogate pair four, for two characters), so
  // a batch of `batchChars` characters fits in three times as many bytes.
  const capacity = batchChars * 3;
  let batch = Buffer.allocUnsafe(capacity);
  let used = 0;
  let chars = 0;
  let open = true;
  const handOver = () => {
    if (used === 0) return;
    const full = batch.subarray(0, used);
    // sonic-boom keeps the bytes until they are written: the next batch gets a buffer of its own.
    batch = Buffer.allocUnsafe(capacity);
    used = 0;
    chars = 0;
    file.write(full);
  };
  /** Adds `line` to the batch in `encoding`, which takes at most `bytesPerChar` bytes a character. */
  const put = (line: string, bytesPerChar: number, encoding: 'utf8' | 'latin1') => {
    const most = line.length * bytesPerChar;
    if (used + most > capacity) {
      handOver();
      if (most > capacity) {
        file.write(Buffer.from(line, encoding));
        return;
      }
    }
    used += batch.write(line, used, encoding);
    chars += line.length;
    if (!open || chars >= batchChars) handOver();
  };
  const timer = setInterval(handOver, everyMs);
  timer.unref();
  // pino writes out its asynchronous destination when the process exits; what is gathered here must
  // reach it first, so this runs before pino's own exit handler.
  process.prependListener('exit', handOver);
  return {
    write(line: string): void {
      put(line, 3, 'utf8');
    },
    writeAscii(line: string): void {
      put(line, 1, 'latin1');
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
