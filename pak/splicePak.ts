/**
 * A pak rebuilt by splicing the one it replaces: when the new pak has the same paths as the
 * previous one (same order, same TOC indexes) and the previous pak's seal (writePak.ts PakSeal)
 * vouches for every entry but a few, the new pak is the previous one with those entries' stored
 * bytes replaced, every later entry's offset moved by the size difference, the TOC hash, header
 * and footer written again. That is exactly what writePak writes from the same sources: its
 * entries are laid out contiguously in TOC order, and an entry it copies keeps its stored bytes
 * and TOC fields but its offset. writePak's rebuild of a 10k-entry pak parsed the whole previous
 * TOC into objects, sorted and validated every path, looked each up and encoded the TOC again
 * (~0.1-0.2 s of a one-file change at 20k); a splice walks the old TOC's bytes once.
 *
 * Nothing is copied on trust alone: the previous pak's header, footer and TOC must be the seal's
 * (TOC hash), its entries contiguous, and every byte of its data is hashed as it is copied and
 * must match the seal's data hash; else the splice gives up (undefined) and the caller writes the
 * pak the usual way, which checks entry by entry. The new pak is written to a temp file
 * (stageAtomicFile) that the caller commits (commitStaged, with the listing written beside it: their
 * fsyncs at once, one fsync of the folder) or discards, and comes with its own seal.
 */
import fs from 'node:fs';
import { stageAtomicFile, writeFully, type StagedFile } from '../src/util/atomicWrite.js';
import { createXxh64, xxh64 } from '../src/util/hash.js';
import { BLOCK_SIZE, compressBlocks, totalLength, type CompressOptions } from '../src/format/deflateBlocks.js';
import { PAK_FOOTER_SIZE, PAK_HEADER_SIZE, PAK_MAGIC, PAK_VERSION, encodeFooter, encodeHeader, encodeToc, type PakEntry } from './pakFormat.js';
import { cookedEntry, loadCooked, type PakSeal, type PakSource } from './writePak.js';

/** What the caller says of its sources, in its own order (source i is TOC entry order[i] of the previous pak, same path). */
export interface SpliceSources {
  /** The previous pak's TOC index of each source. */
  order: Uint32Array;
  /**
   * Whether source i gives what TOC entry k holds: its cooked file hashes to the seal's hash for
   * k (`cookedHi`/`cookedLo`, the u64's halves; 0 when the writer compressed the entry itself), or
   * its raw bytes hash to the entry's xxh64 (`rawHi`/`rawLo`) and the pak compressed them as this
   * one would. Asked of every source: keep it cheap.
   */
  unchanged(i: number, cookedHi: number, cookedLo: number, rawHi: number, rawLo: number): boolean;
  /** Source i in full: asked only of the changed ones. Its path must be entry order[i]'s. */
  source(i: number): PakSource;
}

export interface SpliceResult {
  tocHash: bigint;
  size: number;
  entryCount: number;
  /** The new entries of the changed sources, by TOC index (ascending). */
  changed: Array<{ index: number; entry: PakEntry }>;
  /** Cooked entries and entries the pak compressed itself that were copied. */
  reused: number;
  reusedCompressed: number;
  seal: PakSeal;
  /** The new pak, written to its temp file: the caller commits it (commitStaged) or discards it (discardStaged). */
  staged: StagedFile;
}

/** Bytes read from the previous pak per step. */
const WINDOW = 4 << 20;
/** Small files (text assets) are compressed whole; a bigger changed file sends the caller the usual way. */
const SMALL_FILE = 64 * BLOCK_SIZE;

/** The previous pak's data does not hash to its seal (damaged since): the splice is abandoned. */
const BROKEN = new Error('the previous pak does not match its seal');

/** Where each entry's record sits in a TOC's bytes, and its fields a splice needs. */
interface TocWalk {
  /** Bytes before the first entry (mount point, priority, base hash). */
  prefix: number;
  /** Per entry: record start (n + 1 values: the last is the TOC's end). */
  starts: Uint32Array;
  /** Per entry: the offset field's position within the TOC. */
  offsetAt: Uint32Array;
  /** Per entry: stored size. */
  stored: Float64Array;
}

/**
 * Walk a TOC's bytes written by writePak: every entry contiguous from the header on, 64 KiB blocks,
 * stored or DEFLATE (no tombstone). Undefined when it is not so.
 */
function walkToc(toc: Uint8Array, count: number, dataEnd: number): TocWalk | undefined {
  const v = new DataView(toc.buffer, toc.byteOffset, toc.byteLength);
  const end = toc.byteLength;
  if (end < 16) return undefined;
  let p = 4 + v.getUint32(0, true) + 12;
  const prefix = p;
  const starts = new Uint32Array(count + 1);
  const offsetAt = new Uint32Array(count);
  const stored = new Float64Array(count);
  let at = PAK_HEADER_SIZE;
  for (let k = 0; k < count; k++) {
    if (p + 4 > end) return undefined;
    starts[k] = p;
    p += 4 + v.getUint32(p, true);
    if (p + 37 > end) return undefined;
    offsetAt[k] = p;
    const offset = v.getUint32(p, true) + v.getUint32(p + 4, true) * 2 ** 32;
    const size = v.getUint32(p + 8, true) + v.getUint32(p + 12, true) * 2 ** 32;
    const method = toc[p + 32];
    if (offset !== at || v.getUint32(p + 33, true) !== BLOCK_SIZE || method > 1) return undefined;
    p += 37;
    if (method === 1) {
      if (p + 4 > end) return undefined;
      p += 4 + 4 * v.getUint32(p, true);
    }
    stored[k] = size;
    at += size;
  }
  if (p !== end || at !== dataEnd) return undefined;
  starts[count] = p;
  return { prefix, starts, offsetAt, stored };
}

/** A changed source's entry (offset to be set) and stored bytes, as writePak makes them; undefined when it would stream (too big to hold). */
async function entryOf(s: PakSource, compress: CompressOptions): Promise<{ entry: PakEntry; data: Uint8Array[]; cooked: bigint } | undefined> {
  if (s.kind === 'cooked') {
    const loaded = await loadCooked(s, undefined, { reused: 0, previousDamaged: 0, reusedCompressed: 0 });
    if (!loaded) return undefined;
    return { entry: cookedEntry(s.path, 0, loaded.header), data: [loaded.bytes.subarray(loaded.header.dataOffset)], cooked: s.cookedXxh64 ?? 0n };
  }
  if (s.kind === 'tombstone') return undefined;
  let raw: Uint8Array;
  if (s.kind === 'bytes') raw = s.data;
  else {
    if (fs.statSync(s.file).size > SMALL_FILE) return undefined;
    raw = fs.readFileSync(s.file);
    if (raw.byteLength > SMALL_FILE) return undefined;
  }
  const { method, blocks } = await compressBlocks(raw, compress);
  const entry: PakEntry = {
    path: s.path,
    offset: 0,
    storedSize: totalLength(blocks),
    rawSize: raw.byteLength,
    xxh64: xxh64(raw),
    method,
    blockSize: BLOCK_SIZE,
    blockSizes: method === 1 ? blocks.map((b) => b.byteLength) : [],
  };
  return { entry, data: blocks, cooked: 0n };
}

/**
 * Write `out` as the splice of `previous` (see the module comment), or resolve undefined when the
 * previous pak is not what `seal` describes, or a changed source is one a splice does not take
 * (then nothing was written). Throws what reading a changed source throws (COOKED_INVALID, IO).
 */
export async function splicePak(out: string, previous: string, seal: PakSeal, sources: SpliceSources, compress: CompressOptions): Promise<SpliceResult | undefined> {
  let fd: number;
  try {
    fd = fs.openSync(previous, 'r');
  } catch {
    return undefined;
  }
  try {
    const size = fs.fstatSync(fd).size;
    const head = Buffer.alloc(PAK_HEADER_SIZE);
    if (fs.readSync(fd, head, 0, PAK_HEADER_SIZE, 0) !== PAK_HEADER_SIZE) return undefined;
    const count = seal.cooked.length;
    const tocOffset = Number(head.readBigUInt64LE(16));
    const tocSize = Number(head.readBigUInt64LE(24));
    if (head.readUInt32LE(0) !== PAK_MAGIC || head.readUInt32LE(4) !== PAK_VERSION || head.readUInt32LE(8) !== count || head.readUInt32LE(12) !== 0) return undefined;
    if (tocOffset !== seal.dataEnd || tocOffset + tocSize + PAK_FOOTER_SIZE !== size) return undefined;
    const tail = Buffer.alloc(tocSize + PAK_FOOTER_SIZE);
    if (fs.readSync(fd, tail, 0, tail.byteLength, tocOffset) !== tail.byteLength) return undefined;
    const toc = tail.subarray(0, tocSize);
    if (tail.readBigUInt64LE(tocSize) !== seal.tocHash || tail.readUInt32LE(tocSize + 8) !== PAK_MAGIC || xxh64(toc) !== seal.tocHash) return undefined;
    const walk = walkToc(toc, count, tocOffset);
    if (!walk || sources.order.length !== count) return undefined;

    // Which sources changed: the seal's cooked hashes and the TOC's raw hashes, as u32 halves.
    const sealWords = new Uint32Array(seal.cooked.buffer, seal.cooked.byteOffset, 2 * count);
    const tv = new DataView(toc.buffer, toc.byteOffset, toc.byteLength);
    const changedAt: number[] = [];
    const sourceOf = new Map<number, number>();
    let reused = 0;
    let reusedCompressed = 0;
    const seen = new Uint8Array(count);
    for (let i = 0; i < count; i++) {
      const k = sources.order[i];
      if (k >= count || seen[k]) return undefined;
      seen[k] = 1;
      const rawAt = walk.offsetAt[k] + 24;
      const cookedLo = sealWords[2 * k];
      const cookedHi = sealWords[2 * k + 1];
      if (sources.unchanged(i, cookedHi, cookedLo, tv.getUint32(rawAt + 4, true), tv.getUint32(rawAt, true))) {
        if (cookedLo !== 0 || cookedHi !== 0) reused++;
        else reusedCompressed++;
      } else {
        changedAt.push(k);
        sourceOf.set(k, i);
      }
    }
    changedAt.sort((a, b) => a - b);
    // The changed entries, made as writePak makes them.
    const made: Array<{ index: number; entry: PakEntry; data: Uint8Array[]; cooked: bigint; record: Uint8Array }> = [];
    const prefixToc = toc.subarray(0, walk.prefix);
    for (const k of changedAt) {
      const s = sources.source(sourceOf.get(k)!);
      const pathAt = walk.starts[k];
      const pathLen = tv.getUint32(pathAt, true);
      if (Buffer.byteLength(s.path, 'utf8') !== pathLen || Buffer.from(toc.buffer, toc.byteOffset + pathAt + 4, pathLen).toString('utf8') !== s.path) return undefined;
      const m = await entryOf(s, compress);
      if (!m) return undefined;
      made.push({ index: k, entry: m.entry, data: m.data, cooked: m.cooked, record: new Uint8Array(0) });
    }
    const oldOffset = (k: number) => tv.getUint32(walk.offsetAt[k], true) + tv.getUint32(walk.offsetAt[k] + 4, true) * 2 ** 32;
    // New offsets: each changed entry moves what follows it by its size difference.
    const cooked = new BigUint64Array(seal.cooked);
    let shift = 0;
    let tocGrowth = 0;
    const shiftAfter = new Float64Array(made.length);
    for (let c = 0; c < made.length; c++) {
      const { index: k, entry } = made[c];
      entry.offset = oldOffset(k) + shift;
      shift += entry.storedSize - walk.stored[k];
      shiftAfter[c] = shift;
      // The record exactly as encodeToc writes it (a one-entry TOC of the same prefix, the prefix dropped).
      const one = encodeToc({ mountPoint: '', priority: 0, baseTocHash: 0n, entries: [entry] });
      made[c].record = one.subarray(16);
      tocGrowth += made[c].record.byteLength - (walk.starts[k + 1] - walk.starts[k]);
      cooked[k] = made[c].cooked;
    }
    // The new TOC: the old records in runs, offsets moved, the changed ones replaced.
    const newToc = Buffer.alloc(tocSize + tocGrowth);
    const nv = new DataView(newToc.buffer, newToc.byteOffset, newToc.byteLength);
    newToc.set(prefixToc, 0);
    let w = walk.prefix;
    let from = 0;
    let delta = 0;
    const copyRecords = (to: number) => {
      // Records from..to-1, unchanged: copied, each offset moved by `delta`.
      const a = walk.starts[from];
      const b = walk.starts[to];
      newToc.set(toc.subarray(a, b), w);
      if (delta !== 0) {
        for (let k = from; k < to; k++) {
          const at = w + (walk.offsetAt[k] - a);
          const o = nv.getUint32(at, true) + nv.getUint32(at + 4, true) * 2 ** 32 + delta;
          nv.setUint32(at, o % 2 ** 32, true);
          nv.setUint32(at + 4, Math.floor(o / 2 ** 32), true);
        }
      }
      w += b - a;
    };
    for (let c = 0; c < made.length; c++) {
      const k = made[c].index;
      copyRecords(k);
      newToc.set(made[c].record, w);
      w += made[c].record.byteLength;
      from = k + 1;
      delta = shiftAfter[c];
    }
    copyRecords(count);
    if (w !== newToc.byteLength) return undefined;
    const newTocOffset = tocOffset + shift;
    const newTocHash = xxh64(newToc);

    // The data: the old bytes in windows (every byte hashed against the seal), the changed entries' new bytes in their place.
    const oldHash = createXxh64();
    const newHash = createXxh64();
    const result = await stageAtomicFile(out, async (fh) => {
      let pos = 0;
      const put = async (b: Uint8Array, hashed = true) => {
        if (hashed) newHash.update(b);
        await writeFully(fh, b, pos);
        pos += b.byteLength;
      };
      await put(encodeHeader({ entryCount: count, flags: 0, tocOffset: newTocOffset, tocSize: newToc.byteLength }), false);
      // Old data [at, upTo): read, hashed, and written when `keep`.
      let at = PAK_HEADER_SIZE;
      const pass = async (upTo: number, keep: boolean) => {
        while (at < upTo) {
          const buf = new Uint8Array(Math.min(WINDOW, upTo - at));
          let got = 0;
          while (got < buf.byteLength) {
            const n = fs.readSync(fd, buf, got, buf.byteLength - got, at + got);
            if (n === 0) throw BROKEN;
            got += n;
          }
          oldHash.update(buf);
          if (keep) await put(buf);
          at += buf.byteLength;
        }
      };
      for (const m of made) {
        await pass(oldOffset(m.index), true);
        await pass(oldOffset(m.index) + walk.stored[m.index], false);
        for (const b of m.data) await put(b);
      }
      await pass(tocOffset, true);
      if (oldHash.digest() !== seal.dataXxh64) throw BROKEN;
      if (pos !== newTocOffset) throw BROKEN;
      const dataXxh64 = newHash.digest();
      await put(newToc, false);
      await put(encodeFooter(newTocHash), false);
      return { size: pos, dataXxh64 };
    }).catch((e: unknown) => {
      if (e === BROKEN || (e as { cause?: unknown })?.cause === BROKEN) return undefined;
      throw e;
    });
    if (!result) return undefined;
    return {
      tocHash: newTocHash,
      size: result.result.size,
      entryCount: count,
      changed: made.map((m) => ({ index: m.index, entry: m.entry })),
      reused,
      reusedCompressed,
      seal: { tocHash: newTocHash, dataEnd: newTocOffset, dataXxh64: result.result.dataXxh64, cooked },
      staged: result.staged,
    };
  } finally {
    fs.closeSync(fd);
  }
}
