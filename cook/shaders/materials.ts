/**
 * Which shader permutations the shipped packages ask for: every export of class
 * `/Script/Engine.CMaterial` names its shader in `ShaderSource` (StrProperty, a virtual path) and
 * its defines in `ShaderDefines` (ArrayProperty of StrProperty).
 *
 * A package is read only when its content hash is not in `Intermediates/ShaderMaterials.bin`
 * (the tables first; the whole file only when an export is a material), so a warm cook reads
 * nothing here, nor when a cook worker just parsed it (it returns the package's materials with
 * its outcome: `known`), so a cold cook reads only what it did not cook. A package that cannot be
 * parsed has no materials as far as this goes: the package cook reports it, once. A material
 * whose properties have the wrong types is an error naming the package and the property.
 *
 * The table is kept packed, in memory as on disk: at a million assets its JSON of before was 57 MB
 * of text parsed whole into ~550k objects by each scan and by the daemon's start; packed it is
 * ~18 MB of records plus the materials of the few packages that have any:
 *
 *   header   "LSMC" u32 version, u32 records, u32 blob bytes            (little-endian)
 *   record   guid[16] hash[8] u32 blob offset, u32 blob length (0: no materials)
 *   blob     per package with materials (or a material error): {"materials":[...],"error":{...}}
 *   footer   xxh64 (seed 0) of everything before it, u64
 *
 * Records are sorted by GUID (binary search). A `ShaderMaterials.json` (versions 1 and 2) is read
 * once when there is no table, and removed when the table is written. A damaged table is never
 * trusted: every package is read again.
 */
import fs from 'node:fs';
import path from 'node:path';
import { errors, isLuminaError, type LuminaError } from '../../src/errors.js';
import { decodeExport, parsePackage, parsePackageTables, readPackageFile, readPackageTables } from '../../src/format/packageReader.js';
import type { LoadedPackage, Property } from '../../src/format/packageTypes.js';
import type { AssetRecord } from '../../src/registry/types.js';
import { writeFileAtomicSync } from '../../src/util/atomicWrite.js';
import { initHash, xxh64 } from '../../src/util/hash.js';
import { hexInto } from '../../src/util/hex.js';

export const MATERIAL_CLASS = '/Script/Engine.CMaterial';
export const MATERIALS_CACHE_FILE = 'ShaderMaterials.bin';
/** The JSON table of before (versions 1 and 2): read when there is no binary one, removed once it is written. */
export const LEGACY_MATERIALS_CACHE_FILE = 'ShaderMaterials.json';
const MAGIC = 0x434d534c; // "LSMC"
const VERSION = 2;
const HEADER = 16;
const RECORD = 32;
const FOOTER = 8;
const GUID_RE = /^[0-9a-f]{32}$/;
const HASH_RE = /^[0-9a-f]{16}$/;

export interface MaterialShader {
  /** `/Game/Materials/Rock.Rock` (or `/Game/Materials/Rock.SubMaterial`). */
  objectPath: string;
  /** `ShaderSource`, a virtual path. */
  source: string;
  /** `ShaderDefines` as written (checked later, where the error can name the define). */
  defines: string[];
}

/** One package's materials as a cook worker returns them. */
export interface PackageMaterials {
  /** xxh64 (hex) of the package bytes they were read from. */
  hash: string;
  materials: MaterialShader[];
  /** A material property of the wrong type: reported each cook until the package is fixed. */
  error?: { message: string; field: string };
}

export interface MaterialScan {
  /** By package GUID: the packages that have materials or a material error (others have none). */
  byPackage: Map<string, { materials: MaterialShader[]; error?: LuminaError }>;
  /** Packages read (not found in the cache). */
  read: number;
}

/**
 * Materials known from a cook's own parse, by package GUID: a package with none (most) is just the
 * hash of its bytes, which keeps a million-asset cook's map small.
 */
export type KnownMaterials = ReadonlyMap<string, PackageMaterials | string>;

/** How a cook records a package's materials in a {@link KnownMaterials} map. */
export function knownEntry(m: PackageMaterials): PackageMaterials | string {
  return m.materials.length === 0 && !m.error ? m.hash : m;
}

export interface ScanMaterialsOptions {
  /**
   * Materials already known from the bytes a cook just parsed (by package GUID; a cook worker
   * returns them with its outcome), taken when their hash is the record's: such a package is not
   * read again here.
   */
  known?: KnownMaterials;
  /**
   * Read only packages whose primary class is a material (the cook's early scan, beside the
   * cook: the rest come from the workers); packages neither cached nor known are left out.
   */
  materialClassOnly?: boolean;
  /** The table as this cook's last scan left it (see MaterialsMemo). */
  memo?: MaterialsMemo;
}

/**
 * The table a scan loaded or wrote, with the file's identity then: a full cook scans twice (the
 * early shader compiles, then what ships) and its second scan reads and checks nothing while the
 * file is as the first left it. Held by the caller for one cook only.
 */
export interface MaterialsMemo {
  last?: { file: string; stamp: string; table: MaterialsTable };
}

/** The packed table (see the module comment): records sorted by GUID, looked up by binary search. */
export class MaterialsTable {
  private readonly key = Buffer.alloc(24);

  private constructor(
    /** The whole file (or an encoded table): header, records, blob, footer. */
    private readonly bytes: Buffer,
    readonly count: number,
    private readonly blobAt: number,
    private readonly blobSize: number,
  ) {}

  static empty(): MaterialsTable {
    return MaterialsTable.encode([], [], []);
  }

  /** Parse and check a table file's bytes; throws (a plain Error) when they are not one. */
  static decode(bytes: Buffer): MaterialsTable {
    if (bytes.byteLength < HEADER + FOOTER) throw new Error('too short');
    if (bytes.readUInt32LE(0) !== MAGIC) throw new Error('not a materials table');
    if (bytes.readUInt32LE(4) !== VERSION) throw new Error(`version ${bytes.readUInt32LE(4)}, not ${VERSION}`);
    const count = bytes.readUInt32LE(8);
    const blobSize = bytes.readUInt32LE(12);
    if (HEADER + count * RECORD + blobSize + FOOTER !== bytes.byteLength) throw new Error('sizes do not add up');
    if (xxh64(bytes.subarray(0, bytes.byteLength - FOOTER)) !== bytes.readBigUInt64LE(bytes.byteLength - FOOTER)) throw new Error('footer hash mismatch');
    return new MaterialsTable(bytes, count, HEADER + count * RECORD, blobSize);
  }

  /**
   * A table of these packages (any order; `blobs[i]` undefined or empty for none). A GUID or hash
   * that is not hex of the right length cannot be stored and is left out (read again next time).
   */
  static encode(guids: readonly string[], hashes: readonly string[], blobs: ReadonlyArray<Uint8Array | undefined>): MaterialsTable {
    const order: number[] = [];
    for (let i = 0; i < guids.length; i++) if (GUID_RE.test(guids[i]) && HASH_RE.test(hashes[i])) order.push(i);
    order.sort((a, b) => (guids[a] < guids[b] ? -1 : guids[a] > guids[b] ? 1 : 0));
    // One record per GUID (the first asked): a list never holds one twice, but the table must not.
    const kept = order.filter((i, k) => k === 0 || guids[order[k - 1]] !== guids[i]);
    let blobSize = 0;
    for (const i of kept) blobSize += blobs[i]?.byteLength ?? 0;
    const count = kept.length;
    const out = Buffer.alloc(HEADER + count * RECORD + blobSize + FOOTER);
    out.writeUInt32LE(MAGIC, 0);
    out.writeUInt32LE(VERSION, 4);
    out.writeUInt32LE(count, 8);
    out.writeUInt32LE(blobSize, 12);
    const blobAt = HEADER + count * RECORD;
    let at = 0;
    kept.forEach((i, k) => {
      const r = HEADER + k * RECORD;
      out.write(guids[i], r, 16, 'hex');
      out.write(hashes[i], r + 16, 8, 'hex');
      at = putBlob(out, r, blobAt, at, blobs[i]);
    });
    sealTable(out);
    return new MaterialsTable(out, count, blobAt, blobSize);
  }

  /**
   * This table with some records' hash and materials replaced (`changes`, by record index): the
   * same bytes `encode` gives for the same records, without writing every GUID and hash again (at
   * 12k packages that was ~10 ms of a one-file change, twice). Undefined when a new hash is not
   * 16 hex digits or a record is named twice (then the caller encodes).
   */
  patched(changes: ReadonlyArray<{ i: number; hash: string; blob: Uint8Array | undefined }>): MaterialsTable | undefined {
    const count = this.count;
    const replaced = new Map<number, Uint8Array | undefined>();
    for (const c of changes) {
      if (!(c.i >= 0 && c.i < count) || replaced.has(c.i) || !HASH_RE.test(c.hash)) return undefined;
      replaced.set(c.i, c.blob);
    }
    // The usual edit keeps every blob's length (a package without materials, edited): no offset
    // moves, so the table is copied with the changed records' hashes and blobs written over theirs.
    if (changes.every((c) => (c.blob?.byteLength ?? 0) === this.bytes.readUInt32LE(HEADER + c.i * RECORD + 28)) && this.laidOutAsEncoded()) {
      const out = Buffer.from(this.bytes);
      for (const c of changes) {
        const r = HEADER + c.i * RECORD;
        out.write(c.hash, r + 16, 8, 'hex');
        if (c.blob?.byteLength) out.set(c.blob, this.blobAt + out.readUInt32LE(r + 24));
      }
      sealTable(out);
      return new MaterialsTable(out, count, this.blobAt, this.blobSize);
    }
    const blobOfRecord = (k: number): Uint8Array | undefined => (replaced.has(k) ? replaced.get(k) : this.blobEmpty(k) ? undefined : this.blob(k));
    let blobSize = 0;
    for (let k = 0; k < count; k++) blobSize += blobOfRecord(k)?.byteLength ?? 0;
    const blobAt = HEADER + count * RECORD;
    const out = Buffer.alloc(blobAt + blobSize + FOOTER);
    // Header and records as they were (GUIDs, hashes); then the changed hashes, every blob offset and the blobs, as encode lays them.
    this.bytes.copy(out, 0, 0, blobAt);
    out.writeUInt32LE(blobSize, 12);
    for (const c of changes) out.write(c.hash, HEADER + c.i * RECORD + 16, 8, 'hex');
    let at = 0;
    for (let k = 0; k < count; k++) {
      at = putBlob(out, HEADER + k * RECORD, blobAt, at, blobOfRecord(k));
    }
    sealTable(out);
    return new MaterialsTable(out, count, blobAt, blobSize);
  }

  private encodedLayout: boolean | undefined;

  /** Whether the blobs lie as encode (and patched) lay them: in record order, back to back, filling the blob section. */
  private laidOutAsEncoded(): boolean {
    if (this.encodedLayout !== undefined) return this.encodedLayout;
    let at = 0;
    for (let k = 0, r = HEADER; k < this.count; k++, r += RECORD) {
      if (this.bytes.readUInt32LE(r + 24) !== at) return (this.encodedLayout = false);
      at += this.bytes.readUInt32LE(r + 28);
    }
    return (this.encodedLayout = at === this.blobSize);
  }

  /** The file's bytes. */
  get data(): Buffer {
    return this.bytes;
  }

  /**
   * The record index of `guid`, or -1. `hint`: the record it probably is (a scan asks in GUID
   * order, so usually the one after the last found): checked first, one comparison instead of a
   * binary search.
   */
  find(guid: string, hint = -1): number {
    if (!GUID_RE.test(guid)) return -1;
    if (hint >= 0 && hint < this.count && hexIs(this.bytes, HEADER + hint * RECORD, guid)) return hint;
    const key = this.key;
    hexInto(key, 0, guid);
    let lo = 0;
    let hi = this.count - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareGuid(this.bytes, HEADER + mid * RECORD, key);
      if (c === 0) return mid;
      // How the record orders against the key.
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** Whether record `i` was made from content of this hash (16 hex digits). */
  hashIs(i: number, hash: string): boolean {
    return HASH_RE.test(hash) && hexIs(this.bytes, HEADER + i * RECORD + 16, hash);
  }

  guid(i: number): string {
    return this.bytes.toString('hex', HEADER + i * RECORD, HEADER + i * RECORD + 16);
  }

  /** Record `i`'s content hash, 16 hex digits. */
  hash(i: number): string {
    return this.bytes.toString('hex', HEADER + i * RECORD + 16, HEADER + i * RECORD + 24);
  }

  /** Whether record `i` has no materials JSON (what `blob(i)` gives as empty), without a view of it. */
  blobEmpty(i: number): boolean {
    const r = HEADER + i * RECORD;
    return this.bytes.readUInt32LE(r + 28) === 0 && this.bytes.readUInt32LE(r + 24) <= this.blobSize;
  }

  /** Record `i`'s materials JSON (empty: none); undefined when it points outside the blob. */
  blob(i: number): Uint8Array | undefined {
    const r = HEADER + i * RECORD;
    const at = this.bytes.readUInt32LE(r + 24);
    const length = this.bytes.readUInt32LE(r + 28);
    if (at + length > this.blobSize) return undefined;
    return this.bytes.subarray(this.blobAt + at, this.blobAt + at + length);
  }
}

/**
 * The 16 GUID bytes at `at` against `key`'s first 16: negative, zero or positive as they order
 * before, equal or after it. In JS: a scan's binary searches made Buffer.compare's C++ call per
 * step (with a hex write of the key per search, ~60 ms of a cold 20k cook's second scan).
 */
function compareGuid(bytes: Buffer, at: number, key: Buffer): number {
  for (let k = 0; k < 16; k++) {
    const d = bytes[at + k] - key[k];
    if (d !== 0) return d;
  }
  return 0;
}

/** Do the bytes at `at` spell `hex` (lowercase hex digits, checked by the caller)? Compared here: a Buffer write and compare per call cost more than the bytes. */
function hexIs(bytes: Buffer, at: number, hex: string): boolean {
  for (let i = 0, n = hex.length; i < n; i += 2, at++) {
    const hi = hex.charCodeAt(i);
    const lo = hex.charCodeAt(i + 1);
    if (bytes[at] !== (((hi > 57 ? hi - 87 : hi - 48) << 4) | (lo > 57 ? lo - 87 : lo - 48))) return false;
  }
  return true;
}

function stampOf(file: string): string | undefined {
  const st = fs.statSync(file, { throwIfNoEntry: false });
  return st && `${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}`;
}

/**
 * The table of `intermediatesDir`: the binary one, else the JSON of before (converted), else empty
 * (`found` false: there was nothing that could be read).
 */
function loadTable(intermediatesDir: string, memo?: MaterialsMemo): { table: MaterialsTable; legacy: boolean; found: boolean } {
  const file = path.join(intermediatesDir, MATERIALS_CACHE_FILE);
  try {
    const last = memo?.last;
    const stamp = stampOf(file);
    if (last && last.file === file && last.stamp === stamp) return { table: last.table, legacy: false, found: true };
    if (stamp !== undefined) {
      const table = MaterialsTable.decode(fs.readFileSync(file));
      if (memo) memo.last = { file, stamp, table };
      return { table, legacy: false, found: true };
    }
  } catch {
    // Damaged: the JSON of before, if any, else read every package once.
  }
  if (memo) memo.last = undefined;
  const legacy = loadLegacy(path.join(intermediatesDir, LEGACY_MATERIALS_CACHE_FILE));
  return { table: legacy ?? MaterialsTable.empty(), legacy: legacy !== undefined, found: legacy !== undefined };
}

/** A ShaderMaterials.json as versions 1 (an object per package) and 2 (a package without materials as its hash) wrote it. */
function loadLegacy(file: string): MaterialsTable | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const c = JSON.parse(text) as { version?: number; packages?: Record<string, string | { hash?: unknown; materials?: unknown; error?: PackageMaterials['error'] }> };
    if ((c?.version !== 1 && c?.version !== 2) || !c.packages || typeof c.packages !== 'object') return undefined;
    const guids: string[] = [];
    const hashes: string[] = [];
    const blobs: Array<Uint8Array | undefined> = [];
    for (const [guid, e] of Object.entries(c.packages)) {
      if (typeof e === 'string') {
        guids.push(guid);
        hashes.push(e);
        blobs.push(undefined);
        continue;
      }
      if (!e || typeof e.hash !== 'string' || !Array.isArray(e.materials)) continue;
      guids.push(guid);
      hashes.push(e.hash);
      blobs.push(blobOf(e.materials as MaterialShader[], e.error));
    }
    return MaterialsTable.encode(guids, hashes, blobs);
  } catch {
    return undefined;
  }
}

/** A record's blob: the materials JSON, or nothing for a package with none. */
function blobOf(materials: readonly MaterialShader[], error: PackageMaterials['error']): Uint8Array | undefined {
  return error || materials.length ? Buffer.from(JSON.stringify(error ? { materials, error } : { materials }), 'utf8') : undefined;
}

/** A record's blob read back; undefined when it is not what blobOf wrote (the package is read again). */
function parseBlob(blob: Uint8Array): Pick<PackageMaterials, 'materials' | 'error'> | undefined {
  try {
    const e = JSON.parse(Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength).toString('utf8')) as Pick<PackageMaterials, 'materials' | 'error'>;
    return e && Array.isArray(e.materials) ? e : undefined;
  } catch {
    return undefined;
  }
}

/** The materials table of `intermediatesDir` as it is on disk (binary, checked), or undefined (none, damaged). */
export function materialsTable(intermediatesDir: string, memo?: MaterialsMemo): MaterialsTable | undefined {
  const { table, legacy, found } = loadTable(intermediatesDir, memo);
  return found && !legacy ? table : undefined;
}

/**
 * The GUIDs of the packages with materials (or a material error) at the last material scan;
 * undefined when there is no table that can be read (missing or damaged: the caller assumes any
 * package may have had materials).
 */
export function packagesWithMaterials(intermediatesDir: string): Set<string> | undefined {
  const { table, found } = loadTable(intermediatesDir);
  if (!found) return undefined;
  const out = new Set<string>();
  for (let i = 0; i < table.count; i++) if (table.blob(i)?.byteLength) out.add(table.guid(i));
  return out;
}

/** The materials of `packages`, reading only what the table (or `known`) does not know. */
export async function scanMaterials(packages: readonly AssetRecord[], intermediatesDir: string, opts: ScanMaterialsOptions = {}): Promise<MaterialScan> {
  await initHash();
  const file = path.join(intermediatesDir, MATERIALS_CACHE_FILE);
  const { table, legacy } = loadTable(intermediatesDir, opts.memo);
  // The next table, as parallel lists (no object per package): GUID, hash, materials JSON.
  const guids: string[] = [];
  const hashes: string[] = [];
  const blobs: Array<Uint8Array | undefined> = [];
  const seen = new Uint8Array(table.count);
  let hits = 0;
  let changed = false;
  // The records that differ from the table's, by record index, while every package has one (then
  // the next table is this one patched; a package new to the table or named twice ends that).
  const changes: Array<{ i: number; hash: string; blob: Uint8Array | undefined }> = [];
  let patchable = true;
  const byPackage = new Map<string, { materials: MaterialShader[]; error?: LuminaError }>();
  const none: MaterialShader[] = [];
  const noMaterials = { materials: none };
  let read = 0;
  let next = 0;
  for (const r of packages) {
    if (r.kind !== 'package') continue;
    const i = table.find(r.guid, next);
    if (i >= 0) next = i + 1;
    let blob: Uint8Array | undefined;
    let entry: Pick<PackageMaterials, 'materials' | 'error'> | undefined;
    if (i >= 0 && table.hashIs(i, r.hash)) {
      // Most packages have no materials: no blob view is made for them (the next table needs none).
      if (table.blobEmpty(i)) entry = noMaterials;
      else {
        blob = table.blob(i);
        if (blob?.byteLength) entry = parseBlob(blob);
      }
      if (entry) {
        if (!seen[i]) hits++;
        else patchable = false;
        seen[i] = 1;
      }
    }
    if (!entry) {
      const known = opts.known?.get(r.guid);
      if (known === r.hash) entry = { materials: none };
      else if (typeof known === 'object' && known.hash === r.hash) entry = known;
      else {
        if (opts.materialClassOnly && r.className !== MATERIAL_CLASS) {
          // Left to the scan after the cook, which knows it from the cook worker: its record stays
          // as it was (a stale hash is only a miss), so this pass does not write a table without it
          // that the next one writes again with it.
          if (i >= 0 && !seen[i]) {
            seen[i] = 1;
            hits++;
            guids.push(r.guid);
            hashes.push(table.hash(i));
            blobs.push(table.blobEmpty(i) ? undefined : table.blob(i));
          }
          continue;
        }
        read++;
        entry = await readMaterials(r);
        if (read % YIELD_EVERY === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      }
      changed = true;
      blob = blobOf(entry.materials, entry.error);
      if (i >= 0 && !seen[i]) {
        seen[i] = 1;
        changes.push({ i, hash: r.hash, blob });
      } else patchable = false;
    }
    guids.push(r.guid);
    hashes.push(r.hash);
    blobs.push(blob);
    // Most packages hold no material: they are left out (what the cook asks of them is nothing).
    if (!entry.error && entry.materials.length === 0) continue;
    byPackage.set(r.guid, {
      materials: entry.materials.length ? entry.materials : none,
      error: entry.error && errors.cookFailed(r.file, `${entry.error.field}: ${entry.error.message}`),
    });
  }
  // Unchanged when every package came from the table and every record of it is still asked for.
  if (changed || legacy || hits !== table.count) {
    try {
      fs.mkdirSync(intermediatesDir, { recursive: true });
      // Every record of the table asked for once, some changed: the same bytes as encode's, patched.
      const next = (patchable && guids.length === table.count && !legacy && table.patched(changes)) || MaterialsTable.encode(guids, hashes, blobs);
      writeFileAtomicSync(file, next.data);
      fs.rmSync(path.join(intermediatesDir, LEGACY_MATERIALS_CACHE_FILE), { force: true });
      if (opts.memo) {
        const stamp = stampOf(file);
        opts.memo.last = stamp === undefined ? undefined : { file, stamp, table: next };
      }
    } catch {
      // A cache never fails a cook; the next one reads again.
    }
  }
  return { byPackage, read };
}

/**
 * Packages up to this size are read whole, synchronously, in one read: their tables and (for a
 * material) their exports come from the same bytes. A cold cook scans every shipped package
 * here, most of a few KiB, and the promise API's open/read/read/close round trips per file cost
 * the main thread several times a sync read (measured at 20k assets: ~0.7 s of main-thread time,
 * materials opened twice). Larger ones (textures) read only their tables first.
 */
const WHOLE_READ_MAX = 256 << 10;
/** Packages scanned between yields to the event loop, so the cook's worker messages keep flowing while a cold scan runs beside it. */
const YIELD_EVERY = 64;

async function readMaterials(r: AssetRecord): Promise<PackageMaterials> {
  const out: PackageMaterials = { hash: r.hash, materials: [] };
  try {
    let pkg: LoadedPackage;
    if (r.size <= WHOLE_READ_MAX) {
      let bytes: Buffer;
      try {
        bytes = fs.readFileSync(r.file);
      } catch {
        return out; // unreadable: its own cook reports it
      }
      if (!parsePackageTables(bytes, r.file).exports.some((e) => e.className === MATERIAL_CLASS)) return out;
      pkg = parsePackage(bytes, r.file);
    } else {
      const tables = await readPackageTables(r.file, r.size);
      if (!tables.exports.some((e) => e.className === MATERIAL_CLASS)) return out;
      pkg = await readPackageFile(r.file);
    }
    return materialsOfPackage(pkg, r.packagePath, r.hash);
  } catch (e) {
    if (!isLuminaError(e)) throw e;
    // Unreadable package: its own cook reports it.
  }
  return out;
}

/**
 * The materials of a parsed package (`hash`: of the bytes it was parsed from), exactly as the scan
 * would read them: a cook worker calls this on the package it cooks, so the scan does not read
 * the file again. A package that cannot be decoded has none (its own cook reports it).
 */
export function materialsOfPackage(pkg: LoadedPackage, packagePath: string, hash: string): PackageMaterials {
  const out: PackageMaterials = { hash, materials: [] };
  try {
    pkg.exports.forEach((e, i) => {
      if (e.className !== MATERIAL_CLASS || out.error) return;
      const m = materialOf(decodeExport(pkg, i), `${packagePath}.${e.objectName}`);
      if ('message' in m) out.error = m;
      else if (m.source !== undefined) out.materials.push({ objectPath: `${packagePath}.${e.objectName}`, source: m.source, defines: m.defines });
    });
  } catch (e) {
    if (!isLuminaError(e)) throw e;
    // Unreadable package: its own cook reports it.
  }
  out.materials.sort((a, b) => (a.objectPath < b.objectPath ? -1 : a.objectPath > b.objectPath ? 1 : 0));
  return out;
}

function materialOf(props: Property[], objectPath: string): { source?: string; defines: string[] } | { message: string; field: string } {
  let source: string | undefined;
  const defines: string[] = [];
  for (const p of props) {
    if (p.name === 'ShaderSource') {
      if (p.type !== 'StrProperty') return { field: 'ShaderSource', message: `material ${objectPath} has ShaderSource of type ${p.type}, not StrProperty` };
      source = p.value;
    } else if (p.name === 'ShaderDefines') {
      if (p.type !== 'ArrayProperty' || p.innerType !== 'StrProperty') {
        return { field: 'ShaderDefines', message: `material ${objectPath} has ShaderDefines that is not an ArrayProperty of StrProperty` };
      }
      defines.push(...(p.value as string[]));
    }
  }
  if (source === undefined && defines.length) return { field: 'ShaderDefines', message: `material ${objectPath} has ShaderDefines but no ShaderSource` };
  return { source, defines };
}

/** The record at `r` gets its blob's offset and length, the blob goes at `blobAt + at`; returns the next offset. */
function putBlob(out: Buffer, r: number, blobAt: number, at: number, b: Uint8Array | undefined): number {
  out.writeUInt32LE(at, r + 24);
  out.writeUInt32LE(b?.byteLength ?? 0, r + 28);
  if (!b?.byteLength) return at;
  out.set(b, blobAt + at);
  return at + b.byteLength;
}

/** The table's footer: the xxh64 of everything before it. */
function sealTable(out: Buffer): void {
  out.writeBigUInt64LE(xxh64(out.subarray(0, out.byteLength - FOOTER)), out.byteLength - FOOTER);
}
