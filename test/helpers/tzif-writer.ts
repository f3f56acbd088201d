/**
 * Writes small TZif files (RFC 8536) for the reader's unit tests: a version 1 file (32-bit block
 * only) or a version 2 to 4 file (both blocks and a footer), with the transitions and local time
 * types a test names. Abbreviations are all "ZZZ": the reader does not use them.
 */

export interface TzifSpec {
  readonly version: 1 | 2 | 3 | 4;
  /** Transition instants, epoch seconds, ascending. */
  readonly transitions?: readonly number[];
  /** For each transition, the index of its local time type. */
  readonly typeOf?: readonly number[];
  /** Offsets (seconds east of UTC) of the local time types; type 0 also rules before the first transition. */
  readonly offsets: readonly number[];
  /** The POSIX TZ string of the footer (versions 2 to 4). */
  readonly footer?: string;
}

function block(spec: TzifSpec, timeBytes: 4 | 8): Buffer {
  const transitions = spec.transitions ?? [];
  const typeOf = spec.typeOf ?? [];
  const chars = Buffer.from('ZZZ\0', 'latin1');
  const header = Buffer.alloc(44);
  header.write('TZif', 0, 'latin1');
  header.writeUInt8(spec.version === 1 ? 0 : 0x30 + spec.version, 4);
  const counts = [0, 0, 0, transitions.length, spec.offsets.length, chars.length];
  for (const [i, count] of counts.entries()) header.writeUInt32BE(count, 20 + i * 4);
  const times = Buffer.alloc(transitions.length * timeBytes);
  transitions.forEach((t, i) => {
    if (timeBytes === 8) times.writeBigInt64BE(BigInt(t), i * 8);
    else times.writeInt32BE(t, i * 4);
  });
  const types = Buffer.alloc(spec.offsets.length * 6);
  spec.offsets.forEach((offset, i) => {
    types.writeInt32BE(offset, i * 6);
    types.writeUInt8(0, i * 6 + 4);
    types.writeUInt8(0, i * 6 + 5);
  });
  return Buffer.concat([header, times, Buffer.from(typeOf), types, chars]);
}

/** The bytes of a TZif file as `spec` describes it. */
export function tzifBytes(spec: TzifSpec): Buffer {
  if (spec.version === 1) return block(spec, 4);
  // The 32-bit block holds what fits in 32 bits; the reader skips it, so it is kept to the same data.
  const small = {
    ...spec,
    transitions: (spec.transitions ?? []).filter((t) => t >= -(2 ** 31) && t < 2 ** 31),
  };
  const typeOf = (spec.transitions ?? []).flatMap((t, i) =>
    t >= -(2 ** 31) && t < 2 ** 31 ? [spec.typeOf?.[i] ?? 0] : [],
  );
  return Buffer.concat([
    block({ ...small, typeOf }, 4),
    block(spec, 8),
    Buffer.from(`\n${spec.footer ?? ''}\n`, 'latin1'),
  ]);
}
