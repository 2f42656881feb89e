/**
 * The incremental cache, `Intermediates/AssetRegistry.assetdb`. Binary because the warm no-op scan
 * has to load it in a fraction of a `find` over the project: GUIDs are stored once in a table and
 * referenced by index, class names and mount folders too, paths relative to their mount.
 *
 * Layout (little-endian):
 *   header, 16 bytes: u32 magic `LADB`, u32 format version, u64 body length
 *   body:   u32 guidCount, 16 bytes each
 *           u32 stringCount, (u16 length + UTF-8) each: class names, aliases, folders
 *           u32 mountCount, per mount u32 alias string, u32 dir string
 *           u32 entryCount, per entry:
 *             u32 mount, u16 relLength + UTF-8 rel path (`/`-separated), f64 mtimeMs, f64 size,
 *             8 bytes xxh64, u32 guid, u32 class string, u32 flags, u8 kind (0 package, 1 text),
 *             text only: f64 sidecar mtimeMs, f64 sidecar size;
 *             u32 depCount, per dependency u32 (guid index | 0x80000000 when Soft)
 *   trailer: u64, the first 8 bytes of the body's SHA-1 (see `checksum`)
 *
 * Anything that does not match (magic, version, length, checksum, an index out of range) makes the
 * whole file untrusted: `decodeRegistryCache` throws CACHE_INVALID and the caller rebuilds.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { errors } from '../errors.js';
import { DependencyType } from '../format/packageTypes.js';
import type { AssetDependency, AssetKind, AssetRecord } from './types.js';
import type { FileStat } from './walkMount.js';
import { dependencyList } from './dependencyList.js';
import { hexInto } from '../util/hex.js';
import { sortedByString } from '../util/stringOrder.js';

export const CACHE_FILE_NAME = 'AssetRegistry.assetdb';
const MAGIC = 0x4244414c; // 'LADB'
/** 2: the checksum is SHA-1's (was xxh64). */
export const CACHE_FORMAT_VERSION = 2;
const HEADER = 16;
const SOFT_BIT = 0x80000000;

/** What is written: a file's record plus, for a text asset, the sidecar's stat it was read with. */
export interface CacheRecord {
  record: AssetRecord;
  sidecar?: FileStat;
}

/**
 * A loaded cache entry. Loading builds only what a warm scan compares (file, stat, GUID, mount);
 * the full record is decoded from the cache bytes on first use (`thawRecord`), so a no-op scan of
 * a large project allocates a few objects per file instead of a dozen. `gen` and `live` are the
 * registry's bookkeeping, allocated here so a load makes one object per file.
 */
export interface CacheEntry {
  file: string;
  guid: string;
  mount: string;
  /** The mount folder the file was found under: same file + alias + folder means same virtual path. */
  mountDir: string;
  kind: AssetKind;
  mtimeMs: number;
  size: number;
  /** Text assets: the sidecar's stat when it was read. */
  sidecar: FileStat | undefined;
  /** The full record, once built. Its mtimeMs is kept equal to `mtimeMs`. */
  rec: AssetRecord | undefined;
  /** Where the entry's bytes start in `image`, for thawing. */
  at: number;
  image: CacheImage | undefined;
  gen: number;
  live: boolean;
  /**
   * Built from a row of the snapshot the registry loaded, GUID unchanged. While every live entry
   * is such a row (and the snapshot's GUIDs are distinct) no two live entries share a GUID, so a
   * scan can count the assets without building the GUID map (AssetRegistry's `pending`).
   */
  snapshot: boolean;
}

/** The decoded cache file, kept while any entry is not thawed yet. */
export interface CacheImage {
  bytes: Buffer;
  /** GUID strings by index, decoded on first use (`guidAt`): a warm no-op scan needs none. */
  guids: Array<string | undefined>;
  /** Where the GUID table's 16-byte entries start in `bytes`. */
  guidsAt: number;
  strings: string[];
  mounts: Array<{ alias: string; dir: string }>;
  depObjects: Array<AssetDependency | undefined>;
  /** Over `bytes`, made by the first `rowMatches` (a DataView read is cheaper than readDoubleLE). */
  view?: DataView;
}

/**
 * The checksum of a cache body or journal frame: the first 8 bytes of its SHA-1, little-endian.
 * Not xxh64 (what the rest of the format uses): the load is usually a process's first large
 * hash, and xxhash-wasm's first call runs in V8's baseline wasm tier for its whole length
 * (measured: 56-73 ms for a 5 MB cache, 0.7 ms once tiered up), while OpenSSL's SHA-1 takes ~3 ms
 * from the first call. Only corruption is guarded against, not an adversary.
 */
export function checksum(bytes: Uint8Array): bigint {
  return createHash('sha1').update(bytes).digest().readBigUInt64LE(0);
}

/**
 * Serialize entries (any order; output is sorted by file for stable bytes). `sealed: false` leaves
 * the checksum zero: for an image that goes from a read thread to the main thread, never to disk
 * (readPool.ts; decode it with `sealed: false` too).
 */
export function encodeRegistryCache(entries: Iterable<CacheRecord>, sealed = true): Buffer {
  const list = sortedByString([...entries], (e) => e.record.file);
  const guids = new Map<string, number>();
  const strings = new Map<string, number>();
  const mounts = new Map<string, { index: number; alias: number; dir: number; dirPath: string }>();
  const guidOf = (g: string) => {
    let i = guids.get(g);
    if (i === undefined) guids.set(g, (i = guids.size));
    return i;
  };
  const stringOf = (s: string) => {
    let i = strings.get(s);
    if (i === undefined) strings.set(s, (i = strings.size));
    return i;
  };
  // The mount folder is recovered from file and virtual path, so a record is stored as its path
  // relative to that folder and the cache never repeats the folder 50k times.
  // A record whose file does not end in its virtual path (never made by the registry) is left
  // out rather than stored with a wrong folder: the next scan simply reads it again.
  // Two passes over typed arrays, no object or Buffer per row: at a million assets the rows were
  // a few hundred MiB of garbage at the end of a cold scan.
  // Per row nothing is allocated but the relative path (a slice) and no Map is probed twice: at a
  // million rows a key string per row for the mount Map and a second GUID lookup per dependency
  // were ~40% of the encoder. Rows of one mount folder come in runs, so the last one is tried first.
  const n = list.length;
  const rels = new Array<string>(n);
  const rowMount = new Uint32Array(n);
  const rowGuid = new Uint32Array(n);
  const rowClass = new Uint32Array(n);
  const keep = new Uint8Array(n);
  /** Every kept row's dependencies' GUID indices (with the Soft bit), in row order. */
  const depRefs: number[] = [];
  let rowCount = 0;
  let rowBytes = 0;
  let lastMount: string | undefined;
  let lastDir: string | undefined;
  let last: { index: number; alias: number; dir: number; dirPath: string } | undefined;
  for (let i = 0; i < n; i++) {
    const r = list[i].record;
    const rel = r.virtualPath.slice(r.mount.length + 1);
    const relDisk = path.sep === '/' ? rel : rel.split('/').join(path.sep);
    if (!r.virtualPath.startsWith(`${r.mount}/`) || !r.file.endsWith(path.sep + relDisk)) continue;
    const dirPath = r.file.slice(0, r.file.length - relDisk.length - 1);
    let m = last;
    if (r.mount !== lastMount || dirPath !== lastDir) {
      const key = `${r.mount}\0${dirPath}`;
      m = mounts.get(key);
      if (!m) mounts.set(key, (m = { index: mounts.size, alias: stringOf(r.mount), dir: stringOf(dirPath), dirPath }));
      lastMount = r.mount;
      lastDir = dirPath;
      last = m;
    }
    const deps = r.dependencies;
    for (let k = 0; k < deps.length; k++) depRefs.push((guidOf(deps[k].guid) | (deps[k].type === DependencyType.Soft ? SOFT_BIT : 0)) >>> 0);
    keep[i] = 1;
    rels[i] = rel;
    rowMount[i] = m!.index;
    rowGuid[i] = guidOf(r.guid);
    rowClass[i] = stringOf(r.className);
    rowCount++;
    rowBytes += 4 + 2 + Buffer.byteLength(rel, 'utf8') + 8 + 8 + 8 + 4 + 4 + 4 + 1 + (r.kind === 'text' ? 16 : 0) + 4 + r.dependencies.length * 4;
  }

  const stringBufs: Buffer[] = [];
  let stringBytes = 0;
  for (const s of strings.keys()) {
    const b = Buffer.from(s, 'utf8');
    stringBufs.push(b);
    stringBytes += 2 + b.byteLength;
  }
  const size = 4 + guids.size * 16 + 4 + stringBytes + 4 + mounts.size * 8 + 4 + rowBytes;
  const out = Buffer.allocUnsafe(HEADER + size + 8);
  let p = HEADER;
  p = out.writeUInt32LE(guids.size, p);
  // Hex digits by table (hexInto), Buffer's codec only for what is not 32 lowercase digits: a call
  // into C++ per GUID, hash and path was a fifth of the encoder.
  for (const g of guids.keys()) p += g.length === 32 && hexInto(out, p, g) ? 16 : out.write(g, p, 16, 'hex');
  p = out.writeUInt32LE(stringBufs.length, p);
  for (const b of stringBufs) {
    p = out.writeUInt16LE(b.byteLength, p);
    p += b.copy(out, p);
  }
  p = out.writeUInt32LE(mounts.size, p);
  for (const m of mounts.values()) {
    p = out.writeUInt32LE(m.alias, p);
    p = out.writeUInt32LE(m.dir, p);
  }
  p = out.writeUInt32LE(rowCount, p);
  let d = 0;
  for (let i = 0; i < n; i++) {
    if (keep[i] === 0) continue;
    const e = list[i];
    const r = e.record;
    p = out.writeUInt32LE(rowMount[i], p);
    const rel = rels[i];
    const relLength = asciiInto(out, p + 2, rel) ? rel.length : out.write(rel, p + 2, 'utf8');
    out.writeUInt16LE(relLength, p);
    p += 2 + relLength;
    p = out.writeDoubleLE(r.mtimeMs, p);
    p = out.writeDoubleLE(r.size, p);
    const hash = r.hash.length === 16 ? r.hash : r.hash.padStart(16, '0');
    p += hash.length === 16 && hexInto(out, p, hash) ? 8 : out.write(hash, p, 8, 'hex');
    p = out.writeUInt32LE(rowGuid[i], p);
    p = out.writeUInt32LE(rowClass[i], p);
    p = out.writeUInt32LE(r.flags >>> 0, p);
    p = out.writeUInt8(r.kind === 'text' ? 1 : 0, p);
    if (r.kind === 'text') {
      p = out.writeDoubleLE(e.sidecar?.mtimeMs ?? -1, p);
      p = out.writeDoubleLE(e.sidecar?.size ?? -1, p);
    }
    const depCount = r.dependencies.length;
    p = out.writeUInt32LE(depCount, p);
    for (let k = 0; k < depCount; k++) p = out.writeUInt32LE(depRefs[d++], p);
  }
  if (p !== HEADER + size) throw new Error(`cache encoder wrote ${p - HEADER} of ${size} bytes`);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(CACHE_FORMAT_VERSION, 4);
  out.writeBigUInt64LE(BigInt(size), 8);
  out.writeBigUInt64LE(sealed ? checksum(out.subarray(HEADER, HEADER + size)) : 0n, HEADER + size);
  return out;
}

/** Write `s` at `at` when every character is ASCII (then its UTF-8 is its char codes); false, with whatever it wrote to be overwritten, when not. */
function asciiInto(b: Uint8Array, at: number, s: string): boolean {
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k);
    if (c > 0x7f) return false;
    b[at + k] = c;
  }
  return true;
}

/**
 * Parse and check a cache file's bytes. Every count, index and length is validated here, so a
 * thaw later never meets a bad byte. Throws CACHE_INVALID (naming `file`) on any mismatch.
 * `onEntry` also gets each entry's folder and file name apart (the registry's EntryTable keys on
 * them): rows are sorted by path, so a folder's rows come in a run and share one folder string,
 * and an entry's `file` is that folder's `dir + sep` joined to its name.
 */
export function decodeRegistryCache(bytes: Buffer, file: string, onEntry?: (dir: string, name: string, e: CacheEntry) => void, sealed = true): CacheEntry[] {
  const out: CacheEntry[] = [];
  readRows(bytes, file, sealed, (image, at, folder) => {
    const e = entryAt(image, at, folder.dirSep, false, rowName);
    out.push(e);
    onEntry?.(folder.dir, rowName.name, e);
  });
  return out;
}

/**
 * One folder's rows in a checked cache image (`indexRegistryCache`), in file order, which is name
 * order within a folder. `lazy` is true when every row is a package with an ASCII name under one
 * mount: such a folder can be matched against a listing byte by byte (`rowMatches`) without an
 * entry per row.
 */
export interface CacheFolderRows {
  dir: string;
  /** `dir + sep`. */
  dirSep: string;
  mountIndex: number;
  /** Byte offsets of the rows in the image. */
  rows: number[];
  lazy: boolean;
}

/** A checked cache image with its rows grouped by folder (nothing built per row). */
export interface IndexedCache {
  image: CacheImage;
  folders: CacheFolderRows[];
  rowCount: number;
  /** No two rows name the same GUID (the encoder stores each GUID once, so equal index = equal GUID). */
  distinctGuids: boolean;
}

/**
 * Check a cache file's bytes exactly as `decodeRegistryCache` does, but only group the rows by
 * folder: the warm open of a large project builds entries only for the folders something asks
 * about (`entryAt`). Throws CACHE_INVALID on any mismatch.
 */
export function indexRegistryCache(bytes: Buffer, file: string): IndexedCache {
  const folders: CacheFolderRows[] = [];
  let image: CacheImage | undefined;
  let rowCount = 0;
  let seen: Uint8Array | undefined;
  let distinctGuids = true;
  readRows(bytes, file, true, (img, at, folder, mountIndex, packageAscii, guidIndex) => {
    if (image === undefined) {
      image = img;
      seen = new Uint8Array(img.guids.length);
    }
    let f = folder.rows;
    if (f === undefined) {
      f = folder.rows = { dir: folder.dir, dirSep: folder.dirSep, mountIndex, rows: [], lazy: true };
      folders.push(f);
    }
    f.rows.push(at);
    if (!packageAscii || mountIndex !== f.mountIndex) f.lazy = false;
    if (seen![guidIndex] === 1) distinctGuids = false;
    seen![guidIndex] = 1;
    rowCount++;
  });
  image ??= emptyImage(bytes);
  return { image, folders, rowCount, distinctGuids };
}

/** What the row loop knows of the folder a row is in; `rows` is indexRegistryCache's. */
interface RowFolder {
  dir: string;
  dirSep: string;
  rows?: CacheFolderRows;
}

function emptyImage(bytes: Buffer): CacheImage {
  return { bytes, guids: [], guidsAt: 0, strings: [], mounts: [], depObjects: [] };
}

/**
 * The checking row loop shared by the decoders: every header field, table, index and length is
 * validated, then `onRow` gets each row's offset with its folder (the same object for every row
 * of a folder, however its rows are interleaved with a sub-folder's), its mount, whether it is a
 * package with an ASCII name, and its GUID index.
 */
function readRows(
  bytes: Buffer,
  file: string,
  sealed: boolean,
  onRow: (image: CacheImage, at: number, folder: RowFolder, mountIndex: number, packageAscii: boolean, guidIndex: number) => void,
): void {
  const bad = (why: string, offset?: number) => errors.cacheInvalid(file, why, offset);
  if (bytes.byteLength < HEADER + 8) throw bad(`${bytes.byteLength} bytes is shorter than the header and checksum`);
  if (bytes.readUInt32LE(0) !== MAGIC) throw bad('not an asset registry cache (bad magic)', 0);
  const version = bytes.readUInt32LE(4);
  if (version !== CACHE_FORMAT_VERSION) throw bad(`format version ${version}, this tool writes ${CACHE_FORMAT_VERSION}`, 4);
  const bodySize = bytes.readBigUInt64LE(8);
  if (bodySize !== BigInt(bytes.byteLength - HEADER - 8)) throw bad(`body length ${bodySize} does not match the file (${bytes.byteLength} bytes): truncated?`, 8);
  const end = HEADER + Number(bodySize);
  if (sealed && checksum(bytes.subarray(HEADER, end)) !== bytes.readBigUInt64LE(end)) throw bad('checksum mismatch', end);

  let p = HEADER;
  const need = (n: number) => {
    if (p + n > end) throw bad('record runs past the end of the body', p);
  };
  const u32 = () => {
    need(4);
    const v = bytes.readUInt32LE(p);
    p += 4;
    return v;
  };
  const str = () => {
    need(2);
    const n = bytes.readUInt16LE(p);
    p += 2;
    need(n);
    const s = bytes.toString('utf8', p, p + n);
    p += n;
    return s;
  };
  const index = (i: number, count: number, what: string) => {
    if (i >= count) throw bad(`${what} index ${i} is out of range (${count})`, p - 4);
    return i;
  };

  const guidCount = u32();
  need(guidCount * 16);
  const guidsAt = p;
  const guids = new Array<string | undefined>(guidCount);
  p += guidCount * 16;
  const stringCount = u32();
  const strings = new Array<string>(stringCount);
  for (let i = 0; i < stringCount; i++) strings[i] = str();
  const mountCount = u32();
  const mounts = new Array<{ alias: string; dir: string }>(mountCount);
  for (let i = 0; i < mountCount; i++) mounts[i] = { alias: strings[index(u32(), stringCount, 'alias')], dir: strings[index(u32(), stringCount, 'folder')] };
  const image: CacheImage = { bytes, guids, guidsAt, strings, mounts, depObjects: [] };
  const entryCount = u32();
  const sep = path.sep;
  // The folder of the previous row: its mount, where its bytes were, and its strings. Folders by
  // `dir` string too, so a folder whose rows are interleaved with a sub-folder's is one folder.
  const byDir = new Map<string, RowFolder>();
  let prevMount = -1;
  let prevDirAt = 0;
  let prevDirLength = -1;
  let folder: RowFolder = { dir: '', dirSep: '' };
  // The row loop reads the bytes directly (a DataView, no helper per field) and allocates nothing
  // per row: this loop runs once per asset on every open (a warm no-op scan's load).
  const dv = (image.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const ROW_FIXED = 4 + 2;
  const ROW_TAIL = 8 + 8 + 8 + 4 + 4 + 4 + 1;
  for (let i = 0; i < entryCount; i++) {
    const at = p;
    if (p + ROW_FIXED > end) throw bad('record runs past the end of the body', p);
    const mountIndex = dv.getUint32(p, true);
    if (mountIndex >= mountCount) throw bad(`mount index ${mountIndex} is out of range (${mountCount})`, p);
    const relLength = bytes[p + 4] | (bytes[p + 5] << 8);
    const relAt = p + ROW_FIXED;
    const relEnd = relAt + relLength;
    if (relEnd + ROW_TAIL > end) throw bad('record runs past the end of the body', relAt);
    splitRelPath(bytes, relAt, relEnd);
    const slash = relSplit.slash;
    const ascii = relSplit.ascii;
    const dirLength = slash >= relAt ? slash - relAt : -1;
    if (mountIndex !== prevMount || dirLength !== prevDirLength || !sameBytes(bytes, relAt, prevDirAt, dirLength)) {
      const m = mounts[mountIndex];
      const dir = dirLength < 0 ? m.dir : m.dir + sep + toDisk(bytes.toString('utf8', relAt, slash), sep);
      let f = byDir.get(dir);
      if (f === undefined) byDir.set(dir, (f = { dir, dirSep: dir + sep }));
      folder = f;
      prevMount = mountIndex;
      prevDirAt = relAt;
      prevDirLength = dirLength;
    }
    p = relEnd + 24; // mtime, size, hash
    const guidIndex = dv.getUint32(p, true);
    if (guidIndex >= guidCount) throw bad(`guid index ${guidIndex} is out of range (${guidCount})`, p);
    const classIndex = dv.getUint32(p + 4, true);
    if (classIndex >= stringCount) throw bad(`class index ${classIndex} is out of range (${stringCount})`, p + 4);
    p += 12; // guid, class, flags
    const kindByte = bytes[p++];
    if (kindByte > 1) throw bad(`kind ${kindByte} is neither package nor text`, p - 1);
    if (kindByte === 1) {
      if (p + 16 > end) throw bad('record runs past the end of the body', p);
      p += 16;
    }
    if (p + 4 > end) throw bad('record runs past the end of the body', p);
    const depCount = dv.getUint32(p, true);
    p += 4;
    if (p + depCount * 4 > end) throw bad('record runs past the end of the body', p);
    for (let d = 0; d < depCount; d++, p += 4) {
      const g = dv.getUint32(p, true) & 0x7fffffff;
      if (g >= guidCount) throw bad(`dependency index ${g} is out of range (${guidCount})`, p);
    }
    onRow(image, at, folder, mountIndex, ascii && kindByte === 0, guidIndex);
  }
  if (p !== end) throw bad(`${end - p} unexplained bytes after the last entry`, p);
}

/** Where `splitRelPath` leaves its answer (one object, reused: it runs once per row on every open). */
const relSplit = { slash: 0, ascii: true };

/**
 * Splits a row's relative path (bytes `relAt`..`relEnd`) at its last '/': `relSplit.slash` is that
 * slash (`relAt - 1` when there is none, the file is at the mount's top), `relSplit.ascii` whether
 * the file name after it is ASCII (then a latin1 slice reads it).
 */
function splitRelPath(bytes: Uint8Array, relAt: number, relEnd: number): void {
  let slash = relEnd - 1;
  let ascii = true;
  for (; slash >= relAt; slash--) {
    const c = bytes[slash];
    if (c === 0x2f) break;
    if (c > 0x7f) ascii = false;
  }
  relSplit.slash = slash;
  relSplit.ascii = ascii;
}

/** GUID `i` of the image's table (checked in range at load), decoded once. */
export function guidAt(image: CacheImage, i: number): string {
  let g = image.guids[i];
  if (g === undefined) image.guids[i] = g = image.bytes.toString('hex', image.guidsAt + i * 16, image.guidsAt + i * 16 + 16);
  return g;
}

/** Where `entryAt` leaves the row's file name (so `file`, a join of folder and name, is never cut apart again). */
export interface RowName {
  name: string;
}

const rowName: RowName = { name: '' };

/**
 * The entry for the (checked) row at `at`, whose folder is `dirSep` (`dir + sep`). `snapshot` marks
 * an entry built from the registry's loaded snapshot (see CacheEntry.snapshot). The file name
 * goes to `out.name`.
 */
export function entryAt(image: CacheImage, at: number, dirSep: string, snapshot: boolean, out: RowName): CacheEntry {
  const bytes = image.bytes;
  const m = image.mounts[bytes.readUInt32LE(at)];
  const relAt = at + 6;
  const relEnd = relAt + (bytes[at + 4] | (bytes[at + 5] << 8));
  splitRelPath(bytes, relAt, relEnd);
  const slash = relSplit.slash;
  const ascii = relSplit.ascii;
  const name = ascii ? latin1Slice(bytes, slash + 1, relEnd) : bytes.toString('utf8', slash + 1, relEnd);
  out.name = name;
  let p = relEnd;
  const mtimeMs = bytes.readDoubleLE(p);
  const size = bytes.readDoubleLE(p + 8);
  p += 24;
  const guid = guidAt(image, bytes.readUInt32LE(p));
  p += 12;
  const kindByte = bytes[p++];
  const sidecar: FileStat | undefined = kindByte === 1 ? { mtimeMs: bytes.readDoubleLE(p), size: bytes.readDoubleLE(p + 8) } : undefined;
  return {
    file: dirSep + name,
    guid,
    mount: m.alias,
    mountDir: m.dir,
    kind: kindByte === 1 ? 'text' : 'package',
    mtimeMs,
    size,
    sidecar,
    rec: undefined,
    at,
    image,
    gen: 0,
    live: false,
    snapshot,
  };
}

/**
 * Whether the (checked, lazy-folder) row at `at` is the package `name` (ASCII, compared byte by
 * byte) with this mtime and size: the warm walk's test, with no string or object made.
 */
export function rowMatches(image: CacheImage, at: number, name: string, mtimeMs: number, size: number): boolean {
  const bytes = image.bytes;
  const relEnd = at + 6 + (bytes[at + 4] | (bytes[at + 5] << 8));
  const nameAt = relEnd - name.length;
  if (nameAt < at + 6 || (nameAt > at + 6 && bytes[nameAt - 1] !== 0x2f)) return false;
  for (let k = 0; k < name.length; k++) if (bytes[nameAt + k] !== name.charCodeAt(k)) return false;
  const v = (image.view ??= new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  return v.getFloat64(relEnd, true) === mtimeMs && v.getFloat64(relEnd + 8, true) === size;
}

/**
 * How the file name of the (checked, lazy-folder) row at `at` sorts against `name`: negative,
 * zero or positive as the row's name is before, equal to or after it (code unit order, which is
 * byte order for the ASCII names of a lazy folder). `nameFrom` is where the name starts in the
 * row's relative path (`relNameStart`; the same for every row of a folder). Nothing is allocated.
 */
export function compareRowName(image: CacheImage, at: number, nameFrom: number, name: string): number {
  const bytes = image.bytes;
  const relEnd = at + 6 + (bytes[at + 4] | (bytes[at + 5] << 8));
  const nameAt = at + 6 + nameFrom;
  const n = relEnd - nameAt;
  const common = n < name.length ? n : name.length;
  for (let k = 0; k < common; k++) {
    const d = bytes[nameAt + k] - name.charCodeAt(k);
    if (d !== 0) return d;
  }
  return n - name.length;
}

/** Where the file name starts in the relative path of the row at `at` (after its last '/'). */
export function relNameStart(image: CacheImage, at: number): number {
  const bytes = image.bytes;
  const relAt = at + 6;
  let nameAt = relAt + (bytes[at + 4] | (bytes[at + 5] << 8));
  while (nameAt > relAt && bytes[nameAt - 1] !== 0x2f) nameAt--;
  return nameAt - relAt;
}

/**
 * `bytes.latin1Slice(start, end)`: Buffer's own one-byte string maker, without `toString`'s
 * encoding lookup and argument checks. Only called on ASCII bytes, where latin1 and UTF-8 agree.
 */
const latin1Slice: (bytes: Buffer, start: number, end: number) => string =
  typeof (Buffer.prototype as unknown as { latin1Slice?: unknown }).latin1Slice === 'function'
    ? (bytes, start, end) => (bytes as unknown as { latin1Slice(s: number, e: number): string }).latin1Slice(start, end)
    : (bytes, start, end) => bytes.toString('latin1', start, end);

/** Whether the `length` bytes at `a` and at `b` are the same (a negative length: both absent). */
function sameBytes(bytes: Buffer, a: number, b: number, length: number): boolean {
  for (let k = 0; k < length; k++) if (bytes[a + k] !== bytes[b + k]) return false;
  return true;
}

/** A `/`-separated relative path as the disk spells it. */
function toDisk(rel: string, sep: string): string {
  return sep === '/' ? rel : rel.split('/').join(sep);
}

/** The entry's full record: decoded from the cache bytes on first call (already validated), then kept. */
export function thawRecord(e: CacheEntry): AssetRecord {
  if (e.rec) return e.rec;
  const img = e.image!;
  const b = img.bytes;
  let p = e.at + 4;
  const relLength = b.readUInt16LE(p);
  const rel = b.toString('utf8', p + 2, p + 2 + relLength);
  p += 2 + relLength + 16;
  const hash = b.toString('hex', p, p + 8);
  p += 8 + 4;
  const className = img.strings[b.readUInt32LE(p)];
  const flags = b.readUInt32LE(p + 4);
  p += 9 + (e.kind === 'text' ? 16 : 0);
  const depCount = b.readUInt32LE(p);
  p += 4;
  const dependencies = dependencyList(depCount);
  // Allocated by the first thaw (one slot per GUID and type): an open that thaws nothing needs none.
  if (depCount > 0 && img.depObjects.length === 0) img.depObjects = new Array<AssetDependency | undefined>(img.guids.length * 2).fill(undefined);
  for (let d = 0; d < depCount; d++, p += 4) {
    const v = b.readUInt32LE(p);
    const g = v & 0x7fffffff;
    const slot = g * 2 + (v & SOFT_BIT ? 1 : 0);
    // One frozen object per (GUID, type): most imports point at a few shared assets.
    dependencies[d] = img.depObjects[slot] ??= Object.freeze({ guid: guidAt(img, g), type: v & SOFT_BIT ? DependencyType.Soft : DependencyType.Hard });
  }
  // name and packagePath are slices of virtualPath (V8 keeps a slice as a pointer into its parent),
  // so a thawed record holds one path string besides `file`, not three (~60 B less per asset).
  const virtualPath = `${e.mount}/${rel}`;
  const isText = e.kind === 'text';
  const end = isText ? virtualPath.length : virtualPath.length - PACKAGE_EXT_LENGTH;
  e.rec = {
    guid: e.guid,
    name: virtualPath.slice(virtualPath.lastIndexOf('/') + 1, end),
    className,
    packagePath: isText ? virtualPath : virtualPath.slice(0, end),
    virtualPath,
    file: e.file,
    mount: e.mount,
    kind: e.kind,
    flags,
    dependencies,
    mtimeMs: e.mtimeMs,
    size: e.size,
    hash,
  };
  e.image = undefined;
  return e.rec;
}

const PACKAGE_EXT_LENGTH = '.lasset'.length;
