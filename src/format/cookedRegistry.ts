/**
 * The cooked asset registry, `AssetRegistry.bin` (FORMAT.md "Cooked asset registry", magic `LREG`):
 * what the runtime needs to find any cooked asset by GUID or path without opening packages.
 *
 * The cook writes the registry of ALL cooked assets (every chunk) into every pak, so the bytes are
 * identical in each pak: a runtime that mounts only some chunks still knows every asset and can
 * tell "not installed" from "does not exist".
 *
 * Writing is canonical: assets sorted by GUID (as FORMAT.md requires) and text assets sorted by
 * GUID too (FORMAT.md leaves their order open; sorting keeps the bytes a function of the content).
 * Reading is strict about what FORMAT.md fixes: asset GUIDs strictly increasing, every count
 * checked against the bytes left before anything is allocated, dependency types 0/1, no bytes
 * left over, and the trailing xxh64.
 */
import { BinaryReader } from './BinaryReader.js';
import { readFName } from './properties.js';
import { errors, isLuminaError, type LuminaError } from '../errors.js';
import { xxh64, hashHex } from '../util/hash.js';
import { sortedByString } from '../util/stringOrder.js';
import type { DependencyType } from './packageTypes.js';

export const REGISTRY_MAGIC = 0x4745524c; // 'LREG'
export const REGISTRY_VERSION = 1;

/** Smallest asset entry: GUID + two empty FNames + empty FString + flags + dependencyCount. */
const MIN_ASSET_BYTES = 16 + 4 + 4 + 4 + 4 + 4;
const DEPENDENCY_BYTES = 17;
/** Smallest text entry: GUID + empty FString. */
const MIN_TEXT_BYTES = 16 + 4;
const TRAILER_BYTES = 8;

export interface CookedRegistryAsset {
  guid: string;
  /** The asset's object name; null is None. */
  name: string | null;
  className: string | null;
  /** Package path without extension, e.g. `/Game/Materials/Rock`. */
  packagePath: string;
  /** assetFlags (0x1 Primary). */
  flags: number;
  dependencies: ReadonlyArray<{ guid: string; type: DependencyType }>;
}

export interface CookedRegistryText {
  guid: string;
  /** Virtual path with extension, e.g. `/Game/UI/Menu.rml`: text assets load by path. */
  path: string;
}

export interface CookedRegistry {
  assets: CookedRegistryAsset[];
  textAssets: CookedRegistryText[];
}

const guidOf = (a: { guid: string }): string => a.guid;

/**
 * Encode the registry. Inputs may come in any order; `AssetRecord`s can be passed as they are
 * (only the fields above are read). Requires `initHash()`. Throws RangeError on a duplicate GUID,
 * which would make lookups ambiguous (the registry rejects duplicates long before this).
 */
export function encodeCookedRegistry(assets: readonly CookedRegistryAsset[], textAssets: readonly CookedRegistryText[]): Uint8Array {
  const { sorted, texts } = inRegistryOrder(assets, textAssets);
  // Sized exactly, then written in place, GUIDs and ASCII strings byte by byte: at 12k assets a
  // Buffer.write per GUID and string (~110k calls) was 70-100 ms of a one-file change's cook; at a
  // million assets exact sizing is the difference between seconds and a fraction of one.
  let size = 12 + 4 + TRAILER_BYTES;
  for (const a of sorted) size += assetEntryBytes(a);
  for (const t of texts) size += textEntryBytes(t);
  const w = new RegistryWriter(Buffer.alloc(size));
  w.header(sorted.length);
  for (const a of sorted) w.asset(a);
  w.texts(texts);
  return w.seal(size);
}

/**
 * encodeCookedRegistry's bytes, with the asset entries that cannot differ copied from `prev`, an
 * earlier encoding (which the caller has checked is what it wrote: its hash) in runs, instead of
 * encoded again: at 12k assets encoding every entry was ~40 ms of a one-file change, at a million
 * seconds. An entry of `prev` serves an asset with the same GUID, name and package path when
 * `sameContent(asset, k)` says prev's entry k was made from the same package content (class,
 * flags and dependencies are a function of it). Text assets are encoded (a GUID and a path each).
 * A `prev` that does not parse as a registry serves nothing. Requires `initHash()`.
 */
export function encodeCookedRegistryReusing<A extends CookedRegistryAsset>(
  assets: readonly A[],
  textAssets: readonly CookedRegistryText[],
  prev: Uint8Array,
  sameContent: (asset: A, k: number) => boolean,
): Uint8Array {
  const starts = assetEntryStarts(prev);
  if (!starts) return encodeCookedRegistry(assets, textAssets);
  const { sorted, texts } = inRegistryOrder(assets, textAssets);
  const prevCount = starts.length - 1;
  // Per asset: the entry of prev it is (a copy) or -1 (encoded). Both lists are in GUID order: one merge.
  const from = new Int32Array(sorted.length);
  let size = 12 + 4 + TRAILER_BYTES;
  let k = 0;
  for (let i = 0; i < sorted.length; i++) {
    const a = sorted[i];
    let c = 1;
    while (k < prevCount && (c = guidOrder(prev, starts[k], a.guid)) < 0) k++;
    let e = -1;
    if (k < prevCount && c === 0) {
      let p = starts[k] + 16;
      // GUID, name, className, packagePath: the name and the path are the record's own (the class is the content's).
      if (stringIs(prev, p, fname(a.name)) >= 0) {
        p = skipString(prev, skipString(prev, p));
        if (stringIs(prev, p, a.packagePath) >= 0 && sameContent(a, k)) e = k;
      }
      k++;
    }
    from[i] = e;
    size += e >= 0 ? starts[e + 1] - starts[e] : assetEntryBytes(a);
  }
  for (const t of texts) size += textEntryBytes(t);
  const w = new RegistryWriter(Buffer.alloc(size));
  w.header(sorted.length);
  // A run of consecutive entries of prev goes out as one copy.
  let runFrom = -1;
  let runTo = -1;
  const flush = () => {
    if (runFrom < 0) return;
    w.out.set(prev.subarray(runFrom, runTo), w.p);
    w.p += runTo - runFrom;
    runFrom = runTo = -1;
  };
  for (let i = 0; i < sorted.length; i++) {
    const e = from[i];
    if (e >= 0) {
      if (runTo !== starts[e]) {
        flush();
        runFrom = starts[e];
      }
      runTo = starts[e + 1];
      continue;
    }
    flush();
    w.asset(sorted[i]);
  }
  flush();
  w.texts(texts);
  return w.seal(size);
}

/**
 * Where each asset entry of an encoded registry starts (and, last, where the text assets'
 * count is), walking only lengths; undefined when the bytes do not hold that many entries.
 */
function assetEntryStarts(bytes: Uint8Array): Uint32Array | undefined {
  const end = bytes.byteLength - TRAILER_BYTES;
  if (end < 12 + 4) return undefined;
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (v.getUint32(0, true) !== REGISTRY_MAGIC || v.getUint32(4, true) !== REGISTRY_VERSION) return undefined;
  const count = v.getUint32(8, true);
  if (count * MIN_ASSET_BYTES > end - 12) return undefined;
  const starts = new Uint32Array(count + 1);
  let p = 12;
  for (let i = 0; i < count; i++) {
    starts[i] = p;
    p += 16;
    for (let s = 0; s < 3; s++) {
      if (p + 4 > end) return undefined;
      p += 4 + v.getUint32(p, true);
    }
    if (p + 8 > end) return undefined;
    p += 8 + DEPENDENCY_BYTES * v.getUint32(p + 4, true);
    if (p > end) return undefined;
  }
  starts[count] = p;
  return starts;
}

/** How the GUID at `at` orders against `hex` (lowercase hex orders as its bytes do): < 0 before, 0 the same, > 0 after (or `hex` is not a GUID). */
function guidOrder(bytes: Uint8Array, at: number, hex: string): number {
  if (hex.length !== 32) return 1;
  for (let i = 0; i < 16; i++) {
    const hi = hex.charCodeAt(2 * i);
    const lo = hex.charCodeAt(2 * i + 1);
    const b = ((hi < 128 ? HEX_VALUE[hi] : -1) << 4) | (lo < 128 ? HEX_VALUE[lo] : -1);
    if (b < 0) return 1;
    if (bytes[at + i] !== b) return bytes[at + i] - b;
  }
  return 0;
}

/** Is the FString at `at` the ASCII string `s`? Its position when it is, else -1 (non-ASCII: -1, the entry is encoded). */
function stringIs(bytes: Uint8Array, at: number, s: string): number {
  if (at + 4 > bytes.byteLength) return -1;
  const n = bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24);
  if (n !== s.length || at + 4 + n > bytes.byteLength) return -1;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80 || bytes[at + 4 + i] !== c) return -1;
  }
  return at;
}

function skipString(bytes: Uint8Array, at: number): number {
  return at + 4 + (bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24));
}

/** Value of each lowercase hex digit by char code; -1 for anything else. */
const HEX_VALUE = new Int8Array(128).fill(-1);
for (let c = 0; c < 10; c++) HEX_VALUE[0x30 + c] = c;
for (let c = 0; c < 6; c++) HEX_VALUE[0x61 + c] = 10 + c;

/** The assets and text assets in GUID order (sorted copies only when they are not); a GUID twice is a RangeError. */
function inRegistryOrder<A extends CookedRegistryAsset>(assets: readonly A[], textAssets: readonly CookedRegistryText[]) {
  // The cook passes its assets in GUID order already.
  const sorted = inGuidOrder(assets) ? assets : sortedByString(assets, guidOf);
  const texts = inGuidOrder(textAssets) ? textAssets : sortedByString(textAssets, guidOf);
  for (const list of [sorted, texts] as const) {
    for (let i = 1; i < list.length; i++) if (list[i].guid === list[i - 1].guid) throw new RangeError(`duplicate GUID ${list[i].guid} in the cooked registry`);
  }
  return { sorted, texts };
}

const fname = (n: string | null) => (n === null || n === 'NAME_None' ? '' : n);

/** An asset entry's encoded size. */
function assetEntryBytes(a: CookedRegistryAsset): number {
  return 16 + stringBytes(fname(a.name)) + stringBytes(fname(a.className)) + stringBytes(a.packagePath) + 8 + DEPENDENCY_BYTES * a.dependencies.length;
}

/** A text asset entry's encoded size. */
function textEntryBytes(t: CookedRegistryText): number {
  return 16 + stringBytes(t.path);
}

/** Writes a registry's fields in place into a buffer sized exactly beforehand. */
class RegistryWriter {
  p = 0;
  constructor(readonly out: Buffer) {}

  u32(v: number): void {
    this.out.writeUInt32LE(v, this.p);
    this.p += 4;
  }

  str(s: string): void {
    const n = utf8Length(s);
    this.u32(n);
    if (n === s.length) for (let i = 0; i < n; i++) this.out[this.p + i] = s.charCodeAt(i);
    else this.out.write(s, this.p, 'utf8');
    this.p += n;
  }

  guid(hex: string): void {
    putGuid(this.out, this.p, hex);
    this.p += 16;
  }

  header(assetCount: number): void {
    this.u32(REGISTRY_MAGIC);
    this.u32(REGISTRY_VERSION);
    this.u32(assetCount);
  }

  asset(a: CookedRegistryAsset): void {
    this.guid(a.guid);
    this.str(fname(a.name));
    this.str(fname(a.className));
    this.str(a.packagePath);
    this.u32(a.flags >>> 0);
    this.u32(a.dependencies.length);
    for (const d of a.dependencies) {
      this.guid(d.guid);
      this.out[this.p++] = d.type & 0xff;
    }
  }

  texts(texts: readonly CookedRegistryText[]): void {
    this.u32(texts.length);
    for (const t of texts) {
      this.guid(t.guid);
      this.str(t.path);
    }
  }

  /** The xxh64 trailer over what was written, which must be exactly the size computed. */
  seal(size: number): Uint8Array {
    if (this.p !== size - TRAILER_BYTES) throw new Error(`cooked registry: wrote ${this.p} bytes of ${size - TRAILER_BYTES}`);
    this.out.writeBigUInt64LE(xxh64(this.out.subarray(0, this.p)), this.p);
    return new Uint8Array(this.out.buffer, this.out.byteOffset, size);
  }
}

/** 32 lowercase hex digits as 16 bytes at `at`; RangeError for anything else. */
function putGuid(out: Uint8Array, at: number, hex: string): void {
  if (hex.length !== 32) throw new RangeError(`not a GUID: ${hex}`);
  for (let i = 0; i < 16; i++) {
    const hi = hex.charCodeAt(2 * i);
    const lo = hex.charCodeAt(2 * i + 1);
    const v = ((hi < 128 ? HEX_VALUE[hi] : -1) << 4) | (lo < 128 ? HEX_VALUE[lo] : -1);
    if (v < 0) throw new RangeError(`not a GUID: ${hex}`);
    out[at + i] = v;
  }
}

/** UTF-8 length of `s`: its length when it is all ASCII (the common case, no encoding). */
function utf8Length(s: string): number {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return Buffer.byteLength(s, 'utf8');
  return s.length;
}

function inGuidOrder(list: ReadonlyArray<{ guid: string }>): boolean {
  for (let i = 1; i < list.length; i++) if (list[i - 1].guid > list[i].guid) return false;
  return true;
}

/** UTF-8 length of an FString's bytes; more than 65,535 is refused like BinaryWriter.fstring. */
function stringBytes(s: string): number {
  const n = utf8Length(s);
  if (n > 65_535) throw new RangeError(`FString of ${n} bytes exceeds 65,535`);
  return 4 + n;
}

/** Re-raise the reader's PACKAGE_* errors as REGISTRY_INVALID, keeping field and offset. */
function asRegistryError(e: unknown, file: string): LuminaError | unknown {
  if (isLuminaError(e) && (e.code === 'PACKAGE_TRUNCATED' || e.code === 'PACKAGE_INVALID')) {
    const field = e.field ?? 'registry';
    const why = e.message.startsWith(`${field}: `) ? e.message.slice(field.length + 2) : e.message;
    return errors.registryInvalid(file, field, why, e.offset);
  }
  return e;
}

/**
 * Decode and verify `AssetRegistry.bin`. `file` names the source in errors (for a registry read
 * out of a pak, pass e.g. `Main.pak:/AssetRegistry.bin`). Requires `initHash()`.
 * Throws REGISTRY_INVALID naming the field and offset.
 */
export function decodeCookedRegistry(bytes: Uint8Array, file: string): CookedRegistry {
  if (bytes.byteLength < 12 + 4 + TRAILER_BYTES) {
    throw errors.registryInvalid(file, 'header', `needs at least ${12 + 4 + TRAILER_BYTES} bytes but the file is ${bytes.byteLength}`, 0);
  }
  const bodyEnd = bytes.byteLength - TRAILER_BYTES;
  const stored = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(bodyEnd, true);
  const actual = xxh64(bytes.subarray(0, bodyEnd));
  if (stored !== actual) {
    throw errors.registryInvalid(file, 'xxh64', `contents hash to ${hashHex(actual)}, trailer says ${hashHex(stored)}`, bodyEnd);
  }
  const r = new BinaryReader(bytes.subarray(0, bodyEnd), file, 0, bytes.byteLength);
  try {
    const magic = r.u32('magic');
    if (magic !== REGISTRY_MAGIC) r.fail('magic', `0x${magic.toString(16).padStart(8, '0')} is not LREG`, 0);
    const version = r.u32('version');
    if (version !== REGISTRY_VERSION) r.fail('version', `version ${version} is not supported (this reads ${REGISTRY_VERSION})`, 4);
    const assetCount = checkedCount(r, 'assetCount', MIN_ASSET_BYTES, 4);
    const assets: CookedRegistryAsset[] = new Array(assetCount);
    let prev = '';
    for (let i = 0; i < assetCount; i++) {
      const f = `asset[${i}]`;
      const at = r.pos;
      const guid = r.guid(`${f}.guid`);
      if (i > 0 && guid <= prev) r.fail(`${f}.guid`, guid === prev ? `duplicate GUID ${guid}` : `${guid} is not sorted after ${prev}`, at);
      prev = guid;
      const name = readFName(r, `${f}.assetName`, 2);
      const className = readFName(r, `${f}.className`, 2);
      const packagePath = r.fstring(`${f}.packagePath`);
      const flags = r.u32(`${f}.assetFlags`);
      const depCount = checkedCount(r, `${f}.dependencyCount`, DEPENDENCY_BYTES, 4);
      const dependencies: Array<{ guid: string; type: DependencyType }> = new Array(depCount);
      for (let d = 0; d < depCount; d++) {
        const dg = r.guid(`${f}.dependency[${d}].guid`);
        const tAt = r.pos;
        const type = r.u8(`${f}.dependency[${d}].type`);
        if (type !== 0 && type !== 1) r.fail(`${f}.dependency[${d}].type`, `dependency type ${type} is neither 0 (Hard) nor 1 (Soft)`, tAt);
        dependencies[d] = { guid: dg, type: type as DependencyType };
      }
      assets[i] = { guid, name, className, packagePath, flags, dependencies };
    }
    const textCount = checkedCount(r, 'textAssetCount', MIN_TEXT_BYTES, 0);
    const textAssets: CookedRegistryText[] = new Array(textCount);
    const seen = new Set<string>();
    for (let i = 0; i < textCount; i++) {
      const at = r.pos;
      const guid = r.guid(`textAsset[${i}].guid`);
      if (seen.has(guid)) r.fail(`textAsset[${i}].guid`, `duplicate GUID ${guid}`, at);
      seen.add(guid);
      textAssets[i] = { guid, path: r.fstring(`textAsset[${i}].path`) };
    }
    if (r.remaining !== 0) r.fail('textAssetCount', `${r.remaining} bytes follow the last text asset`, r.pos);
    return { assets, textAssets };
  } catch (e) {
    throw asRegistryError(e, file);
  }
}

/** Read a u32 count and check `count * minBytes` fits in what is left (after `reserve` more bytes). */
function checkedCount(r: BinaryReader, field: string, minBytes: number, reserve: number): number {
  const at = r.pos;
  const n = r.u32(field);
  if (n * minBytes > r.remaining - reserve) {
    r.fail(field, `${n} entries need at least ${n * minBytes} bytes, ${Math.max(0, r.remaining - reserve)} remain`, at);
  }
  return n;
}
