/**
 * Reads one pak through a file handle with positional reads. `open` checks the header, footer and
 * TOC against the file size and the footer hash before any entry is trusted; entry content is
 * checked when read (block sizes always, xxh64 on whole-entry reads and in `verify`).
 */
import fsp from 'node:fs/promises';
import { errors } from '../src/errors.js';
import { createXxh64, hashHex, initHash, xxh64 } from '../src/util/hash.js';
import { BLOCK_SIZE, decompressBlock, rawBlockSize, type BlockErrorFactory } from '../src/format/deflateBlocks.js';
import {
  PAK_FLAG_PATCH,
  PAK_FOOTER_SIZE,
  PAK_HEADER_SIZE,
  parseFooter,
  parseHeader,
  parseToc,
  type PakEntry,
  type PakHeader,
  type PakToc,
} from './pakFormat.js';
import { readAt } from '../src/util/readAt.js';

/** Blocks inflated per step when a whole entry is read or verified (bounds memory to ~4 MiB raw). */
const WINDOW_BLOCKS = 64;

/**
 * The largest entry `readEntry` holds in memory at once. Bigger ones are read in windows
 * (`readChunks`, what `pak cat` and `pak extract` use): a small pak can hold an entry of many GiB
 * (2 GiB of zeros is 2.5 MB of DEFLATE), and a whole read of it must fail cleanly, not exhaust memory.
 */
export const MAX_WHOLE_ENTRY = 1 << 30;

export interface VerifyResult {
  file: string;
  entries: number;
  rawBytes: number;
}

export class PakReader {
  private readonly byPath = new Map<string, PakEntry>();
  /** File offset of each block, per DEFLATE entry, built on first range read. */
  private readonly blockStarts = new Map<PakEntry, number[]>();

  private constructor(
    readonly file: string,
    private readonly fh: fsp.FileHandle,
    readonly size: number,
    readonly header: PakHeader,
    readonly toc: PakToc,
    /** xxh64 of the TOC bytes (checked against the footer). */
    readonly tocHash: bigint,
  ) {
    for (const e of toc.entries) this.byPath.set(e.path, e);
  }

  /** Open and validate a pak. Throws PAK_INVALID / PAK_PATH_INVALID naming field and offset. */
  static async open(file: string): Promise<PakReader> {
    await initHash();
    let fh: fsp.FileHandle;
    try {
      fh = await fsp.open(file, 'r');
    } catch (e) {
      throw errors.ioFailed(file, 'open', e);
    }
    try {
      const { size } = await fh.stat();
      const head = await readExactly(fh, 0, Math.min(PAK_HEADER_SIZE, size), file);
      const header = parseHeader(head, file, size);
      const footerAt = size - PAK_FOOTER_SIZE;
      const footerHash = parseFooter(await readExactly(fh, footerAt, PAK_FOOTER_SIZE, file), file, footerAt);
      const tocBytes = await readExactly(fh, header.tocOffset, header.tocSize, file);
      const tocHash = xxh64(tocBytes);
      if (tocHash !== footerHash) {
        throw errors.pakInvalid(file, 'footer.tocHash', `TOC hashes to ${hashHex(tocHash)}, footer says ${hashHex(footerHash)}`, footerAt);
      }
      const toc = parseToc(tocBytes, file, header, size);
      return new PakReader(file, fh, size, header, toc, tocHash);
    } catch (e) {
      await fh.close();
      throw e;
    }
  }

  get isPatch(): boolean {
    return (this.header.flags & PAK_FLAG_PATCH) !== 0;
  }

  get entries(): readonly PakEntry[] {
    return this.toc.entries;
  }

  /** The entry at `path` (relative to the mount point), tombstones included. */
  getEntry(path: string): PakEntry | undefined {
    return this.byPath.get(path);
  }

  private need(path: string): PakEntry {
    const e = this.byPath.get(path);
    if (e === undefined || e.method === 2) throw errors.pakEntryNotFound(this.file, path);
    return e;
  }

  private failFor(e: PakEntry): BlockErrorFactory {
    return (field, why, offset) => errors.pakEntryCorrupt(this.file, e.path, `${field} ${why}`, offset);
  }

  private starts(e: PakEntry): number[] {
    let s = this.blockStarts.get(e);
    if (s === undefined) {
      s = new Array(e.blockSizes.length);
      let at = e.offset;
      for (let i = 0; i < e.blockSizes.length; i++) {
        s[i] = at;
        at += e.blockSizes[i];
      }
      this.blockStarts.set(e, s);
    }
    return s;
  }

  /** Raw bytes of blocks [first, last] of a DEFLATE entry, inflated and size-checked. */
  private async inflateSpan(e: PakEntry, first: number, last: number): Promise<Uint8Array> {
    const starts = this.starts(e);
    const from = starts[first];
    const to = starts[last] + e.blockSizes[last];
    const stored = await readExactly(this.fh, from, to - from, this.file);
    const out = new Uint8Array(Math.min(e.rawSize, (last + 1) * BLOCK_SIZE) - first * BLOCK_SIZE);
    const fail = this.failFor(e);
    for (let i = first; i <= last; i++) {
      const slice = stored.subarray(starts[i] - from, starts[i] - from + e.blockSizes[i]);
      out.set(decompressBlock(slice, rawBlockSize(e.rawSize, i), fail, `block[${i}]`, starts[i]), (i - first) * BLOCK_SIZE);
    }
    return out;
  }

  /** Visit the raw bytes of an entry in windows of up to 4 MiB, in order. */
  private async forEachWindow(e: PakEntry, visit: (raw: Uint8Array) => void): Promise<void> {
    if (e.method === 0) {
      for (let at = 0; at < e.rawSize; at += WINDOW_BLOCKS * BLOCK_SIZE) {
        visit(await readExactly(this.fh, e.offset + at, Math.min(WINDOW_BLOCKS * BLOCK_SIZE, e.rawSize - at), this.file));
      }
      return;
    }
    for (let b = 0; b < e.blockSizes.length; b += WINDOW_BLOCKS) {
      visit(await this.inflateSpan(e, b, Math.min(b + WINDOW_BLOCKS, e.blockSizes.length) - 1));
    }
  }

  /**
   * The raw content of an entry in windows of up to 4 MiB, in order; after the last window the
   * xxh64 is checked and a mismatch throws PAK_ENTRY_CORRUPT, so a consumer commits what it wrote
   * only once the iteration ends without an error. Memory stays bounded whatever the entry's size.
   */
  async *readChunks(path: string): AsyncGenerator<Uint8Array, void, undefined> {
    const e = this.need(path);
    const h = createXxh64();
    if (e.method === 0) {
      for (let at = 0; at < e.rawSize; at += WINDOW_BLOCKS * BLOCK_SIZE) {
        const raw = await readExactly(this.fh, e.offset + at, Math.min(WINDOW_BLOCKS * BLOCK_SIZE, e.rawSize - at), this.file);
        h.update(raw);
        yield raw;
      }
    } else {
      for (let b = 0; b < e.blockSizes.length; b += WINDOW_BLOCKS) {
        const raw = await this.inflateSpan(e, b, Math.min(b + WINDOW_BLOCKS, e.blockSizes.length) - 1);
        h.update(raw);
        yield raw;
      }
    }
    const got = h.digest();
    if (got !== e.xxh64) throw errors.pakEntryCorrupt(this.file, e.path, `raw bytes hash to ${hashHex(got)}, TOC says ${hashHex(e.xxh64)}`, e.offset);
  }

  /** The whole raw content of an entry, with its xxh64 checked; PAK_ENTRY_TOO_LARGE above MAX_WHOLE_ENTRY. */
  async readEntry(path: string): Promise<Uint8Array> {
    const e = this.need(path);
    if (e.rawSize > MAX_WHOLE_ENTRY) throw errors.pakEntryTooLarge(this.file, e.path, e.rawSize, MAX_WHOLE_ENTRY);
    const out = new Uint8Array(e.rawSize);
    let at = 0;
    await this.forEachWindow(e, (raw) => {
      out.set(raw, at);
      at += raw.byteLength;
    });
    const got = xxh64(out);
    if (got !== e.xxh64) throw errors.pakEntryCorrupt(this.file, e.path, `raw bytes hash to ${hashHex(got)}, TOC says ${hashHex(e.xxh64)}`, e.offset);
    return out;
  }

  /**
   * `length` raw bytes from `offset` of an entry, inflating only the blocks that cover them.
   * Block sizes are checked; the entry hash is not (that needs the whole entry: use verify).
   */
  async readRange(path: string, offset: number, length: number): Promise<Uint8Array> {
    const e = this.need(path);
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0 || offset + length > e.rawSize) {
      throw errors.usage(`range ${offset}+${length} is outside "${path}" (${e.rawSize} bytes)`);
    }
    if (length > MAX_WHOLE_ENTRY) throw errors.pakEntryTooLarge(this.file, e.path, length, MAX_WHOLE_ENTRY);
    if (length === 0) return new Uint8Array(0);
    if (e.method === 0) return readExactly(this.fh, e.offset + offset, length, this.file);
    const first = Math.floor(offset / BLOCK_SIZE);
    const last = Math.floor((offset + length - 1) / BLOCK_SIZE);
    const raw = await this.inflateSpan(e, first, last);
    const from = offset - first * BLOCK_SIZE;
    return raw.subarray(from, from + length);
  }

  /** Check every entry's blocks and xxh64, in TOC order; throws PAK_ENTRY_CORRUPT for the first bad one. */
  async verify(): Promise<VerifyResult> {
    let rawBytes = 0;
    for (const e of this.toc.entries) {
      if (e.method === 2) continue;
      const h = createXxh64();
      await this.forEachWindow(e, (raw) => h.update(raw));
      const got = h.digest();
      if (got !== e.xxh64) throw errors.pakEntryCorrupt(this.file, e.path, `raw bytes hash to ${hashHex(got)}, TOC says ${hashHex(e.xxh64)}`, e.offset);
      rawBytes += e.rawSize;
    }
    return { file: this.file, entries: this.toc.entries.length, rawBytes };
  }

  async close(): Promise<void> {
    await this.fh.close();
  }
}

/** Exactly `length` bytes at `at`; a short read (file truncated under us) is PAK_INVALID. */
async function readExactly(fh: fsp.FileHandle, at: number, length: number, file: string): Promise<Uint8Array> {
  const buf = new Uint8Array(length);
  const done = await readAt(fh, buf, at);
  if (done < length) throw errors.pakInvalid(file, 'data', `needs ${length} bytes at offset ${at} but the file ends early`, at + done);
  return buf;
}

