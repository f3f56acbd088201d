/**
 * IPv6 addresses of this machine for tests that need several client addresses of one /64: they are
 * added to the loopback interface with `ip` (Debian's iproute2; needs root, which CI has) in a
 * random unique-local prefix (fd00::/8, never routed), and removed again by `remove`.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface LoopbackAddresses {
  /** Two /64 prefixes, written `fdxx:xxxx:xxxx:n` (add `::host`). */
  readonly prefixes: readonly [string, string];
  /** Every address added, to be removed by `remove`. */
  readonly added: string[];
  /** Adds `prefix::host` to the loopback interface and returns it. */
  add(prefix: string, host: number): Promise<string>;
  remove(): Promise<void>;
}

/** Addresses to add, or why they cannot be added here (tried with one: `prefixes[1]::ffff`). */
export async function loopbackAddresses(): Promise<LoopbackAddresses | { skip: string }> {
  const [a = 0, b = 0, c = 0] = randomBytes(3);
  // fd + 40 random bits is a unique-local /48 (RFC 4193); two /64s of it.
  const site = `fd${a.toString(16).padStart(2, '0')}:${((b << 8) | c).toString(16)}:7e57`;
  const added: string[] = [];
  const addresses: LoopbackAddresses = {
    prefixes: [`${site}:1`, `${site}:2`],
    added,
    async add(prefix, host) {
      const address = `${prefix}::${host.toString(16)}`;
      // nodad: usable at once, without waiting for duplicate address detection.
      await run('ip', ['-6', 'addr', 'add', `${address}/64`, 'dev', 'lo', 'nodad']);
      added.push(address);
      return address;
    },
    async remove() {
      for (const address of added.splice(0)) {
        await run('ip', ['-6', 'addr', 'del', `${address}/64`, 'dev', 'lo']).catch(() => {});
      }
    },
  };
  try {
    await addresses.add(addresses.prefixes[1], 0xffff);
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'the ip command is missing' : String(error);
    return {
      skip: `cannot add IPv6 addresses to lo (${reason}; Debian: apt-get install iproute2, run as root)`,
    };
  }
  return addresses;
}
