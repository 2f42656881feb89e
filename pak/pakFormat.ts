/**
 * The pak byte layout of FORMAT.md "Pak": header, table of contents (TOC) and footer, plus the
 * rules shared by the writer, the reader and the mounter (virtual paths, path byte order, mount
 * points, priority order).
 *
 * Per-entry tail by method (FORMAT.md leaves the tombstone's fields open, so this fixes them):
 * - 0 stored: u32 blockSize (65,536); storedSize == rawSize; the bytes are the raw bytes.
 * - 1 DEFLATE: u32 blockSize, u32 blockCount == ceil(rawSize / 65,536), u32 per block, each
 *   at most maxStoredBlockSize of its raw size (a bound a reader can allocate for).
 * - 2 tombstone: offset 0, storedSize 0, rawSize 0, xxh64 0, u32 blockSize 65,536.
 */
import { errors, isLuminaError } from '../src/errors.js';
import { BinaryReader } from '../src/format/BinaryReader.js';
import { BinaryWriter } from '../src/format/BinaryWriter.js';
import { BLOCK_SIZE, blockCountFor, maxStoredBlockSize, rawBlockSize } from '../src/format/deflateBlocks.js';

export const PAK_MAGIC = 0x4b41504c; // 'LPAK'
export const PAK_VERSION = 1;
export const PAK_HEADER_SIZE = 32;
export const PAK_FOOTER_SIZE = 16;
export const PAK_FLAG_PATCH = 0x1;
export const METHOD_TOMBSTONE = 2;
/** Smallest possible TOC entry: FString of "/x" (6) + 4 u64 (32) + method (1) + blockSize (4). */
const MIN_ENTRY_BYTES = 43;

export type PakMethod = 0 | 1 | 2;

export interface PakEntry {
  /** Path inside the pak, as stored (relative to the mount point). */
  path: string;
  offset: number;
  storedSize: number;
  rawSize: number;
  xxh64: bigint;
  method: PakMethod;
  blockSize: number;
  /** Stored size of each block; only for method 1, empty otherwise. */
  blockSizes: number[];
}

export interface PakToc {
  mountPoint: string;
  priority: number;
  /** For a patch pak, the base release's TOC hash (see `baseTocHash` in releaseManifest.ts); else 0. */
  baseTocHash: bigint;
  entries: PakEntry[];
}

export interface PakHeader {
  entryCount: number;
  flags: number;
  tocOffset: number;
  tocSize: number;
}

const encoder = new TextEncoder();

/**
 * Order two paths by their UTF-8 bytes, the order FORMAT.md sorts the TOC in. JS string order
 * compares UTF-16 code units, which differs from code point (= UTF-8 byte) order only where a
 * surrogate meets a unit above it: up to the first differing unit below U+D800 the two orders
 * agree, so only those cases (and a prefix ending in a surrogate) are compared as bytes. Encoding
 * both strings for every comparison made sorting a 10k-entry pak's paths ~0.25 s.
 */
export function comparePathBytes(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 || y >= 0xd800) return byteCompare(a, b);
    return x < y ? -1 : 1;
  }
  if (a.length === b.length) return 0;
  // One is a prefix of the other: the shorter goes first, unless the cut splits a surrogate pair
  // (a lone surrogate encodes as U+FFFD).
  const last = n > 0 ? a.charCodeAt(n - 1) : 0;
  if (last >= 0xd800 && last <= 0xdbff) return byteCompare(a, b);
  return a.length < b.length ? -1 : 1;
}

function byteCompare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * True when `p` is certainly a valid virtual path (checked without encoding it): "/" then
 * non-empty segments, none "." or "..", no backslash or NUL, and short enough that its UTF-8
 * cannot pass 65,535 bytes. False means "ask virtualPathProblem", not "invalid".
 */
function plainVirtualPath(p: string): boolean {
  const n = p.length;
  if (n < 2 || n > 21_845 || p.charCodeAt(0) !== 0x2f) return false;
  let segStart = 1;
  for (let i = 1; i <= n; i++) {
    const c = i < n ? p.charCodeAt(i) : 0x2f;
    if (c === 0x5c || c === 0) return false;
    if (c !== 0x2f) continue;
    const len = i - segStart;
    if (len === 0) return false;
    if (p.charCodeAt(segStart) === 0x2e && (len === 1 || (len === 2 && p.charCodeAt(segStart + 1) === 0x2e))) return false;
    segStart = i + 1;
  }
  return true;
}

/**
 * plainVirtualPath over units[from..to) of packed paths (src/util/stringOrder.ts): a pak's million
 * paths are checked in one pass over one array, not a walk through a million heap strings.
 */
export function plainVirtualPathUnits(units: Uint8Array | Uint16Array, from: number, to: number): boolean {
  const n = to - from;
  if (n < 2 || n > 21_845 || units[from] !== 0x2f) return false;
  let segStart = from + 1;
  for (let i = from + 1; i <= to; i++) {
    const c = i < to ? units[i] : 0x2f;
    if (c === 0x5c || c === 0) return false;
    if (c !== 0x2f) continue;
    const len = i - segStart;
    if (len === 0) return false;
    if (units[segStart] === 0x2e && (len === 1 || (len === 2 && units[segStart + 1] === 0x2e))) return false;
    segStart = i + 1;
  }
  return true;
}

/** Why `p` is not a valid virtual path, or undefined when it is. */
export function virtualPathProblem(p: string): string | undefined {
  if (plainVirtualPath(p)) return undefined;
  if (!p.startsWith('/')) return 'does not start with "/"';
  if (p.includes('\\')) return 'contains a backslash';
  if (p.includes('\0')) return 'contains a NUL character';
  if (encoder.encode(p).byteLength > 65_535) return 'is longer than 65,535 bytes';
  const segments = p.slice(1).split('/');
  for (const s of segments) {
    if (s === '') return 'has an empty segment';
    if (s === '..') return 'has a ".." segment';
    if (s === '.') return 'has a "." segment';
  }
  return undefined;
}

/** Throw PAK_PATH_INVALID unless `p` is a valid virtual path. `file` is the pak (or source) it is for. */
export function validateVirtualPath(p: string, file: string): void {
  const why = virtualPathProblem(p);
  if (why !== undefined) throw errors.pakPathInvalid(file, p, why);
}

/** A mount point is "/" or a valid virtual path ending in "/", e.g. "/Game/". */
export function validateMountPoint(mp: string, file: string): void {
  if (mp === '/') return;
  const why = mp.endsWith('/') ? virtualPathProblem(mp.slice(0, -1)) : 'does not end with "/"';
  if (why !== undefined) throw errors.pakPathInvalid(file, mp, `is not a valid mount point: ${why}`);
}

/** The full virtual path of an entry: mount point "/Game/" + entry "/Maps/A.lasset" = "/Game/Maps/A.lasset". */
export function mountedPath(mountPoint: string, entryPath: string): string {
  return mountPoint === '/' ? entryPath : mountPoint.slice(0, -1) + entryPath;
}

/** The entry path for a full virtual path under `mountPoint`, or undefined when it is outside it. */
export function entryPathUnder(mountPoint: string, fullPath: string): string | undefined {
  if (mountPoint === '/') return fullPath;
  return fullPath.startsWith(mountPoint) ? fullPath.slice(mountPoint.length - 1) : undefined;
}

/**
 * Indices of `items` from the winner down: higher priority first; among equal priorities the one
 * listed later wins, the way a later mount overrides an earlier one.
 */
export function priorityOrder(items: readonly { priority: number }[]): number[] {
  return items.map((_, i) => i).sort((a, b) => items[b].priority - items[a].priority || b - a);
}

export function encodeHeader(h: PakHeader): Uint8Array {
  return new BinaryWriter(PAK_HEADER_SIZE).u32(PAK_MAGIC).u32(PAK_VERSION).u32(h.entryCount).u32(h.flags).u64(h.tocOffset).u64(h.tocSize).finish().slice();
}

export function encodeFooter(tocHash: bigint): Uint8Array {
  return new BinaryWriter(PAK_FOOTER_SIZE).u64(tocHash).u32(PAK_MAGIC).u32(0).finish().slice();
}

/**
 * The TOC's bytes. Sized first, then written with a DataView and ASCII paths byte by byte: the
 * growable writer (an encode and three BigInts per entry) took ~20 µs an entry, most of writing a
 * rebuilt 10k-entry pak's TOC. Anything unusual (an offset or size that is not a safe integer, a
 * path too long for an FString) goes through the writer, which says what is wrong.
 */
export function encodeToc(toc: PakToc): Uint8Array {
  const mount = Buffer.from(toc.mountPoint, 'utf8');
  if (mount.byteLength > 65_535 || !Number.isInteger(toc.priority)) return encodeTocPlain(toc);
  const n = toc.entries.length;
  const pathBytes = new Array<number>(n);
  let size = 4 + mount.byteLength + 4 + 8;
  for (let i = 0; i < n; i++) {
    const e = toc.entries[i];
    const len = utf8Length(e.path);
    if (len > 65_535 || !safeU64(e.offset) || !safeU64(e.storedSize) || !safeU64(e.rawSize) || !safeU32(e.blockSize)) return encodeTocPlain(toc);
    pathBytes[i] = len;
    size += 4 + len + 37 + (e.method === 1 ? 4 + 4 * e.blockSizes.length : 0);
  }
  const out = Buffer.alloc(size);
  const v = new DataView(out.buffer, out.byteOffset, out.byteLength);
  let p = 0;
  const u64 = (x: number) => {
    v.setUint32(p, x % TWO_32, true);
    v.setUint32(p + 4, Math.floor(x / TWO_32), true);
    p += 8;
  };
  v.setUint32(p, mount.byteLength, true);
  out.set(mount, p + 4);
  p += 4 + mount.byteLength;
  v.setInt32(p, toc.priority, true);
  v.setBigUint64(p + 4, toc.baseTocHash, true);
  p += 12;
  for (let i = 0; i < n; i++) {
    const e = toc.entries[i];
    const len = pathBytes[i];
    v.setUint32(p, len, true);
    p += 4;
    if (len === e.path.length) for (let k = 0; k < len; k++) out[p + k] = e.path.charCodeAt(k);
    else out.write(e.path, p, 'utf8');
    p += len;
    u64(e.offset);
    u64(e.storedSize);
    u64(e.rawSize);
    v.setBigUint64(p, e.xxh64, true);
    out[p + 8] = e.method;
    v.setUint32(p + 9, e.blockSize, true);
    p += 13;
    if (e.method === 1) {
      const bs = e.blockSizes;
      v.setUint32(p, bs.length, true);
      p += 4;
      for (let k = 0; k < bs.length; k++) {
        v.setUint32(p, bs[k], true);
        p += 4;
      }
    }
  }
  return new Uint8Array(out.buffer, out.byteOffset, size);
}

const safeU64 = (x: number): boolean => Number.isSafeInteger(x) && x >= 0;
const safeU32 = (x: number): boolean => Number.isInteger(x) && x >= 0 && x < TWO_32;

/** UTF-8 length of `s`: its length when it is all ASCII (no encoding). */
function utf8Length(s: string): number {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return Buffer.byteLength(s, 'utf8');
  return s.length;
}

/** encodeToc through the growable writer: the reference form, and the one that reports bad values. */
export function encodeTocPlain(toc: PakToc): Uint8Array {
  const w = new BinaryWriter(64 + toc.entries.length * 64);
  w.fstring(toc.mountPoint).i32(toc.priority).u64(toc.baseTocHash);
  for (const e of toc.entries) {
    w.fstring(e.path).u64(e.offset).u64(e.storedSize).u64(e.rawSize).u64(e.xxh64).u8(e.method).u32(e.blockSize);
    if (e.method === 1) {
      w.u32(e.blockSizes.length);
      for (const s of e.blockSizes) w.u32(s);
    }
  }
  return w.finish().slice();
}

/** BinaryReader names fields but speaks PACKAGE_*; a pak reports PAK_INVALID with the same location. */
function asPakError(e: unknown, file: string): unknown {
  if (isLuminaError(e) && (e.code === 'PACKAGE_TRUNCATED' || e.code === 'PACKAGE_INVALID')) {
    const field = e.field ?? 'toc';
    const why = e.message.startsWith(`${field}: `) ? e.message.slice(field.length + 2) : e.message;
    return errors.pakInvalid(file, field, why, e.offset);
  }
  return e;
}

/** Parse and validate the 32-byte header against the file size. */
export function parseHeader(bytes: Uint8Array, file: string, fileSize: number): PakHeader {
  if (fileSize < PAK_HEADER_SIZE + PAK_FOOTER_SIZE) {
    throw errors.pakInvalid(file, 'header', `file of ${fileSize} bytes is shorter than a header and footer (${PAK_HEADER_SIZE + PAK_FOOTER_SIZE})`, 0);
  }
  try {
    const r = new BinaryReader(bytes, file, 0, fileSize);
    const magic = r.u32('magic');
    if (magic !== PAK_MAGIC) throw errors.pakInvalid(file, 'magic', `0x${magic.toString(16).padStart(8, '0')} is not LPAK`, 0);
    const version = r.u32('version');
    if (version !== PAK_VERSION) throw errors.pakInvalid(file, 'version', `version ${version} is not supported (this reads 1)`, 4);
    const entryCount = r.u32('entryCount');
    const flags = r.u32('flags');
    if ((flags & ~PAK_FLAG_PATCH) !== 0) throw errors.pakInvalid(file, 'flags', `unknown flag bits 0x${flags.toString(16)}`, 12);
    const tocOffset = r.u64num('tocOffset');
    const tocSize = r.u64num('tocSize');
    if (tocOffset < PAK_HEADER_SIZE) throw errors.pakInvalid(file, 'tocOffset', `${tocOffset} points into the header`, 16);
    if (tocOffset + tocSize + PAK_FOOTER_SIZE !== fileSize) {
      throw errors.pakInvalid(file, 'tocOffset', `TOC at ${tocOffset} of ${tocSize} bytes plus the footer does not end at the file size ${fileSize}`, 16);
    }
    if (entryCount > tocSize / MIN_ENTRY_BYTES) {
      throw errors.pakInvalid(file, 'entryCount', `${entryCount} entries cannot fit in a TOC of ${tocSize} bytes`, 8);
    }
    return { entryCount, flags, tocOffset, tocSize };
  } catch (e) {
    throw asPakError(e, file);
  }
}

/** Parse and validate the footer; returns the TOC hash it records. */
export function parseFooter(bytes: Uint8Array, file: string, at: number): bigint {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = v.getUint32(8, true);
  if (magic !== PAK_MAGIC) throw errors.pakInvalid(file, 'footer.magic', `0x${magic.toString(16).padStart(8, '0')} is not LPAK`, at + 8);
  const zero = v.getUint32(12, true);
  if (zero !== 0) throw errors.pakInvalid(file, 'footer.reserved', `${zero} is not 0`, at + 12);
  return v.getBigUint64(0, true);
}

/**
 * Parse the TOC bytes (already hash-checked) and validate every entry against the data region
 * [32, tocOffset): paths valid and strictly ascending by bytes, sizes consistent with the method,
 * block sizes adding up to storedSize.
 */
export function parseToc(bytes: Uint8Array, file: string, header: PakHeader, fileSize: number): PakToc {
  const fast = parseTocFast(bytes, header);
  if (fast !== undefined) return fast;
  // Something is wrong: the checking parser below says what and where.
  try {
    const r = new BinaryReader(bytes, file, header.tocOffset, fileSize);
    const mountAt = r.offset;
    const mountPoint = r.fstring('mountPoint');
    try {
      validateMountPoint(mountPoint, file);
    } catch {
      throw errors.pakInvalid(file, 'mountPoint', `"${mountPoint}" is not "/" or a virtual path ending in "/"`, mountAt);
    }
    const priority = r.i32('priority');
    const baseTocHash = r.u64('baseTocHash');
    if ((header.flags & PAK_FLAG_PATCH) === 0 && baseTocHash !== 0n) {
      throw errors.pakInvalid(file, 'baseTocHash', 'is set but the pak is not flagged as a patch', r.offset - 8);
    }
    const entries: PakEntry[] = [];
    let prev: Buffer | undefined;
    for (let i = 0; i < header.entryCount; i++) {
      const at = r.offset;
      const f = (name: string) => `entries[${i}].${name}`;
      const p = r.fstring(f('path'));
      validateVirtualPath(p, file);
      const pb = Buffer.from(p, 'utf8');
      if (prev !== undefined && Buffer.compare(prev, pb) >= 0) {
        throw errors.pakInvalid(file, f('path'), `"${p}" is not after the previous entry in byte order (duplicate or unsorted)`, at);
      }
      prev = pb;
      const offAt = r.offset;
      const offset = r.u64num(f('offset'));
      const storedSize = r.u64num(f('storedSize'));
      const rawSize = r.u64num(f('rawSize'));
      const xxh64 = r.u64(f('xxh64'));
      const methodAt = r.offset;
      const method = r.u8(f('method'));
      const blockSize = r.u32(f('blockSize'));
      if (method > 2) throw errors.pakInvalid(file, f('method'), `method ${method} is not 0, 1 or 2`, methodAt);
      if (blockSize !== BLOCK_SIZE) throw errors.pakInvalid(file, f('blockSize'), `${blockSize} is not ${BLOCK_SIZE}`, methodAt + 1);
      const blockSizes: number[] = [];
      if (method === METHOD_TOMBSTONE) {
        if (offset !== 0 || storedSize !== 0 || rawSize !== 0 || xxh64 !== 0n) {
          throw errors.pakInvalid(file, f('method'), 'a tombstone must have offset, sizes and hash 0', offAt);
        }
      } else {
        if (offset < PAK_HEADER_SIZE || offset + storedSize > header.tocOffset) {
          throw errors.pakInvalid(file, f('offset'), `stored bytes ${offset}..${offset + storedSize} lie outside the data region ${PAK_HEADER_SIZE}..${header.tocOffset}`, offAt);
        }
        if (method === 0 && storedSize !== rawSize) {
          throw errors.pakInvalid(file, f('storedSize'), `a stored entry holds ${storedSize} bytes but rawSize is ${rawSize}`, offAt + 8);
        }
        if (method === 1) {
          const countAt = r.offset;
          const count = r.u32(f('blockCount'));
          if (count !== blockCountFor(rawSize) || count === 0) {
            throw errors.pakInvalid(file, f('blockCount'), `${count} blocks, but rawSize ${rawSize} needs ${blockCountFor(rawSize)}`, countAt);
          }
          if (count * 4 > r.remaining) throw errors.pakInvalid(file, f('blockSizes'), `${count} block sizes run past the end of the TOC`, r.offset);
          let sum = 0;
          for (let b = 0; b < count; b++) {
            const s = r.u32(f(`blockSizes[${b}]`));
            if (s === 0) throw errors.pakInvalid(file, f(`blockSizes[${b}]`), 'a DEFLATE block cannot be empty', r.offset - 4);
            const most = maxStoredBlockSize(rawBlockSize(rawSize, b));
            if (s > most) throw errors.pakInvalid(file, f(`blockSizes[${b}]`), `${s} bytes is more than a block of ${rawBlockSize(rawSize, b)} raw bytes can take (${most})`, r.offset - 4);
            blockSizes.push(s);
            sum += s;
          }
          if (sum !== storedSize) throw errors.pakInvalid(file, f('blockSizes'), `blocks add up to ${sum} bytes but storedSize is ${storedSize}`, countAt);
        }
      }
      entries.push({ path: p, offset, storedSize, rawSize, xxh64, method: method as PakMethod, blockSize, blockSizes });
    }
    if (r.remaining !== 0) throw errors.pakInvalid(file, 'toc', `${r.remaining} bytes left over after ${header.entryCount} entries`, r.offset);
    return { mountPoint, priority, baseTocHash, entries };
  } catch (e) {
    throw asPakError(e, file);
  }
}

// ignoreBOM: a path that starts with U+FEFF keeps it, as BinaryReader.fstring reads it.
const tocDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const TWO_32 = 2 ** 32;

/**
 * parseToc's common case: a TOC that passes every one of parseToc's checks, read with a DataView
 * and no per-field names (building ~10 field-name strings per entry made opening a 10k-entry pak
 * ~0.1 s). Returns undefined at the first thing parseToc would refuse, so parseToc reports it.
 */
function parseTocFast(bytes: Uint8Array, header: PakHeader): PakToc | undefined {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = bytes.byteLength;
  let p = 0;
  const str = (): string | undefined => {
    if (p + 4 > end) return undefined;
    const len = v.getUint32(p, true);
    if (len > 65_535 || p + 4 + len > end) return undefined;
    p += 4 + len;
    try {
      return tocDecoder.decode(bytes.subarray(p - len, p));
    } catch {
      return undefined;
    }
  };
  /** A u64 that fits a JS number exactly, else -1. */
  const u64num = (): number => {
    const lo = v.getUint32(p, true);
    const hi = v.getUint32(p + 4, true);
    p += 8;
    return hi > 0x1fffff ? -1 : hi * TWO_32 + lo;
  };
  const mountPoint = str();
  if (mountPoint === undefined || (mountPoint !== '/' && (!mountPoint.endsWith('/') || virtualPathProblem(mountPoint.slice(0, -1)) !== undefined))) return undefined;
  if (p + 12 > end) return undefined;
  const priority = v.getInt32(p, true);
  const baseTocHash = v.getBigUint64(p + 4, true);
  p += 12;
  if ((header.flags & PAK_FLAG_PATCH) === 0 && baseTocHash !== 0n) return undefined;
  const entries: PakEntry[] = new Array(header.entryCount);
  let prevAt = -1;
  let prevLen = 0;
  for (let i = 0; i < header.entryCount; i++) {
    const pathAt = p + 4;
    const path = str();
    if (path === undefined || virtualPathProblem(path) !== undefined) return undefined;
    const pathLen = p - pathAt;
    if (prevAt >= 0 && compareBytes(bytes, prevAt, prevLen, pathAt, pathLen) >= 0) return undefined;
    prevAt = pathAt;
    prevLen = pathLen;
    if (p + 37 > end) return undefined;
    const offset = u64num();
    const storedSize = u64num();
    const rawSize = u64num();
    if (offset < 0 || storedSize < 0 || rawSize < 0) return undefined;
    const xxh64 = v.getBigUint64(p, true);
    const method = v.getUint8(p + 8);
    const blockSize = v.getUint32(p + 9, true);
    p += 13;
    if (method > 2 || blockSize !== BLOCK_SIZE) return undefined;
    let blockSizes: number[] = [];
    if (method === METHOD_TOMBSTONE) {
      if (offset !== 0 || storedSize !== 0 || rawSize !== 0 || xxh64 !== 0n) return undefined;
    } else {
      if (offset < PAK_HEADER_SIZE || offset + storedSize > header.tocOffset) return undefined;
      if (method === 0 && storedSize !== rawSize) return undefined;
      if (method === 1) {
        if (p + 4 > end) return undefined;
        const count = v.getUint32(p, true);
        p += 4;
        if (count !== blockCountFor(rawSize) || count === 0 || count * 4 > end - p) return undefined;
        blockSizes = new Array(count);
        let sum = 0;
        for (let b = 0; b < count; b++) {
          const s = v.getUint32(p, true);
          p += 4;
          if (s === 0 || s > maxStoredBlockSize(rawBlockSize(rawSize, b))) return undefined;
          blockSizes[b] = s;
          sum += s;
        }
        if (sum !== storedSize) return undefined;
      }
    }
    entries[i] = { path, offset, storedSize, rawSize, xxh64, method: method as PakMethod, blockSize, blockSizes };
  }
  if (p !== end) return undefined;
  return { mountPoint, priority, baseTocHash, entries };
}

/** Compare two byte ranges of one buffer (unsigned, lexicographic; a prefix first). */
function compareBytes(b: Uint8Array, a0: number, aLen: number, b0: number, bLen: number): number {
  const n = Math.min(aLen, bLen);
  for (let i = 0; i < n; i++) {
    const d = b[a0 + i] - b[b0 + i];
    if (d !== 0) return d;
  }
  return aLen - bLen;
}
