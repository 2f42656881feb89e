/**
 * The framing of the cook's small binary side files (the pak seal, the splice record, the cooked
 * registry's hashes): u32 magic, u32 version, the file's own fields, then the xxh64 (seed 0) of
 * everything before it. They are caches: a file that does not check out is none, never an error.
 * Requires `initHash()`.
 */
import { xxh64 } from './hash.js';

/** Room for a side file of `bodySize` bytes (magic and version included) plus its xxh64, magic and version written. */
export function newCheckedFile(magic: number, version: number, bodySize: number): Buffer {
  const out = Buffer.alloc(bodySize + 8);
  out.writeUInt32LE(magic, 0);
  out.writeUInt32LE(version, 4);
  return out;
}

/** Write the xxh64 of everything before the last 8 bytes into them; returns `out`. */
export function sealCheckedFile(out: Buffer): Buffer {
  out.writeBigUInt64LE(xxh64(out.subarray(0, out.byteLength - 8)), out.byteLength - 8);
  return out;
}

/**
 * `bytes` as a Buffer when they are a side file of this magic and version, at least `header`
 * bytes before the xxh64, of the length `lengthOf` reads from its header, and ending in the
 * xxh64 of the rest; else undefined.
 */
export function openCheckedFile(bytes: Uint8Array, magic: number, version: number, header: number, lengthOf: (b: Buffer) => number): Buffer | undefined {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.byteLength < header + 8 || b.readUInt32LE(0) !== magic || b.readUInt32LE(4) !== version) return undefined;
  if (lengthOf(b) !== b.byteLength) return undefined;
  if (xxh64(b.subarray(0, b.byteLength - 8)) !== b.readBigUInt64LE(b.byteLength - 8)) return undefined;
  return b;
}
