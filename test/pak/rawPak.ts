/**
 * Builds paks byte by byte for tests that need what writePak never writes: entries of many GiB
 * (the same DEFLATE block repeated, so 2 GiB of zeros is a few MB on disk), junk after a DEFLATE
 * stream, or block sizes a TOC should not claim. The layout is FORMAT.md's "Pak" through the same
 * encoders the writer uses.
 */
import fsp from 'node:fs/promises';
import zlib from 'node:zlib';
import { BLOCK_SIZE, blockCountFor, rawBlockSize } from '../../src/format/deflateBlocks.js';
import { createXxh64 } from '../../src/util/hash.js';
import { PAK_HEADER_SIZE, encodeFooter, encodeHeader, encodeToc, type PakEntry } from '../../pak/pakFormat.js';
import { xxh64 } from '../../src/util/hash.js';

export interface RawEntry {
  path: string;
  rawSize: number;
  /** Stored bytes of block i (method 1). */
  block: (i: number) => Uint8Array;
  /** Raw bytes of block i, for the entry hash. */
  raw: (i: number) => Uint8Array;
}

/** An entry of `rawSize` zero bytes in DEFLATE blocks: two distinct blocks at most, reused. */
export function zerosEntry(path: string, rawSize: number): RawEntry {
  const full = new Uint8Array(BLOCK_SIZE);
  const fullStored = new Uint8Array(zlib.deflateRawSync(full));
  const last = rawBlockSize(rawSize, blockCountFor(rawSize) - 1);
  const lastRaw = full.subarray(0, last);
  const lastStored = new Uint8Array(zlib.deflateRawSync(lastRaw));
  const n = blockCountFor(rawSize);
  return {
    path,
    rawSize,
    block: (i) => (i === n - 1 ? lastStored : fullStored),
    raw: (i) => (i === n - 1 ? lastRaw : full),
  };
}

/** Write a pak of method-1 entries (sorted by the caller). Requires initHash(). */
export async function writeRawPak(file: string, entries: readonly RawEntry[]): Promise<void> {
  const fh = await fsp.open(file, 'w');
  try {
    let at = PAK_HEADER_SIZE;
    const write = async (b: Uint8Array) => {
      await fh.write(b, 0, b.byteLength, at);
      at += b.byteLength;
    };
    const toc: PakEntry[] = [];
    for (const e of entries) {
      const offset = at;
      const h = createXxh64();
      const blockSizes: number[] = [];
      const count = blockCountFor(e.rawSize);
      for (let i = 0; i < count; i++) {
        const b = e.block(i);
        await write(b);
        blockSizes.push(b.byteLength);
        h.update(e.raw(i));
      }
      toc.push({ path: e.path, offset, storedSize: at - offset, rawSize: e.rawSize, xxh64: h.digest(), method: 1, blockSize: BLOCK_SIZE, blockSizes });
    }
    const tocBytes = encodeToc({ mountPoint: '/', priority: 0, baseTocHash: 0n, entries: toc });
    const tocOffset = at;
    await write(tocBytes);
    await write(encodeFooter(xxh64(tocBytes)));
    await fh.write(encodeHeader({ entryCount: toc.length, flags: 0, tocOffset, tocSize: tocBytes.byteLength }), 0, PAK_HEADER_SIZE, 0);
  } finally {
    await fh.close();
  }
}
