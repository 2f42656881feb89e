/**
 * The streaming pak writer. Entries are written one at a time into a temp file (withAtomicFile),
 * so a crash never leaves a half pak under the final name and no more than one 4 MiB window of
 * any entry is held in memory. Cooked (LCKD) files are copied in block for block without
 * recompression; other files are compressed in 64 KiB DEFLATE blocks. No timestamps or other
 * run-dependent bytes go in, so the same inputs give the same pak.
 *
 * Nothing damaged is copied in silently: a cooked file damaged in place, with its size and mtime
 * kept, passes the cook cache's checks, and copying it would ship a pak that fails `pak verify`.
 * - A cooked source whose file hash is known (`cookedXxh64`, recorded by the cook when it wrote
 *   the file) is checked against it: one xxh64 pass over the stored bytes, no inflating.
 * - With `previous` (the pak this one replaces), such a source's blocks are copied from the
 *   previous pak's entry of the same path when that entry, with its LCKD header rebuilt from the
 *   TOC, hashes to the same file hash: the bytes are then exactly the cooked file's, so the pak is
 *   byte-identical to one built from the cooked files, without opening them. An entry that does
 *   not match (changed, or damaged in the old pak) comes from the cooked file instead.
 * - A source without a known hash has every block inflated and hashed against the LCKD header's
 *   xxh64 (the entry's).
 * A mismatch throws COOKED_INVALID naming the cooked file, so the cook can re-cook that asset.
 *
 * Files and bytes the pak compresses itself are copied from `previous` too, when the caller knows
 * their raw hash (`xxh64`) and vouches that the previous pak was compressed the same way
 * (`previousCompression`: same zlib, level and block layout, and the previous pak's TOC hash, so
 * the promise is about that very file): the entry's blocks are inflated and hashed against it,
 * and equal raw bytes compressed alike are equal stored bytes, so the pak stays byte-identical to
 * one built from scratch without compressing them again.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { errors } from '../src/errors.js';
import { withAtomicFile, writeFully } from '../src/util/atomicWrite.js';
import { newCheckedFile, openCheckedFile, sealCheckedFile } from '../src/util/checkedFile.js';
import { createXxh64, hashHex, initHash, xxh64 } from '../src/util/hash.js';
import { COOKED_FIXED_HEADER, COOKED_MAGIC, COOKED_VERSION, parseCookedHeader, readCookedHeader, type CookedHeader } from '../src/format/cookedPackage.js';
import { BLOCK_SIZE, DEFAULT_LEVEL, blockCountFor, compressBlocks, type CompressedBlocks, decompressBlock, decompressBlockAsync, deflateEachBlock, rawBlockSize, totalLength, type CompressOptions } from '../src/format/deflateBlocks.js';
import { PakReader } from './PakReader.js';
import {
  PAK_FLAG_PATCH,
  PAK_HEADER_SIZE,
  comparePathBytes,
  encodeFooter,
  encodeHeader,
  encodeToc,
  validateMountPoint,
  plainVirtualPathUnits,
  validateVirtualPath,
  type PakEntry,
  type PakToc,
} from './pakFormat.js';
import { readAt } from '../src/util/readAt.js';
import { BufferPool, readWhole } from '../src/util/readWhole.js';
import { packedOrder, packStrings } from '../src/util/stringOrder.js';

/** One entry to write. `path` is relative to the pak's mount point. */
export type PakSource =
  | {
      path: string;
      kind: 'cooked';
      file: string;
      /** xxh64 of the whole cooked file as it was written: checked instead of inflating every block, and what lets `previous` be used. */
      cookedXxh64?: bigint;
      /** The cooked file's bytes, when the caller holds them (just cooked): used instead of reading the file. */
      bytes?: Uint8Array;
      /** The cooked file's size as its cook wrote it: read without a stat, and a file of another size fails COOKED_INVALID. */
      size?: number;
    }
  | {
      path: string;
      kind: 'file';
      file: string;
      /** xxh64 of the file's bytes, when the caller knows it: what lets `previous` serve it (see previousCompression). */
      xxh64?: bigint;
    }
  | {
      path: string;
      kind: 'bytes';
      data: Uint8Array;
      /** xxh64 of `data`, when the caller has it (see the 'file' source's). */
      xxh64?: bigint;
      /**
       * `compressBlocks(data)` with this write's level and engine, when the caller shares it: the
       * same bytes written into several paks (AssetRegistry.bin in every chunk pak) are compressed
       * once. Asked for only when the entry is compressed here (not copied from `previous`).
       */
      compressed?: () => Promise<CompressedBlocks>;
    }
  | { path: string; kind: 'tombstone' };

export interface WritePakOptions extends CompressOptions {
  /** Default "/". */
  mountPoint?: string;
  /** Default 0. */
  priority?: number;
  /** Sets flag 0x1 and records `baseTocHash` in the TOC. */
  patch?: { baseTocHash: bigint };
  /** Called after each entry is written (progress). */
  onEntry?: (entry: PakEntry, index: number, count: number) => void;
  /**
   * The pak this one replaces (it may be `out` itself): the blocks of cooked sources with a known
   * `cookedXxh64` are copied from it when its entry matches (see the module comment). A previous
   * pak that is missing or does not open is simply not used.
   */
  previous?: string;
  /**
   * How the `previous` pak's own compressed entries were made (`compressionId` of its options)
   * and its TOC hash. When both match (this write's compressionId, the previous pak's footer), its
   * entries of 'file' and 'bytes' sources with a known `xxh64` are copied, checked, not compressed again.
   */
  previousCompression?: { compression: string; tocHash: bigint };
  /**
   * The seal this writer returned for the `previous` pak (kept by the caller). When it is that
   * pak's (same TOC hash) and the pak's data still hashes to it, the entries it vouches for are
   * copied without checking each one: see PakSeal.
   */
  previousSeal?: PakSeal;
}

/**
 * What the writer vouches for about a pak it wrote, for the next rebuild from it: the xxh64 of the
 * pak's data (every byte from the header to the TOC) and, per TOC entry, the hash of the cooked
 * file its blocks were copied from (checked then). With the pak's TOC checked by its footer and its
 * data by this hash, each such entry is exactly what that cooked file gives, and each entry the
 * pak compressed itself holds the raw bytes its TOC hash names: a rebuild copies them in runs,
 * hashing the old data once, not every entry (a header rebuilt and hashed per cooked entry, the
 * registry's blocks inflated). The data is hashed as it is read for copying; when it does not
 * match (the old pak was damaged), the pak is written again with every entry checked.
 */
export interface PakSeal {
  /** The pak's TOC hash (its footer's). */
  tocHash: bigint;
  /** Where its data ends: the TOC offset. */
  dataEnd: number;
  /** xxh64 of the bytes from the end of the header to dataEnd. */
  dataXxh64: bigint;
  /** Per TOC entry, in order: the xxh64 of the cooked file its blocks came from (checked), 0 for any other entry. */
  cooked: BigUint64Array;
}

const SEAL_MAGIC = 0x4c53504c; // "LPSL"
const SEAL_VERSION = 1;
const SEAL_HEADER = 40;
/** The seal's u64s are little-endian: on such a host they are copied as they lie in memory. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * A seal as a file's bytes (kept by the caller beside the pak): "LPSL" u32 version, u32 entries,
 * u32 0, u64 TOC hash, u64 data end, u64 data xxh64, u64 per entry, then the xxh64 of all before.
 */
export function encodePakSeal(seal: PakSeal): Uint8Array {
  const out = newCheckedFile(SEAL_MAGIC, SEAL_VERSION, SEAL_HEADER + 8 * seal.cooked.length);
  out.writeUInt32LE(seal.cooked.length, 8);
  out.writeBigUInt64LE(seal.tocHash, 16);
  out.writeBigUInt64LE(BigInt(seal.dataEnd), 24);
  out.writeBigUInt64LE(seal.dataXxh64, 32);
  // The hashes as they lie in memory (little-endian hosts): one copy, not a BigInt per entry.
  if (LITTLE_ENDIAN) out.set(new Uint8Array(seal.cooked.buffer, seal.cooked.byteOffset, 8 * seal.cooked.length), SEAL_HEADER);
  else for (let k = 0, at = SEAL_HEADER; k < seal.cooked.length; k++, at += 8) out.writeBigUInt64LE(seal.cooked[k], at);
  return sealCheckedFile(out);
}

/** A seal's bytes read back; undefined when they are not one (damaged, another version). Requires `initHash()`. */
export function decodePakSeal(bytes: Uint8Array): PakSeal | undefined {
  const b = openCheckedFile(bytes, SEAL_MAGIC, SEAL_VERSION, SEAL_HEADER, (h) => SEAL_HEADER + 8 * h.readUInt32LE(8) + 8);
  if (!b) return undefined;
  const count = b.readUInt32LE(8);
  const cooked = new BigUint64Array(count);
  if (LITTLE_ENDIAN) new Uint8Array(cooked.buffer).set(b.subarray(SEAL_HEADER, SEAL_HEADER + 8 * count));
  else for (let k = 0, at = SEAL_HEADER; k < count; k++, at += 8) cooked[k] = b.readBigUInt64LE(at);
  return { tocHash: b.readBigUInt64LE(16), dataEnd: Number(b.readBigUInt64LE(24)), dataXxh64: b.readBigUInt64LE(32), cooked };
}

/** Bumped whenever the pak writer compresses differently (block layout, window bits, stored-vs-DEFLATE rule). */
const COMPRESSION_SCHEME = 1;

/**
 * What the stored bytes of a file or bytes source are a function of, besides its raw bytes: the
 * DEFLATE engine and its version, the level and the writer's scheme. Undefined for the fflate
 * engine (not vouched for: such paks compress everything).
 */
export function compressionId(opts: CompressOptions = {}): string | undefined {
  if ((opts.engine ?? 'zlib') !== 'zlib') return undefined;
  return `zlib-${process.versions.zlib}-level-${opts.level ?? DEFAULT_LEVEL}-blocks-${BLOCK_SIZE}-v${COMPRESSION_SCHEME}`;
}

export interface WritePakResult {
  file: string;
  toc: PakToc;
  /** xxh64 of the TOC bytes, as in the footer. */
  tocHash: bigint;
  size: number;
  /** Cooked entries whose blocks came from `previous`, and those read from their cooked files (or given bytes). */
  reused: number;
  /** Entries of `previous` that matched a source by path and hash in the TOC but whose stored bytes did not hash right (damaged): taken from the cooked file instead. */
  previousDamaged: number;
  /** Entries of file and bytes sources copied from `previous` (see previousCompression) instead of compressed again. */
  reusedCompressed: number;
  /** This pak's seal (see PakSeal), for the next rebuild; undefined when the writer went back over bytes it had written. */
  seal?: PakSeal;
  /** `writePak`'s: the TOC index of each source, in the order given (`toc.entries[tocIndex[i]]` is `sources[i]`'s entry). */
  tocIndex?: Uint32Array;
}

/** Raw bytes read and compressed per step for 'file' sources: 64 blocks keeps zlib's pool busy. */
const WINDOW = 64 * BLOCK_SIZE;
/** Bytes copied per step for 'cooked' sources. */
const COPY_CHUNK = 4 << 20;

/** Writes in flight at once: lets the next read or compression overlap the disk write. */
const WRITES_IN_FLIGHT = 4;
/** Appends smaller than this are gathered into one write. */
const STAGE_SIZE = 1 << 20;

/**
 * Positional writes into the temp pak. `write` advances `pos` at once and keeps a few writes in
 * flight; `flush` waits for them, and must run before anything rewrites bytes already queued.
 */
class PositionalOut {
  pos = PAK_HEADER_SIZE;
  private readonly pending: Promise<void>[] = [];
  private stage = new Uint8Array(STAGE_SIZE);
  private staged = 0;
  private stageAt = PAK_HEADER_SIZE;
  /** The data's hash (PakSeal), over every byte appended in order from the header's end. */
  private readonly dataHash = createXxh64();
  private hashedTo = PAK_HEADER_SIZE;
  private hashing = true;
  /** A write went back over appended bytes (a file source rewritten stored): no seal. */
  private rewound = false;
  constructor(private readonly fh: fsp.FileHandle) {}

  /** The data's end and hash, taken before the TOC goes out; undefined when bytes were rewritten. */
  async dataSeal(): Promise<{ end: number; xxh64: bigint } | undefined> {
    await this.spill();
    this.hashing = false;
    return this.rewound || this.hashedTo !== this.pos ? undefined : { end: this.hashedTo, xxh64: this.dataHash.digest() };
  }

  private async writeAt(b: Uint8Array, at: number): Promise<void> {
    await writeFully(this.fh, b, at);
  }

  /**
   * Queue `b` at `at` (default: the end). `b` must not be reused until the next flush. Small
   * appends are copied into a staging buffer and written together: a pak of 20k small entries
   * would otherwise cost 20k write calls (~60 µs of main-thread time each through the promise API).
   */
  async write(b: Uint8Array, at = this.pos): Promise<void> {
    if (at === this.pos && this.append(b)) return;
    if (b.byteLength === 0) {
      this.pos = at;
      return;
    }
    await this.spill();
    // An append that did not fit the staged bytes fits the empty stage unless it is bigger.
    if (at === this.pos && this.append(b)) return;
    this.pos = at + b.byteLength;
    await this.queue(b, at);
  }

  /**
   * Stage `b` at the end when it fits in the staging buffer as it is: no promise. A cold cook's
   * pak phase runs once per process, mostly before V8 optimizes it, where a promise per entry
   * (12k held entries) was a large part of the pak's main-thread time. False: nothing was done.
   */
  append(b: Uint8Array): boolean {
    if (b.byteLength === 0 || this.staged + b.byteLength > STAGE_SIZE) return false;
    if (this.staged === 0) this.stageAt = this.pos;
    this.stage.set(b, this.staged);
    this.staged += b.byteLength;
    this.pos += b.byteLength;
    return true;
  }

  private async queue(b: Uint8Array, at: number): Promise<void> {
    if (this.hashing) {
      if (at === this.hashedTo) {
        this.dataHash.update(b);
        this.hashedTo += b.byteLength;
      } else if (at >= PAK_HEADER_SIZE) this.rewound = true;
    }
    const p = this.writeAt(b, at);
    p.catch(() => {});
    this.pending.push(p);
    if (this.pending.length >= WRITES_IN_FLIGHT) await this.pending.shift();
  }

  /** Hand the staged bytes to a write of their own; the next appends go into a fresh buffer. */
  private async spill(): Promise<void> {
    if (this.staged === 0) return;
    const chunk = this.stage.subarray(0, this.staged);
    this.stage = new Uint8Array(STAGE_SIZE);
    this.staged = 0;
    await this.queue(chunk, this.stageAt);
  }

  async flush(): Promise<void> {
    await this.spill();
    while (this.pending.length > 0) await this.pending.shift();
  }

  /** Wait for every queued write, ignoring failures (the error path). */
  async settle(): Promise<void> {
    this.staged = 0;
    await Promise.allSettled(this.pending.splice(0));
  }
}

async function readFully(fh: fsp.FileHandle, buf: Uint8Array, at: number, file: string): Promise<void> {
  if ((await readAt(fh, buf, at)) < buf.byteLength) throw errors.ioFailed(file, 'read', new Error('file shrank while it was being packed'));
}

async function openSource(file: string): Promise<fsp.FileHandle> {
  try {
    return await fsp.open(file, 'r');
  } catch (e) {
    throw errors.ioFailed(file, 'open', e);
  }
}

/** A cooked source small enough to hold whole, loaded ahead of its turn so reads overlap writes. */
export interface LoadedCooked {
  header: CookedHeader;
  /** The whole cooked file. */
  bytes: Uint8Array;
  /** `bytes` is a view of a buffer of the pool given to loadCooked: give it back once copied out. */
  pooled?: boolean;
}

/** Cooked files up to this size are read in one go (and read ahead); bigger ones stream in chunks. */
const PREFETCH_MAX = 8 << 20;
/** Sources read ahead of the one being written: bounds memory to PREFETCH_AHEAD * PREFETCH_MAX. */
const PREFETCH_AHEAD = 4;
/**
 * The read buffers a pak write reuses (loadCooked, writeFileSource): files up to this size are read
 * into one. No bigger than STAGE_SIZE, so every write of their bytes is copied into the stage
 * (PositionalOut.write), never queued by reference, and the buffer is free once the write returns.
 */
const POOLED_READ = STAGE_SIZE;
/** Pool buffers in use at once: the read-ahead's loads, the one being written and a text file. */
const POOLED_KEEP = PREFETCH_AHEAD + 2;

/** What became of the cooked sources of one pak (WritePakResult's counts). */
export interface CookedStats {
  reused: number;
  previousDamaged: number;
  reusedCompressed: number;
}

/** Write the LCKD header of the cooked file whose blocks a pak entry holds (FORMAT.md "Cooked packages") at the start of `out`. */
function writeCookedHeader(out: Uint8Array, e: PakEntry): void {
  const count = blockCountFor(e.rawSize);
  const v = new DataView(out.buffer, out.byteOffset, out.byteLength);
  v.setUint32(0, COOKED_MAGIC, true);
  v.setUint32(4, COOKED_VERSION, true);
  v.setBigUint64(8, BigInt(e.rawSize), true);
  v.setBigUint64(16, e.xxh64, true);
  v.setUint8(24, e.method);
  v.setUint32(25, BLOCK_SIZE, true);
  v.setUint32(29, count, true);
  for (let i = 0; i < count; i++) v.setUint32(COOKED_FIXED_HEADER + 4 * i, e.method === 1 ? e.blockSizes[i] : rawBlockSize(e.rawSize, i), true);
}

/** Bytes read from the previous pak per step: its entries come in the same path order, so one read serves many. */
const PREVIOUS_WINDOW = 4 << 20;

/** The pak being replaced, read in large sequential windows (synchronous: the reads are from the page cache, mostly). */
class PreviousPak {
  private window = new Uint8Array(0);
  private windowAt = 0;
  /** While a seal is in use: the data hashed so far, in order (each byte read once, as it is read). */
  private sealed?: { hash: ReturnType<typeof createXxh64>; hashedTo: number; end: number; want: bigint; broken: boolean };

  private constructor(
    private readonly fd: number,
    /** The TOC's entries, in order, and each path's index among them. */
    private readonly entries: readonly PakEntry[],
    private readonly index: Map<string, number>,
    /** The footer's TOC hash. */
    readonly tocHash: bigint,
    /** The TOC's offset: where the data ends. */
    readonly dataEnd: number,
  ) {}

  /** The previous pak, or undefined when it is missing or does not open (then every source is read from its file). */
  static async open(file: string): Promise<PreviousPak | undefined> {
    let reader: PakReader;
    try {
      reader = await PakReader.open(file);
    } catch {
      return undefined;
    }
    try {
      // The TOC was validated against the file (sizes, offsets, footer hash); the entries' bytes are checked per use (or by a seal).
      const entries = reader.entries;
      const index = new Map<string, number>();
      for (let k = 0; k < entries.length; k++) index.set(entries[k].path, k);
      return new PreviousPak(fs.openSync(file, 'r'), entries, index, reader.tocHash, reader.header.tocOffset);
    } catch {
      return undefined;
    } finally {
      await reader.close();
    }
  }

  /** The index of the entry at `path` that may serve a source (stored or DEFLATE, small enough to hold), else -1. */
  entryIndex(path: string): number {
    const k = this.index.get(path);
    if (k === undefined) return -1;
    const e = this.entries[k];
    return e.method !== 2 && e.storedSize <= PREFETCH_MAX ? k : -1;
  }

  entryAt(k: number): PakEntry {
    return this.entries[k];
  }

  entry(path: string): PakEntry | undefined {
    const k = this.entryIndex(path);
    return k < 0 ? undefined : this.entries[k];
  }

  /** Read under `seal` from now on (the data hashed as it is read), when it is this pak's. */
  useSeal(seal: PakSeal): boolean {
    if (seal.tocHash !== this.tocHash || seal.dataEnd !== this.dataEnd || seal.cooked.length !== this.entries.length) return false;
    this.sealed = { hash: createXxh64(), hashedTo: PAK_HEADER_SIZE, end: seal.dataEnd, want: seal.dataXxh64, broken: false };
    this.window = new Uint8Array(0);
    this.windowAt = 0;
    return true;
  }

  /** Back to reading without a seal (each entry checked), from the start. */
  dropSeal(): void {
    this.sealed = undefined;
    this.window = new Uint8Array(0);
    this.windowAt = 0;
  }

  /** Hash the rest of the data: whether all of it is what the seal says. */
  sealHolds(): boolean {
    const s = this.sealed;
    if (!s || s.broken) return false;
    const buf = new Uint8Array(PREVIOUS_WINDOW);
    while (s.hashedTo < s.end) {
      const n = fs.readSync(this.fd, buf, 0, Math.min(buf.byteLength, s.end - s.hashedTo), s.hashedTo);
      if (n === 0) return false;
      s.hash.update(buf.subarray(0, n));
      s.hashedTo += n;
    }
    return s.hash.digest() === s.want;
  }

  /** Header + stored bytes of one entry, laid out as its cooked file, hashed in one call (a streaming state per entry cost 4x). */
  private scratch = new Uint8Array(1 << 16);

  /** Whether entry `e`'s stored bytes `data` inflate (every block checked as a reader would) to `rawSize` bytes hashing to `want`. */
  holdsRaw(e: PakEntry, data: Uint8Array, want: bigint): boolean {
    if (e.xxh64 !== want) return false;
    if (e.method === 0) return xxh64(data) === want;
    // Block by block: a few MB of DEFLATE can hold GBs of raw bytes (the registry alone is ~80 MB at a million assets).
    const h = createXxh64();
    const fail = () => new Error('damaged');
    try {
      for (let b = 0, at = 0; b < e.blockSizes.length; b++) {
        h.update(decompressBlock(data.subarray(at, at + e.blockSizes[b]), rawBlockSize(e.rawSize, b), fail as never, ''));
        at += e.blockSizes[b];
      }
    } catch {
      return false;
    }
    return h.digest() === want;
  }

  /** Whether entry `e` with stored bytes `data`, its LCKD header rebuilt from the TOC, hashes to `want` (the cooked file's hash). */
  matches(e: PakEntry, data: Uint8Array, want: bigint): boolean {
    const headLen = COOKED_FIXED_HEADER + 4 * blockCountFor(e.rawSize);
    if (this.scratch.byteLength < headLen + data.byteLength) this.scratch = new Uint8Array(Math.max(headLen + data.byteLength, 2 * this.scratch.byteLength));
    writeCookedHeader(this.scratch, e);
    this.scratch.set(data, headLen);
    return xxh64(this.scratch.subarray(0, headLen + data.byteLength)) === want;
  }

  /** `length` bytes at `offset`. The result is not reused afterwards (a new window is a new buffer), so it may be queued for writing. */
  read(offset: number, length: number): Uint8Array | undefined {
    if (this.sealed && (offset < this.windowAt || offset + length > this.windowAt + this.window.byteLength)) return this.readSealed(offset, length);
    if (offset < this.windowAt || offset + length > this.windowAt + this.window.byteLength) {
      const buf = new Uint8Array(Math.max(length, PREVIOUS_WINDOW));
      let got = 0;
      while (got < buf.byteLength) {
        const n = fs.readSync(this.fd, buf, got, buf.byteLength - got, offset + got);
        if (n === 0) break;
        got += n;
      }
      if (got < length) return undefined;
      this.window = buf.subarray(0, got);
      this.windowAt = offset;
    }
    return this.window.subarray(offset - this.windowAt, offset - this.windowAt + length);
  }

  /**
   * read() under a seal: the file is read forward only, every byte once, and hashed as it is read
   * (the bytes copied are the bytes hashed). A gap before `offset` is read and hashed; the old
   * window's tail that the new one starts in is carried over, not read again.
   */
  private readSealed(offset: number, length: number): Uint8Array | undefined {
    const s = this.sealed!;
    const windowEnd = this.windowAt + this.window.byteLength;
    if (offset < this.windowAt || offset + length > s.end) {
      s.broken = true;
      return undefined;
    }
    if (offset > s.hashedTo) {
      const gap = new Uint8Array(Math.min(PREVIOUS_WINDOW, offset - s.hashedTo));
      while (s.hashedTo < offset) {
        const n = fs.readSync(this.fd, gap, 0, Math.min(gap.byteLength, offset - s.hashedTo), s.hashedTo);
        if (n === 0) {
          s.broken = true;
          return undefined;
        }
        s.hash.update(gap.subarray(0, n));
        s.hashedTo += n;
      }
    }
    const buf = new Uint8Array(Math.min(Math.max(length, PREVIOUS_WINDOW), s.end - offset));
    let got = 0;
    if (offset < windowEnd) {
      buf.set(this.window.subarray(offset - this.windowAt));
      got = windowEnd - offset;
    }
    while (got < buf.byteLength) {
      const n = fs.readSync(this.fd, buf, got, buf.byteLength - got, offset + got);
      if (n === 0) break;
      s.hash.update(buf.subarray(got, got + n));
      got += n;
    }
    s.hashedTo = offset + got;
    this.window = buf.subarray(0, got);
    this.windowAt = offset;
    if (got < length) {
      s.broken = true;
      return undefined;
    }
    return this.window.subarray(0, length);
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

/** Thrown inside writePakFile when the previous pak's data does not hash to its seal: the pak is written again, checked entry by entry. */
const SEAL_BROKEN = new Error('the previous pak does not match its seal');

function changedSinceCook(file: string, got: bigint, want: bigint): Error {
  return errors.cookedInvalid(file, 'xxh64', `the file hashes to ${hashHex(got)}, its cook recorded ${hashHex(want)}: the cooked file changed after it was cooked`, 0);
}

function resizedSinceCook(file: string, got: number, want: number): Error {
  const is = got > want ? `more than ${want}` : `${got}`;
  return errors.cookedInvalid(file, 'size', `the file is ${is} bytes, its cook wrote ${want}: the cooked file changed after it was cooked`);
}

/**
 * A cooked source's header and bytes, checked (see the module comment), from the given bytes or
 * the file (sources the previous pak serves never come here). `mismatched`: the previous pak's
 * entry of this path, which did not hash to the file's hash. Undefined when the file is too big to
 * hold (it is then streamed by writeCooked).
 */
export async function loadCooked(
  s: Extract<PakSource, { kind: 'cooked' }>,
  mismatched: PakEntry | undefined,
  stats: CookedStats,
  pool?: BufferPool,
): Promise<LoadedCooked | undefined> {
  const want = s.cookedXxh64;
  let bytes: Uint8Array;
  let pooled = false;
  if (s.bytes !== undefined) bytes = s.bytes;
  else {
    // Synchronous on purpose: cooked files are small, and sync open/read/close cost a tenth of the
    // main-thread time of the promise API, which dominated pak writing for many small entries.
    let read;
    try {
      read = readWhole(s.file, s.size, PREFETCH_MAX, pool);
    } catch (e) {
      throw errors.ioFailed(s.file, 'read', e);
    }
    if (read === undefined) return undefined;
    bytes = read.bytes;
    pooled = pool !== undefined && read.size + 1 <= pool.size;
    if (bytes.byteLength !== read.size) {
      if (pooled) pool!.give(bytes);
      if (s.size !== undefined) throw resizedSinceCook(s.file, bytes.byteLength, s.size);
      throw errors.ioFailed(s.file, 'read', new Error('file changed while it was being packed'));
    }
  }
  if (want !== undefined) {
    const got = xxh64(bytes);
    if (got !== want) throw changedSinceCook(s.file, got, want);
  }
  const header = parseCookedHeader(bytes, s.file, bytes.byteLength);
  if (want === undefined) {
    const check = new CookedBlockCheck(s.file, header);
    await check.update(bytes.subarray(header.dataOffset));
    check.finish();
  }
  // The previous pak's entry claimed these very blocks but did not hash right: it was damaged.
  if (mismatched && mismatched.xxh64 === header.xxh64 && mismatched.rawSize === header.rawSize && mismatched.storedSize === header.storedSize) stats.previousDamaged++;
  return pooled ? { header, bytes, pooled } : { header, bytes };
}

/**
 * A held source (bytes just cooked, with their hash) checked as loadCooked checks it, without a
 * promise; undefined for any other source (loadCooked's).
 */
function loadHeld(s: PakSource): LoadedCooked | undefined {
  if (s.kind !== 'cooked' || s.bytes === undefined || s.cookedXxh64 === undefined) return undefined;
  const got = xxh64(s.bytes);
  if (got !== s.cookedXxh64) throw changedSinceCook(s.file, got, s.cookedXxh64);
  return { header: parseCookedHeader(s.bytes, s.file, s.bytes.byteLength), bytes: s.bytes };
}

export function cookedEntry(path: string, offset: number, h: CookedHeader): PakEntry {
  return {
    path,
    offset,
    storedSize: h.storedSize,
    rawSize: h.rawSize,
    xxh64: h.xxh64,
    method: h.method,
    blockSize: BLOCK_SIZE,
    blockSizes: h.method === 1 ? h.blockSizes : [],
  };
}

/** Blocks inflated at once when cooked blocks are checked: keeps the zlib pool (4 threads) busy. */
const CHECK_IN_FLIGHT = 8;

/**
 * Checks an LCKD file's blocks as they stream past, in order: each must inflate (or, stored, be)
 * exactly its raw size with nothing after the DEFLATE stream, and together hash to the header's
 * xxh64. `update` takes any run of bytes from the block data and checks the blocks it completes
 * (inflated in parallel on the thread pool, hashed in order); `finish` throws on a mismatch.
 */
class CookedBlockCheck {
  private block = 0;
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private readonly hash = createXxh64();
  private readonly fail = (field: string, why: string, offset?: number) => errors.cookedInvalid(this.file, field, why, offset);

  constructor(
    private readonly file: string,
    private readonly h: CookedHeader,
  ) {}

  async update(bytes: Uint8Array): Promise<void> {
    const complete: Uint8Array[] = [];
    let at = 0;
    while (at < bytes.byteLength && this.block + complete.length < this.h.blockCount) {
      const need = this.h.blockSizes[this.block + complete.length] - this.pendingBytes;
      const take = Math.min(need, bytes.byteLength - at);
      this.pending.push(bytes.subarray(at, at + take));
      this.pendingBytes += take;
      at += take;
      if (take === need) {
        complete.push(this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending));
        this.pending = [];
        this.pendingBytes = 0;
      }
    }
    await this.check(complete);
  }

  private async check(blocks: Uint8Array[]): Promise<void> {
    const first = this.block;
    this.block += blocks.length;
    // Stored blocks are their raw bytes (parseCookedHeader checked their sizes).
    if (this.h.method === 0) {
      for (const b of blocks) this.hash.update(b);
      return;
    }
    const want = (i: number) => rawBlockSize(this.h.rawSize, first + i);
    // One block: the thread-pool round trip costs more than inflating it here.
    if (blocks.length === 1) {
      this.hash.update(decompressBlock(blocks[0], want(0), this.fail, `block[${first}]`));
      return;
    }
    const raw: Uint8Array[] = new Array(blocks.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < blocks.length) {
        const i = next++;
        raw[i] = await decompressBlockAsync(blocks[i], want(i), this.fail, `block[${first + i}]`);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CHECK_IN_FLIGHT, blocks.length) }, worker));
    for (const r of raw) this.hash.update(r);
  }

  finish(): void {
    const got = this.hash.digest();
    if (got !== this.h.xxh64) {
      throw errors.cookedInvalid(this.file, 'xxh64', `raw bytes hash to ${hashHex(got)}, header says ${hashHex(this.h.xxh64)}: the cooked file changed after it was cooked`, 16);
    }
  }
}

/**
 * Copy an LCKD file's blocks into the pak as they are: the entry takes the LCKD's sizes, hash and
 * method. The blocks are checked first (see the module comment).
 */
async function writeCooked(out: PositionalOut, s: Extract<PakSource, { kind: 'cooked' }>, loaded: LoadedCooked | undefined, pool: BufferPool): Promise<PakEntry> {
  const offset = out.pos;
  if (loaded) {
    // Checked by loadCooked, ahead of its turn. A pooled buffer's bytes are copied into the stage by the write (POOLED_READ).
    await out.write(loaded.bytes.subarray(loaded.header.dataOffset));
    if (loaded.pooled) pool.give(loaded.bytes);
    return cookedEntry(s.path, offset, loaded.header);
  }
  const file = s.file;
  const fh = await openSource(file);
  try {
    const h = await readCookedHeader(file, fh);
    // A known file hash: hash the header and every block as they pass; else inflate every block.
    const whole = s.cookedXxh64 === undefined ? undefined : createXxh64();
    const check = whole ? undefined : new CookedBlockCheck(file, h);
    if (whole) {
      const head = new Uint8Array(h.dataOffset);
      await readFully(fh, head, 0, file);
      whole.update(head);
    }
    for (let done = 0; done < h.storedSize; ) {
      const n = Math.min(COPY_CHUNK, h.storedSize - done);
      const view = new Uint8Array(n); // not reused: the write may still be in flight
      await readFully(fh, view, h.dataOffset + done, file);
      if (whole) whole.update(view);
      else await check!.update(view);
      await out.write(view);
      done += n;
    }
    // A bad block already written is harmless: the error aborts the whole temp pak.
    if (whole) {
      const got = whole.digest();
      if (got !== s.cookedXxh64) throw changedSinceCook(file, got, s.cookedXxh64!);
    } else check!.finish();
    return cookedEntry(s.path, offset, h);
  } finally {
    await fh.close();
  }
}

/**
 * Compress a file window by window. When the blocks together turn out no smaller than the file,
 * go back to the entry's start and write the raw bytes instead (stored), so the stored-vs-DEFLATE
 * rule is the same as compressBlocks' without holding the whole file.
 */
async function writeFileSource(out: PositionalOut, path: string, file: string, opts: CompressOptions, pool: BufferPool): Promise<PakEntry> {
  // A file of one window (text assets: a few KiB) is read whole, synchronously, and compressed
  // like given bytes (same stored-vs-DEFLATE rule): four promise-API calls per file were most of
  // a one-file change's pak time for a few hundred text assets.
  let small;
  try {
    small = readWhole(file, undefined, WINDOW, pool);
  } catch (e) {
    throw errors.ioFailed(file, 'read', e);
  }
  if (small !== undefined) {
    if (small.bytes.byteLength !== small.size) throw errors.ioFailed(file, 'read', new Error('file changed while it was being packed'));
    const e = await writeBytes(out, path, small.bytes, opts);
    // Its blocks were copied into the stage (a pooled buffer is no bigger than STAGE_SIZE) and it is hashed: free again.
    pool.give(small.bytes);
    return e;
  }
  const fh = await openSource(file);
  try {
    const { size } = await fh.stat();
    const offset = out.pos;
    const hash = createXxh64();
    const blockSizes: number[] = [];
    let stored = 0;
    const buf = new Uint8Array(Math.min(WINDOW, size));
    for (let done = 0; done < size; ) {
      const n = Math.min(WINDOW, size - done);
      const view = buf.subarray(0, n);
      await readFully(fh, view, done, file);
      hash.update(view);
      const blocks = await deflateEachBlock(view, opts);
      for (const b of blocks) {
        await out.write(b);
        blockSizes.push(b.byteLength);
      }
      stored += totalLength(blocks);
      done += n;
    }
    const digest = hash.digest();
    if (size > 0 && stored < size) {
      return { path, offset, storedSize: stored, rawSize: size, xxh64: digest, method: 1, blockSize: BLOCK_SIZE, blockSizes };
    }
    await out.flush(); // the compressed writes must land before the raw bytes overwrite them
    out.pos = offset;
    const again = createXxh64();
    for (let done = 0; done < size; ) {
      const view = new Uint8Array(Math.min(WINDOW, size - done));
      await readFully(fh, view, done, file);
      again.update(view);
      await out.write(view);
      done += view.byteLength;
    }
    if (again.digest() !== digest) throw errors.ioFailed(file, 'read', new Error('file changed while it was being packed'));
    return { path, offset, storedSize: size, rawSize: size, xxh64: digest, method: 0, blockSize: BLOCK_SIZE, blockSizes: [] };
  } finally {
    await fh.close();
  }
}

async function writeBytes(out: PositionalOut, path: string, data: Uint8Array, opts: CompressOptions, compressed?: () => Promise<CompressedBlocks>): Promise<PakEntry> {
  const offset = out.pos;
  const { method, blocks } = await (compressed ? compressed() : compressBlocks(data, opts));
  for (const b of blocks) await out.write(b);
  return {
    path,
    offset,
    storedSize: totalLength(blocks),
    rawSize: data.byteLength,
    xxh64: xxh64(data),
    method,
    blockSize: BLOCK_SIZE,
    blockSizes: method === 1 ? blocks.map((b) => b.byteLength) : [],
  };
}

/** Validate paths, reject duplicates and sort by UTF-8 bytes. `out` names the pak in errors. */
export function sortSources<T extends { path: string }>(sources: readonly T[], out: string): T[] {
  return sortedOf(sources, sortOrder(sources, out));
}

/**
 * sortSources as a permutation: entry k of the sorted order is `sources[order[k]]`. Sorting the
 * indices costs no more than sorting the objects, and gives each source's place for free (see
 * WritePakResult.tocIndex), where a path -> index map of a million entries was ~20-30 MB.
 */
function sortOrder(sources: readonly { path: string }[], out: string): Uint32Array {
  const paths = sources.map((s) => s.path);
  // The paths are read once, into one array: checking, sorting and comparing them there costs a
  // million-entry pak per entry what 100k costs, where a comparator sort chased scattered strings.
  const packed = packStrings(paths);
  const { units, start } = packed;
  for (let i = 0; i < paths.length; i++) {
    if (!plainVirtualPathUnits(units, start[i], start[i + 1])) validateVirtualPath(paths[i], out);
  }
  // Without a surrogate or a character from U+E000 up, string (UTF-16) order is UTF-8 byte order.
  let plain = true;
  if (units.BYTES_PER_ELEMENT === 2) {
    for (let i = 0; i < units.length && plain; i++) plain = units[i] < 0xd800;
  }
  if (plain) {
    const sorted = packedOrder(packed);
    if (sorted.repeat >= 0) throw errors.pakPathInvalid(out, paths[sorted.order[sorted.repeat]], 'is listed twice');
    return sorted.order;
  }
  const order = new Uint32Array(sources.length);
  for (let i = 0; i < order.length; i++) order[i] = i;
  order.sort((x, y) => comparePathBytes(paths[x], paths[y]));
  for (let k = 1; k < order.length; k++) {
    if (paths[order[k]] === paths[order[k - 1]]) throw errors.pakPathInvalid(out, paths[order[k]], 'is listed twice');
  }
  return order;
}

function sortedOf<T>(sources: readonly T[], order: Uint32Array): T[] {
  const sorted = new Array<T>(order.length);
  for (let k = 0; k < order.length; k++) sorted[k] = sources[order[k]];
  return sorted;
}

/**
 * Write a pak at `out` from `sources` (any order; written in path byte order), atomically.
 * Resolves with the TOC and its hash, which a release manifest records.
 */
export async function writePak(out: string, sources: readonly PakSource[], opts: WritePakOptions = {}): Promise<WritePakResult> {
  await initHash();
  const mountPoint = opts.mountPoint ?? '/';
  validateMountPoint(mountPoint, out);
  const priority = opts.priority ?? 0;
  if (!Number.isInteger(priority) || priority < -(2 ** 31) || priority >= 2 ** 31) throw errors.usage(`pak priority ${priority} is not a 32-bit integer`);
  const order = sortOrder(sources, out);
  const sorted = sortedOf(sources, order);
  // Each source's TOC index (the inverse of the sort).
  const tocIndex = new Uint32Array(order.length);
  for (let k = 0; k < order.length; k++) tocIndex[order[k]] = k;
  const compress: CompressOptions = { level: opts.level, engine: opts.engine };
  const previous = opts.previous === undefined ? undefined : await PreviousPak.open(opts.previous);
  try {
    const sealed = previous !== undefined && opts.previousSeal !== undefined && previous.useSeal(opts.previousSeal);
    const ctx = { mountPoint, priority, compress, previous, sealed };
    try {
      return { ...(await writePakFile(out, sorted, opts, { ...ctx, stats: { reused: 0, previousDamaged: 0, reusedCompressed: 0 } })), tocIndex };
    } catch (e) {
      // withAtomicFile gives it back as the cause of its IO_FAILED.
      if (e !== SEAL_BROKEN && (e as { cause?: unknown })?.cause !== SEAL_BROKEN) throw e;
      // The previous pak changed since its seal (damaged): every entry it lends is checked on its own.
      previous!.dropSeal();
      return { ...(await writePakFile(out, sorted, opts, { ...ctx, sealed: false, stats: { reused: 0, previousDamaged: 0, reusedCompressed: 0 } })), tocIndex };
    }
  } finally {
    previous?.close();
  }
}

async function writePakFile(
  out: string,
  sorted: readonly PakSource[],
  opts: WritePakOptions,
  ctx: { mountPoint: string; priority: number; compress: CompressOptions; previous: PreviousPak | undefined; sealed: boolean; stats: CookedStats },
): Promise<WritePakResult> {
  const { mountPoint, priority, compress, previous, sealed, stats } = ctx;
  const seal = sealed ? opts.previousSeal! : undefined;
  return withAtomicFile(out, async (fh) => {
    const w = new PositionalOut(fh);
    try {
      const entries: PakEntry[] = [];
      // This pak's seal: per entry, the checked hash of the cooked file its blocks came from (else 0).
      // (A typed array, not a BigInt object per entry: at a million entries that was ~20 MB of heap.)
      const cookedOf = new BigUint64Array(sorted.length);
      /** The previous pak's entry that may serve source `s` (checked at its turn, in order), if any. */
      const candidate = (s: PakSource): PakEntry | undefined =>
        previous !== undefined && s.kind === 'cooked' && s.cookedXxh64 !== undefined && s.bytes === undefined ? previous.entry(s.path) : undefined;
      // The previous pak's compressed entries serve only when it was compressed as this one is.
      const vouched = opts.previousCompression;
      const compressedAlike =
        previous !== undefined && vouched !== undefined && vouched.tocHash === previous.tocHash && vouched.compression === compressionId(compress);
      /** The previous pak's entry that may serve a file or bytes source: same path and raw hash. */
      const compressedCandidate = (s: PakSource): PakEntry | undefined => {
        if (!compressedAlike || (s.kind !== 'file' && s.kind !== 'bytes') || s.xxh64 === undefined) return undefined;
        const e = previous!.entry(s.path);
        return e && e.xxh64 === s.xxh64 && (s.kind === 'file' || e.rawSize === s.data.byteLength) ? e : undefined;
      };
      // Read-ahead of small cooked files the previous pak does not serve: a failed read surfaces when its entry's turn comes.
      const ahead = new Map<number, Promise<LoadedCooked | undefined>>();
      // The buffers small files are read into, reused: not a fresh ArrayBuffer per file (552k of them at a million assets).
      const pool = new BufferPool(POOLED_READ, POOLED_KEEP);
      let nextAhead = 0;
      const prefetch = (upTo: number): void => {
        for (; nextAhead <= upTo && nextAhead < sorted.length; nextAhead++) {
          const s = sorted[nextAhead];
          // Held bytes with their hash are checked at their turn, synchronously (loadHeld).
          if (s.kind !== 'cooked' || candidate(s) !== undefined || (s.bytes !== undefined && s.cookedXxh64 !== undefined)) continue;
          const p = loadCooked(s, undefined, stats, pool);
          p.catch(() => {});
          ahead.set(nextAhead, p);
        }
      };
      // Stored bytes copied from the previous pak and not yet queued: neighbours there are
      // neighbours here (both in path order), so a run of unchanged entries within one read window
      // goes out as one write, checked entry by entry, with no promise per entry.
      let run: Uint8Array | undefined;
      const flushRun = async (): Promise<void> => {
        if (run === undefined) return;
        const r = run;
        run = undefined;
        await w.write(r);
      };
      for (let i = 0; i < sorted.length; i++) {
        const s = sorted[i];
        let e: PakEntry;
        let prev: PakEntry | undefined;
        let data: Uint8Array | undefined;
        let same: boolean | undefined;
        let prevC: PakEntry | undefined;
        let dataC: Uint8Array | undefined;
        let sameC: boolean | undefined;
        if (seal) {
          // The seal vouches for the entry (its data is checked as a whole at the end): the cooked
          // file it came from is this source's, or it was compressed here from raw bytes of this hash.
          const k = previous!.entryIndex(s.path);
          const vouched = k < 0 ? undefined : seal.cooked[k];
          if (s.kind === 'cooked' && s.cookedXxh64 !== undefined && s.bytes === undefined && vouched !== undefined && vouched !== 0n && vouched === s.cookedXxh64) {
            prev = previous!.entryAt(k);
            data = previous!.read(prev.offset, prev.storedSize);
            same = data !== undefined;
          } else if (s.kind === 'cooked') {
            // Not the same cooked file: read at its turn (like a candidate that did not match).
            prev = candidate(s);
          } else if (vouched === 0n && compressedAlike && (s.kind === 'file' || s.kind === 'bytes') && s.xxh64 !== undefined) {
            const c = previous!.entryAt(k);
            if (c.xxh64 === s.xxh64 && (s.kind === 'file' || c.rawSize === s.data.byteLength)) {
              prevC = c;
              dataC = previous!.read(c.offset, c.storedSize);
              sameC = dataC !== undefined;
            }
          }
        } else {
          prev = candidate(s);
          data = prev && previous!.read(prev.offset, prev.storedSize);
          same = prev && data && previous!.matches(prev, data, (s as { cookedXxh64: bigint }).cookedXxh64);
          prevC = same ? undefined : compressedCandidate(s);
          dataC = prevC && previous!.read(prevC.offset, prevC.storedSize);
          sameC = prevC && dataC && previous!.holdsRaw(prevC, dataC, (s as { xxh64: bigint }).xxh64);
        }
        if (same || sameC) {
          const from = same ? prev! : prevC!;
          const bytes = same ? data! : dataC!;
          const offset = w.pos + (run?.byteLength ?? 0);
          if (run !== undefined && run.buffer === bytes.buffer && run.byteOffset + run.byteLength === bytes.byteOffset) run = new Uint8Array(run.buffer, run.byteOffset, run.byteLength + bytes.byteLength);
          else {
            await flushRun();
            run = bytes;
          }
          if (same) stats.reused++;
          else stats.reusedCompressed++;
          e = { path: s.path, offset, storedSize: from.storedSize, rawSize: from.rawSize, xxh64: from.xxh64, method: from.method, blockSize: BLOCK_SIZE, blockSizes: from.method === 1 ? from.blockSizes : [] };
          entries.push(e);
          cookedOf[i] = same ? (s as { cookedXxh64: bigint }).cookedXxh64 : 0n;
          opts.onEntry?.(e, i, sorted.length);
          continue;
        }
        if (run !== undefined) await flushRun();
        prefetch(i + PREFETCH_AHEAD);
        // Most of a cold cook's entries: held bytes, appended with no promise (PositionalOut.append).
        const held = prev ? undefined : loadHeld(s);
        if (held) {
          const offset = w.pos;
          const data = held.bytes.subarray(held.header.dataOffset);
          if (!w.append(data)) await w.write(data);
          e = cookedEntry(s.path, offset, held.header);
          cookedOf[i] = (s as { cookedXxh64: bigint }).cookedXxh64;
          entries.push(e);
          opts.onEntry?.(e, i, sorted.length);
          continue;
        }
        switch (s.kind) {
          case 'cooked': {
            // A candidate that did not match (changed, or damaged in the previous pak) is read here, at its turn.
            const loaded = prev ? await loadCooked(s, data ? prev : undefined, stats, pool) : await ahead.get(i);
            ahead.delete(i);
            e = await writeCooked(w, s, loaded, pool);
            // Checked against this hash on its way in (loadCooked, writeCooked).
            cookedOf[i] = s.cookedXxh64 ?? 0n;
            break;
          }
          case 'file':
            e = await writeFileSource(w, s.path, s.file, compress, pool);
            cookedOf[i] = 0n;
            break;
          case 'bytes':
            e = await writeBytes(w, s.path, s.data, compress, s.compressed);
            cookedOf[i] = 0n;
            break;
          case 'tombstone':
            e = { path: s.path, offset: 0, storedSize: 0, rawSize: 0, xxh64: 0n, method: 2, blockSize: BLOCK_SIZE, blockSizes: [] };
            cookedOf[i] = 0n;
            break;
        }
        entries.push(e);
        opts.onEntry?.(e, i, sorted.length);
      }
      await flushRun();
      // Every byte of the previous pak's data, copied or not, hashed to what its seal says: else it was damaged since.
      if (seal && !previous!.sealHolds()) throw SEAL_BROKEN;
      const data = await w.dataSeal();
      const toc: PakToc = { mountPoint, priority, baseTocHash: opts.patch?.baseTocHash ?? 0n, entries };
      const tocBytes = encodeToc(toc);
      const tocOffset = w.pos;
      const tocHash = xxh64(tocBytes);
      await w.write(tocBytes);
      await w.write(encodeFooter(tocHash));
      const size = w.pos;
      await w.write(encodeHeader({ entryCount: entries.length, flags: opts.patch ? PAK_FLAG_PATCH : 0, tocOffset, tocSize: tocBytes.byteLength }), 0);
      await w.flush();
      // A file source rewritten as stored may have left compressed bytes past the end.
      await fh.truncate(size);
      const newSeal = data && data.end === tocOffset ? { tocHash, dataEnd: tocOffset, dataXxh64: data.xxh64, cooked: cookedOf } : undefined;
      return { file: out, toc, tocHash, size, ...stats, ...(newSeal ? { seal: newSeal } : {}) };
    } catch (e) {
      // Let queued writes settle before withAtomicFile closes and removes the temp file.
      await w.settle();
      throw e;
    }
  });
}
