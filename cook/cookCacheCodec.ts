/**
 * The cook cache's packed entries: each entry is one binary record in a growing arena (a Buffer),
 * decoded only when asked for, so a million entries cost ~150-200 bytes each instead of a
 * JavaScript object with a dozen strings (~600 bytes), and the snapshot on disk is the arena's live
 * records as they are (no JSON text of hundreds of MB to build or parse).
 *
 * A record: u32 length of what follows, then guid, key, parts, cookedFile, sizes, hashes, counts,
 * flags. Strings are tagged: a 16-hex-digit hash (every key, content hash and xxh64) as its 8
 * bytes; a repeated short string (part names, settings hashes that are not hex, class names) as an
 * index into the cache's string table; anything else as UTF-8.
 */
import { hexInto } from '../src/util/hex.js';
import type { CacheEntry, PakRecord } from './cookCache.js';
import type { CookKeyParts } from './cookKey.js';

const TAG_HEX16 = 0;
const TAG_UTF8 = 1;
const TAG_ABSENT = 2;
const TAG_TABLE = 3;
const TAG_HEX32 = 4;

const FLAG_TEXTURE = 1;
const FLAG_CLASSES = 2;
const FLAG_COOK_MS = 4;


/** Strings shared by many entries (part names, class names), stored once per snapshot. */
export class StringTable {
  readonly list: string[] = [];
  private readonly ids = new Map<string, number>();
  id(s: string): number {
    let i = this.ids.get(s);
    if (i === undefined) {
      i = this.list.length;
      this.list.push(s);
      this.ids.set(s, i);
    }
    return i;
  }
  get(i: number): string {
    const s = this.list[i];
    if (s === undefined) throw new Error(`string ${i} is not in the table`);
    return s;
  }
}

/** Below this an arena doubles when it grows; above, it grows by an eighth. */
const ARENA_DOUBLING_MAX = 16 << 20;

/** Records an arena writes before it sizes itself for the rest of those `expect` announced. */
const EXPECT_SAMPLE = 1024;

/** Appends records; grows by doubling while small, by an eighth once large. */
export class Arena {
  buf: Buffer;
  used: number;
  /** Records still expected (`expect`), and those written since, with their bytes. */
  private expected = 0;
  private written = 0;
  private writtenFrom = 0;
  constructor(initial: Buffer = Buffer.alloc(1 << 16), used = 0) {
    this.buf = initial;
    this.used = used;
  }
  /**
   * About `records` more records will be appended (a hint; the bytes never depend on it). Once
   * EXPECT_SAMPLE of them are written, the next growth makes room for all of them at their mean
   * size. Growing by an eighth, a cold million-asset cook copied its ~120 MB arena ~17 times
   * (~0.9 GB of copies and fresh pages on the main thread, 0.7 s CPU in a bench of the growth alone).
   */
  expect(records: number): void {
    this.expected = records;
    this.written = 0;
    this.writtenFrom = this.used;
  }
  /** A record was appended (RecordWriter.end). */
  wrote(): void {
    if (this.expected > 0) this.written++;
  }
  reserve(n: number): void {
    if (this.used + n <= this.buf.byteLength) return;
    let cap = Math.max(this.buf.byteLength, 1 << 16);
    // Doubling while small, then an eighth at a time: at a million entries the snapshot is ~117 MB
    // and one journal line replayed after loading it doubled that to 234 MB for the whole cook.
    while (cap < this.used + n) cap += cap < ARENA_DOUBLING_MAX ? cap : Math.ceil(cap / 8);
    if (this.written >= EXPECT_SAMPLE && this.written < this.expected) {
      // A sixteenth over the mean: a short guess costs one more growth, a long one untouched pages.
      const mean = (this.used - this.writtenFrom) / this.written;
      cap = Math.max(cap, this.used + n + Math.ceil((this.expected - this.written) * mean * 1.0625));
      this.expected = 0;
    }
    const next = Buffer.allocUnsafe(cap);
    this.buf.copy(next, 0, 0, this.used);
    this.buf = next;
  }
}

/** Writes one record at the arena's end. */
class RecordWriter {
  private at: number;
  private readonly start: number;
  constructor(
    private readonly arena: Arena,
    private readonly table: StringTable,
    maxBytes: number,
  ) {
    arena.reserve(maxBytes);
    this.start = arena.used;
    this.at = this.start + 4;
  }
  private get b(): Buffer {
    return this.arena.buf;
  }
  u8(v: number): void {
    this.b[this.at++] = v;
  }
  u32(v: number): void {
    this.b.writeUInt32LE(v >>> 0, this.at);
    this.at += 4;
  }
  f64(v: number): void {
    this.b.writeDoubleLE(v, this.at);
    this.at += 8;
  }
  str(s: string | undefined, shared = false): void {
    if (s === undefined) return this.u8(TAG_ABSENT);
    // A hash (16 or 32 lowercase hex digits) as its bytes, written here: Buffer's hex write (and a
    // pattern test before it) for each of an entry's four or five hashes was most of writeEntry.
    if ((s.length === 16 || s.length === 32) && hexInto(this.b, this.at + 1, s)) {
      this.b[this.at] = s.length === 16 ? TAG_HEX16 : TAG_HEX32;
      this.at += 1 + s.length / 2;
    } else if (shared) {
      this.u8(TAG_TABLE);
      this.u32(this.table.id(s));
    } else {
      this.u8(TAG_UTF8);
      const n = this.b.write(s, this.at + 4, 'utf8');
      this.u32(n);
      this.at += n;
    }
  }
  /** Close the record: its length goes in front. Returns its offset. */
  end(): number {
    this.b.writeUInt32LE(this.at - this.start - 4, this.start);
    this.arena.used = this.at;
    this.arena.wrote();
    return this.start;
  }
}

/** Reads one record. */
class RecordReader {
  at: number;
  readonly end: number;
  constructor(
    private readonly b: Buffer,
    private readonly table: StringTable,
    offset: number,
  ) {
    if (offset + 4 > b.byteLength) throw new Error('record past the end');
    this.end = offset + 4 + b.readUInt32LE(offset);
    if (this.end > b.byteLength) throw new Error('record past the end');
    this.at = offset + 4;
  }
  private need(n: number): void {
    if (this.at + n > this.end) throw new Error('record is truncated');
  }
  u8(): number {
    this.need(1);
    return this.b[this.at++];
  }
  u32(): number {
    this.need(4);
    const v = this.b.readUInt32LE(this.at);
    this.at += 4;
    return v;
  }
  f64(): number {
    this.need(8);
    const v = this.b.readDoubleLE(this.at);
    this.at += 8;
    return v;
  }
  str(): string | undefined {
    const tag = this.u8();
    switch (tag) {
      case TAG_ABSENT:
        return undefined;
      case TAG_HEX16:
      case TAG_HEX32: {
        const n = tag === TAG_HEX16 ? 8 : 16;
        this.need(n);
        const s = this.b.toString('hex', this.at, this.at + n);
        this.at += n;
        return s;
      }
      case TAG_TABLE:
        return this.table.get(this.u32());
      case TAG_UTF8: {
        const n = this.u32();
        this.need(n);
        const s = this.b.toString('utf8', this.at, this.at + n);
        this.at += n;
        return s;
      }
      default:
        throw new Error(`unknown string tag ${tag}`);
    }
  }
  /** Step over a string without decoding it. */
  skipStr(): void {
    const tag = this.u8();
    if (tag === TAG_HEX16) this.at += 8;
    else if (tag === TAG_HEX32) this.at += 16;
    else if (tag === TAG_TABLE) this.at += 4;
    else if (tag === TAG_UTF8) {
      const n = this.u32();
      this.at += n;
    }
    else if (tag !== TAG_ABSENT) throw new Error(`unknown string tag ${tag}`);
    if (this.at > this.end) throw new Error('record is truncated');
  }
  reqStr(): string {
    const s = this.str();
    if (s === undefined) throw new Error('a required string is absent');
    return s;
  }
}

/** Bytes a record of `e` needs at most (strings as UTF-8 counted generously). */
function maxRecordBytes(guid: string, e: CacheEntry): number {
  let n = 4 + 64 + 8 * 5 + 16;
  n += 4 * (guid.length + e.key.length + e.cookedFile.length + e.xxh64.length + (e.cookedXxh64?.length ?? 0)) + 5 * 5;
  const parts = e.parts as Record<string, string | undefined>;
  for (const k in parts) n += 10 + 4 * (k.length + (parts[k]?.length ?? 0));
  if (e.classes) for (const c of e.classes) n += 5 + 4 * c.length;
  return n;
}

/** Append `e` (for `guid`) to the arena; returns the record's offset. */
export function writeEntry(arena: Arena, table: StringTable, guid: string, e: CacheEntry): number {
  const w = new RecordWriter(arena, table, maxRecordBytes(guid, e));
  w.str(guid);
  w.str(e.key);
  // The parts that have a value, in their order (no array of pairs per entry).
  const parts = e.parts as Record<string, string | undefined>;
  let count = 0;
  for (const k in parts) if (typeof parts[k] === 'string') count++;
  w.u8(count);
  for (const k in parts) {
    const v = parts[k];
    if (typeof v !== 'string') continue;
    w.str(k, true);
    w.str(v, true);
  }
  w.str(e.cookedFile);
  w.f64(e.cookedSize);
  w.f64(e.cookedMtimeMs);
  w.f64(e.rawSize);
  w.f64(e.sourceSize);
  w.str(e.xxh64);
  w.str(e.cookedXxh64);
  w.f64(e.strippedExports);
  w.f64(e.nulledRefs);
  w.u8((e.texture ? FLAG_TEXTURE : 0) | (e.classes ? FLAG_CLASSES : 0) | (e.cookMs !== undefined ? FLAG_COOK_MS : 0));
  if (e.classes) {
    w.u32(e.classes.length);
    for (const c of e.classes) w.str(c, true);
  }
  if (e.cookMs !== undefined) w.f64(e.cookMs);
  return w.end();
}

/** The GUID of the record at `offset` and where the next record starts. Throws on a malformed record. */
export function recordGuid(b: Buffer, table: StringTable, offset: number): { guid: string; next: number } {
  const r = new RecordReader(b, table, offset);
  return { guid: r.reqStr(), next: r.end };
}

/** Byte length of the record at `offset` (length field included). */
export function recordBytes(b: Buffer, offset: number): number {
  return 4 + b.readUInt32LE(offset);
}

/** Decode the record at `offset`. Throws on a malformed record. */
export function readEntry(b: Buffer, table: StringTable, offset: number): CacheEntry {
  const r = new RecordReader(b, table, offset);
  r.reqStr(); // guid
  const key = r.reqStr();
  const parts: CookKeyParts = {};
  const n = r.u8();
  for (let i = 0; i < n; i++) {
    const k = r.reqStr();
    (parts as Record<string, string>)[k] = r.reqStr();
  }
  const cookedFile = r.reqStr();
  const cookedSize = r.f64();
  const cookedMtimeMs = r.f64();
  const rawSize = r.f64();
  const sourceSize = r.f64();
  const xxh64 = r.reqStr();
  const cookedXxh64 = r.str();
  const strippedExports = r.f64();
  const nulledRefs = r.f64();
  const flags = r.u8();
  const e: CacheEntry = { key, parts, cookedFile, rawSize, xxh64, sourceSize, strippedExports, nulledRefs, texture: (flags & FLAG_TEXTURE) !== 0, cookedSize, cookedMtimeMs };
  if (cookedXxh64 !== undefined) e.cookedXxh64 = cookedXxh64;
  if (flags & FLAG_CLASSES) {
    const count = r.u32();
    if (count > r.end - r.at) throw new Error('class list is truncated');
    const classes: string[] = [];
    for (let i = 0; i < count; i++) classes.push(r.reqStr());
    e.classes = classes;
  }
  if (flags & FLAG_COOK_MS) e.cookMs = r.f64();
  return e;
}

/** The `cookMs` of the record at `offset`, stepping over the fields before it without decoding them. Throws on a malformed record. */
export function recordCookMs(b: Buffer, offset: number): number | undefined {
  const r = new RecordReader(b, new StringTable(), offset);
  r.skipStr(); // guid
  r.skipStr(); // key
  const n = r.u8();
  for (let i = 0; i < 2 * n; i++) r.skipStr();
  r.skipStr(); // cookedFile
  r.at += 8 * 4; // cookedSize, cookedMtimeMs, rawSize, sourceSize
  r.skipStr(); // xxh64
  r.skipStr(); // cookedXxh64
  r.at += 8 * 2; // strippedExports, nulledRefs
  const flags = r.u8();
  if (flags & FLAG_CLASSES) {
    const count = r.u32();
    for (let i = 0; i < count; i++) r.skipStr();
  }
  return flags & FLAG_COOK_MS ? r.f64() : undefined;
}

/** Snapshot header fields written before the records. */
export const SNAPSHOT_MAGIC = 0x434b434c; // "LCKC" little endian

/** Encode the snapshot's head: magic, version, format version, string table, pak records, entry count. */
export function encodeHead(version: number, formatVersion: number, table: StringTable, paks: ReadonlyMap<string, PakRecord>, entries: number): Buffer {
  const arena = new Arena();
  const w = new RecordWriter(arena, table, 64);
  w.u32(SNAPSHOT_MAGIC);
  w.u32(version);
  w.u32(formatVersion);
  w.end();
  for (const s of table.list) {
    const sw = new RecordWriter(arena, table, 16 + 4 * s.length);
    sw.str(s);
    sw.end();
  }
  for (const [name, p] of paks) {
    const pw = new RecordWriter(arena, table, 64 + 4 * (name.length + p.fingerprint.length));
    pw.str(name);
    pw.str(p.fingerprint);
    pw.f64(p.size);
    pw.f64(p.entries);
    pw.end();
  }
  const tail = Buffer.alloc(12);
  tail.writeUInt32LE(table.list.length, 0);
  tail.writeUInt32LE(paks.size, 4);
  tail.writeUInt32LE(entries, 8);
  // Counts first, so a reader knows how many records of each kind follow.
  return Buffer.concat([tail, arena.buf.subarray(0, arena.used)]);
}

/** Decode a snapshot head; returns where the entry records start. */
export function decodeHead(
  b: Buffer,
  expect: { version: number; formatVersion: number },
): { table: StringTable; paks: Map<string, PakRecord>; entries: number; recordsAt: number } {
  if (b.byteLength < 12) throw new Error('snapshot is truncated');
  const strings = b.readUInt32LE(0);
  const pakCount = b.readUInt32LE(4);
  const entries = b.readUInt32LE(8);
  const table = new StringTable();
  let at = 12;
  const h = new RecordReader(b, table, at);
  if (h.u32() !== SNAPSHOT_MAGIC) throw new Error('not a cook cache snapshot');
  const version = h.u32();
  if (version !== expect.version) throw new Error(`cache version ${version} is not ${expect.version}`);
  h.u32(); // format version: entries carry it in their keys
  at = h.end;
  for (let i = 0; i < strings; i++) {
    const r = new RecordReader(b, table, at);
    table.id(r.reqStr());
    at = r.end;
  }
  const paks = new Map<string, PakRecord>();
  for (let i = 0; i < pakCount; i++) {
    const r = new RecordReader(b, table, at);
    paks.set(r.reqStr(), { fingerprint: r.reqStr(), size: r.f64(), entries: r.f64() });
    at = r.end;
  }
  return { table, paks, entries, recordsAt: at };
}

/**
 * What a cache hit needs of a record, read in place (`probeRecord`): numbers and byte offsets, no
 * hex string decoded. One object is reused for every probe.
 */
export interface HitView {
  cookedSize: number;
  cookedMtimeMs: number;
  rawSize: number;
  sourceSize: number;
  strippedExports: number;
  nulledRefs: number;
  texture: boolean;
  /** xxh64 of the raw cooked bytes, high and low 32 bits. */
  xxhHi: number;
  xxhLo: number;
  /** The cooked file's xxh64 is recorded (cookedHi, cookedLo). */
  hasCookedXxh: boolean;
  cookedHi: number;
  cookedLo: number;
  classes: string[] | undefined;
  /** Where the key parts start and how many pairs. */
  partsAt: number;
  partCount: number;
}

export function emptyHitView(): HitView {
  return { cookedSize: 0, cookedMtimeMs: 0, rawSize: 0, sourceSize: 0, strippedExports: 0, nulledRefs: 0, texture: false, xxhHi: 0, xxhLo: 0, hasCookedXxh: false, cookedHi: 0, cookedLo: 0, classes: undefined, partsAt: 0, partCount: 0 };
}

/** Bytes a tagged string takes at `at` (tag included), or -1 past `end` or for an unknown tag. */
function strBytes(b: Buffer, at: number, end: number): number {
  if (at >= end) return -1;
  const tag = b[at];
  const n = tag === TAG_HEX16 ? 9 : tag === TAG_HEX32 ? 17 : tag === TAG_TABLE ? 5 : tag === TAG_ABSENT ? 1 : tag === TAG_UTF8 && at + 5 <= end ? 5 + b.readUInt32LE(at + 1) : -1;
  return n < 0 || at + n > end ? -1 : n;
}

/** Where the record at `offset` ends, or -1 when its length runs past `b`. */
function recordEnd(b: Buffer, offset: number): number {
  if (offset + 4 > b.byteLength) return -1;
  const end = offset + 4 + b.readUInt32LE(offset);
  return end > b.byteLength ? -1 : end;
}

/** The offset of the key-parts count of the record at `offset` (after its guid and key), or -1 when they do not fit before `end`. */
function partsAt(b: Buffer, offset: number, end: number): number {
  let at = offset + 4;
  for (let k = 0; k < 2; k++) {
    const n = strBytes(b, at, end); // guid, key
    if (n < 0) return -1;
    at += n;
  }
  return at < end ? at : -1;
}

/** Where a record names its output: the cooked file's UTF-8 bytes and the recorded size and mtime. */
export interface RecordOutput {
  nameAt: number;
  nameLength: number;
  size: number;
  mtimeMs: number;
}

/**
 * The cooked file and output numbers of the record at `offset` into `out`, read the way
 * probeRecord reads them (false when the record is not in that form): what a stat of the outputs
 * ahead of a no-op's pass needs (cook/outputPrestat.ts).
 */
export function recordOutput(b: Buffer, offset: number, out: RecordOutput): boolean {
  const end = recordEnd(b, offset);
  let at = end < 0 ? -1 : partsAt(b, offset, end);
  if (at < 0) return false;
  const parts = b[at++];
  for (let k = 0; k < 2 * parts; k++) {
    const n = strBytes(b, at, end);
    if (n < 0) return false;
    at += n;
  }
  if (at + 5 > end || b[at] !== TAG_UTF8) return false;
  const len = b.readUInt32LE(at + 1);
  at += 5;
  if (at + len + 16 > end) return false;
  out.nameAt = at;
  out.nameLength = len;
  out.size = b.readDoubleLE(at + len);
  out.mtimeMs = b.readDoubleLE(at + len + 8);
  return true;
}

/**
 * Read what a cache hit needs of the record at `offset` into `v`, when its cooked file is
 * `cookedFile` and every field is in the form the fast check compares (hashes as bytes, part names,
 * values and class names in the string table, an ASCII path). False means "not provable here":
 * the caller decodes the entry the slow way (readEntry), which gives the same answer.
 */
export function probeRecord(b: Buffer, table: StringTable, offset: number, cookedFile: string, v: HitView): boolean {
  const end = recordEnd(b, offset);
  let at = end < 0 ? -1 : partsAt(b, offset, end);
  if (at < 0) return false;
  const parts = b[at++];
  v.partsAt = at;
  v.partCount = parts;
  for (let k = 0; k < 2 * parts; k++) {
    const n = strBytes(b, at, end);
    // Names in the table; values as hash bytes or in the table (what writeEntry makes of them).
    if (n < 0 || !(b[at] === TAG_TABLE || (k % 2 === 1 && b[at] === TAG_HEX16))) return false;
    at += n;
  }
  // The cooked file, compared in place (ASCII only; anything else takes the slow way).
  if (at + 5 > end || b[at] !== TAG_UTF8) return false;
  const len = b.readUInt32LE(at + 1);
  at += 5;
  if (len !== cookedFile.length || at + len > end) return false;
  for (let k = 0; k < len; k++) {
    const c = cookedFile.charCodeAt(k);
    if (c >= 0x80 || b[at + k] !== c) return false;
  }
  at += len;
  if (at + 8 * 4 + 9 > end) return false;
  v.cookedSize = b.readDoubleLE(at);
  v.cookedMtimeMs = b.readDoubleLE(at + 8);
  v.rawSize = b.readDoubleLE(at + 16);
  v.sourceSize = b.readDoubleLE(at + 24);
  at += 32;
  if (b[at] !== TAG_HEX16) return false;
  v.xxhHi = b.readUInt32BE(at + 1);
  v.xxhLo = b.readUInt32BE(at + 5);
  at += 9;
  if (at >= end) return false;
  if (b[at] === TAG_HEX16) {
    if (at + 9 > end) return false;
    v.hasCookedXxh = true;
    v.cookedHi = b.readUInt32BE(at + 1);
    v.cookedLo = b.readUInt32BE(at + 5);
    at += 9;
  } else if (b[at] === TAG_ABSENT) {
    v.hasCookedXxh = false;
    at += 1;
  } else return false;
  if (at + 17 > end) return false;
  v.strippedExports = b.readDoubleLE(at);
  v.nulledRefs = b.readDoubleLE(at + 8);
  const flags = b[at + 16];
  at += 17;
  v.texture = (flags & FLAG_TEXTURE) !== 0;
  v.classes = undefined;
  if (flags & FLAG_CLASSES) {
    if (at + 4 > end) return false;
    const count = b.readUInt32LE(at);
    at += 4;
    if (count > end - at) return false;
    const classes: string[] = [];
    for (let k = 0; k < count; k++, at += 5) {
      if (at + 5 > end || b[at] !== TAG_TABLE) return false;
      const s = table.list[b.readUInt32LE(at + 1)];
      if (s === undefined) return false;
      classes.push(s);
    }
    v.classes = classes;
  }
  return true;
}

const HEX_CHARS = Array.from('0123456789abcdef', (c) => c.charCodeAt(0));

/** The 8 bytes at `at` are the 16 lowercase hex digits `s` (what TAG_HEX16 stored). */
function hexEquals(b: Buffer, at: number, s: string): boolean {
  if (s.length !== 16) return false;
  for (let k = 0; k < 8; k++) {
    const x = b[at + k];
    if (s.charCodeAt(2 * k) !== HEX_CHARS[x >> 4] || s.charCodeAt(2 * k + 1) !== HEX_CHARS[x & 15]) return false;
  }
  return true;
}

/**
 * Are the parts `probeRecord` found in `v` exactly `want` (same names, same values: cookKey.ts
 * `sameParts`)? Compared in place: a stored hash against its hex digits, a table string by identity.
 */
export function partsMatch(b: Buffer, table: StringTable, v: HitView, want: CookKeyParts): boolean {
  let at = v.partsAt;
  let wanted = 0;
  for (const _ in want) wanted++;
  if (wanted !== v.partCount) return false;
  for (let k = 0; k < v.partCount; k++) {
    const name = table.list[b.readUInt32LE(at + 1)];
    at += 5;
    const w = name === undefined ? undefined : want[name as keyof CookKeyParts];
    if (typeof w !== 'string') return false;
    if (b[at] === TAG_HEX16) {
      if (!hexEquals(b, at + 1, w)) return false;
      at += 9;
    } else {
      if (table.list[b.readUInt32LE(at + 1)] !== w) return false;
      at += 5;
    }
  }
  return true;
}
