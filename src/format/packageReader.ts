/**
 * Reading `.lasset` packages. Nothing read from the file is trusted before it is checked against
 * the file size: counts are capped and multiplied by the smallest entry size before any array is
 * made, and every offset is placed inside the region the layout allows.
 *
 * `readPackageTables` reads only the header and tables (the start of the file, up to
 * objectDataOffset) with positional reads: that is all the registry ever needs.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { BinaryReader, plainBytes } from './BinaryReader.js';
import { decodeExportLenient, decodeExportObject, readFName, type PropertyContext } from './properties.js';
import { errors, asLuminaError, type LuminaLog } from '../errors.js';
import {
  EXPORT_ENTRY_MIN_SIZE,
  IMPORT_ENTRY_SIZE,
  MAX_TABLE_COUNT,
  PACKAGE_HEADER_SIZE,
  PACKAGE_TAG,
  type DependencyType,
  type ExportEntry,
  type ExportObject,
  type ImportEntry,
  type LoadedPackage,
  type PackageHeader,
  type PackageTables,
  type Property,
  type Thumbnail,
  type UndecodedProperty,
} from './packageTypes.js';
import { readAt } from '../util/readAt.js';

/** Largest thumbnail accepted; anything bigger is not a thumbnail. */
const MAX_THUMBNAIL_SIDE = 8192;

/** Parse and check the 48-byte header. `fileSize` bounds every offset in it. */
export function parseHeader(r: BinaryReader, fileSize: number): PackageHeader {
  if (fileSize < PACKAGE_HEADER_SIZE || r.length < PACKAGE_HEADER_SIZE) {
    throw errors.packageTruncated(r.file, 'header', 0, PACKAGE_HEADER_SIZE, Math.min(fileSize, r.length));
  }
  r.pos = 0;
  const tag = r.u32('tag');
  if (tag !== PACKAGE_TAG) {
    r.fail('tag', `expected 0x9E2A83C1, found 0x${tag.toString(16).toUpperCase().padStart(8, '0')}: not a Lumina package`, 0);
  }
  const version = r.i32('version');
  if (version !== 1 && version !== 2) throw errors.packageVersion(r.file, version);

  const importTableOffset = r.i64('importTableOffset');
  const importCount = checkCount(r, r.i32('importCount'), 'importCount', 16);
  const exportTableOffset = r.i64('exportTableOffset');
  const exportCount = checkCount(r, r.i32('exportCount'), 'exportCount', 28);
  const objectDataOffset = r.i64('objectDataOffset');
  const thumbnailDataOffset = r.i64('thumbnailDataOffset');

  const importEnd = importTableOffset + importCount * IMPORT_ENTRY_SIZE;
  checkOffset(r, 'importTableOffset', 8, importTableOffset, PACKAGE_HEADER_SIZE, fileSize);
  if (importEnd > fileSize) {
    throw errors.packageTruncated(r.file, 'import table', importTableOffset, importCount * IMPORT_ENTRY_SIZE, fileSize);
  }
  checkOffset(r, 'exportTableOffset', 20, exportTableOffset, importEnd, fileSize);
  if (exportTableOffset + exportCount * EXPORT_ENTRY_MIN_SIZE > fileSize) {
    throw errors.packageTruncated(r.file, 'export table', exportTableOffset, exportCount * EXPORT_ENTRY_MIN_SIZE, fileSize);
  }
  checkOffset(r, 'objectDataOffset', 32, objectDataOffset, exportTableOffset + exportCount * EXPORT_ENTRY_MIN_SIZE, fileSize);
  if (thumbnailDataOffset !== 0) checkOffset(r, 'thumbnailDataOffset', 40, thumbnailDataOffset, objectDataOffset, fileSize - 8);
  return { version, importTableOffset, importCount, exportTableOffset, exportCount, objectDataOffset, thumbnailDataOffset };
}

function checkCount(r: BinaryReader, n: number, field: string, at: number): number {
  if (n < 0) r.fail(field, `negative count ${n}`, at);
  if (n > MAX_TABLE_COUNT) r.fail(field, `${n} exceeds the limit of ${MAX_TABLE_COUNT}`, at);
  return n;
}

function checkOffset(r: BinaryReader, field: string, at: number, value: number, min: number, max: number): void {
  if (value < min || value > max) {
    r.fail(field, `offset ${value} is outside the allowed range ${min}..${max} (file is ${r.fileSize} bytes)`, at);
  }
}

/**
 * Parse header, imports and exports from `bytes`, which holds the file from offset 0 at least up to
 * objectDataOffset (or the whole file). `fileSize` is the real size of the file on disk.
 */
export function parsePackageTables(bytes: Uint8Array, file: string, fileSize: number = bytes.byteLength): PackageTables {
  bytes = plainBytes(bytes);
  // First without a field name per read: a package's every import and export read built one
  // (`export[3].className`), ~10 strings per entry for messages almost never made. Anything off
  // (a failure, a NAME_None warning) reads it again with the names, which makes the message.
  try {
    return readTables(bytes, file, fileSize, false);
  } catch {
    return readTables(bytes, file, fileSize, true);
  }
}

/** Thrown by an unnamed read (parsePackageTables) at a warning, whose message needs the field's name. */
const NAMES_NEEDED = new Error('field names needed');
const needNames = (): never => {
  throw NAMES_NEEDED;
};

function readTables(bytes: Uint8Array, file: string, fileSize: number, named: boolean): PackageTables {
  const r = new BinaryReader(bytes, file, 0, fileSize);
  const header = parseHeader(r, fileSize);
  if (bytes.byteLength < header.objectDataOffset) {
    throw errors.packageTruncated(file, 'tables', 0, header.objectDataOffset, bytes.byteLength);
  }
  // The tables may not run into the object data.
  const tables = new BinaryReader(bytes.subarray(0, header.objectDataOffset), file, 0, fileSize);

  tables.pos = header.importTableOffset;
  const imports: ImportEntry[] = new Array(header.importCount);
  for (let i = 0; i < header.importCount; i++) {
    const guid = tables.guid(named ? `import[${i}].guid` : '');
    const at = tables.pos;
    const type = tables.u8(named ? `import[${i}].type` : '');
    if (type !== 0 && type !== 1) tables.fail(`import[${i}].type`, `dependency type ${type} is neither 0 (Hard) nor 1 (Soft)`, at);
    imports[i] = { guid, type: type as DependencyType };
  }

  tables.pos = header.exportTableOffset;
  const warnings: LuminaLog[] = [];
  const onNameNone = named ? (field: string, offset: number) => warnings.push(errors.packageNameNone(file, field, offset).toLog()) : needNames;
  const dataEnd = header.thumbnailDataOffset !== 0 ? header.thumbnailDataOffset : fileSize;
  const dataSize = dataEnd - header.objectDataOffset;
  const exports: ExportEntry[] = new Array(header.exportCount);
  const names = new Set<string>();
  for (let i = 0; i < header.exportCount; i++) {
    const f = named ? `export[${i}]` : '';
    const objectGuid = tables.guid(named ? `${f}.objectGuid` : '');
    const nameAt = tables.pos;
    const objectName = readFName(tables, named ? `${f}.objectName` : '', header.version, onNameNone);
    const className = readFName(tables, named ? `${f}.className` : '', header.version, onNameNone);
    const offAt = tables.pos;
    const offset = tables.i64(named ? `${f}.offset` : '');
    const size = tables.i64(named ? `${f}.size` : '');
    const objectFlags = tables.u32(named ? `${f}.objectFlags` : '');
    const assetFlags = tables.u32(named ? `${f}.assetFlags` : '');
    if (offset < 0) tables.fail(`${f}.offset`, `negative offset ${offset}`, offAt);
    if (size < 0) tables.fail(`${f}.size`, `negative size ${size}`, offAt + 8);
    if (offset + size > dataSize) {
      tables.fail(`${f}.size`, `export bytes ${offset}..${offset + size} run past the object data (${dataSize} bytes)`, offAt + 8);
    }
    if (objectName !== null) {
      if (names.has(objectName)) tables.fail(`${f}.objectName`, `'${objectName}' is not unique within the package`, nameAt);
      names.add(objectName);
    }
    exports[i] = { objectGuid, objectName, className, offset, size, objectFlags, assetFlags };
  }

  // Exports may be read alone, so their byte ranges must not overlap. A plain loop, not
  // map().filter(): the array map() gives back differs in elements kind with the table (empty,
  // holey), and the `.filter` load on it deoptimized readTables' OSR code at every call (~1.9k
  // eager deopts per cook worker in a cold 20k cook, --trace-deopt).
  const order: number[] = [];
  for (let i = 0; i < exports.length; i++) if (exports[i].size > 0) order.push(i);
  order.sort((a, b) => exports[a].offset - exports[b].offset);
  for (let k = 1; k < order.length; k++) {
    const prev = exports[order[k - 1]];
    const cur = exports[order[k]];
    if (prev.offset + prev.size > cur.offset) {
      throw errors.packageInvalid(
        file,
        `export[${order[k]}].offset`,
        header.objectDataOffset + cur.offset,
        `export bytes overlap export[${order[k - 1]}] (${prev.offset}..${prev.offset + prev.size})`,
      );
    }
  }
  return warnings.length ? { file, fileSize, header, imports, exports, warnings } : { file, fileSize, header, imports, exports };
}

/** Parse a whole package held in memory: tables, every export's bytes and the thumbnail. */
export function parsePackage(bytes: Uint8Array, file: string): LoadedPackage {
  const tables = parsePackageTables(bytes, file, bytes.byteLength);
  const { objectDataOffset, thumbnailDataOffset } = tables.header;
  const exportData = tables.exports.map((e) => bytes.subarray(objectDataOffset + e.offset, objectDataOffset + e.offset + e.size));
  let thumbnail: Thumbnail | null = null;
  if (thumbnailDataOffset !== 0) {
    const r = new BinaryReader(bytes, file, 0, bytes.byteLength, thumbnailDataOffset);
    const width = r.u32('thumbnail.width');
    const height = r.u32('thumbnail.height');
    if (width > MAX_THUMBNAIL_SIDE || height > MAX_THUMBNAIL_SIDE) {
      r.fail('thumbnail.width', `${width}x${height} exceeds ${MAX_THUMBNAIL_SIDE}x${MAX_THUMBNAIL_SIDE}`, thumbnailDataOffset);
    }
    const need = width * height * 4;
    if (need !== r.remaining) {
      if (need > r.remaining) throw errors.packageTruncated(file, 'thumbnail.data', r.offset, need, bytes.byteLength);
      r.fail('thumbnail.data', `${r.remaining - need} bytes follow the ${width}x${height} thumbnail`, r.pos + need);
    }
    thumbnail = { width, height, data: r.bytesView(need, 'thumbnail.data') };
  }
  // Spelled out, not `{ ...tables, exportData, thumbnail }`: V8 (11.3) gives an object literal that
  // starts with a spread and then adds keys a hidden class of its own on every call, so every
  // package had its own map (every reader of a package went megamorphic). Same keys, same order.
  const { file: f, fileSize: size, header, imports, exports, warnings } = tables;
  return warnings ? { file: f, fileSize: size, header, imports, exports, warnings, exportData, thumbnail } : { file: f, fileSize: size, header, imports, exports, exportData, thumbnail };
}

/** Read a whole package file. */
export async function readPackageFile(file: string): Promise<LoadedPackage> {
  let bytes: Buffer;
  try {
    bytes = await fsp.readFile(file);
  } catch (e) {
    throw asLuminaError(e, file, 'read');
  }
  return parsePackage(bytes, file);
}

/**
 * Read only the header and tables of a package on disk: two positional reads, never the object
 * data. `fileSize` may be passed when the caller already has it from stat.
 */
export async function readPackageTables(file: string, fileSize?: number): Promise<PackageTables> {
  let fh: fsp.FileHandle | undefined;
  try {
    fh = await fsp.open(file, 'r');
    const size = fileSize ?? (await fh.stat()).size;
    const head = Buffer.alloc(Math.min(PACKAGE_HEADER_SIZE, size));
    await readFully(fh, head, 0);
    const header = parseHeader(new BinaryReader(head, file, 0, size), size);
    const prefix = Buffer.alloc(header.objectDataOffset);
    head.copy(prefix, 0, 0, Math.min(head.byteLength, prefix.byteLength));
    if (prefix.byteLength > head.byteLength) await readFully(fh, prefix.subarray(head.byteLength), head.byteLength);
    return parsePackageTables(prefix, file, size);
  } catch (e) {
    throw asLuminaError(e, file, 'read');
  } finally {
    await fh?.close();
  }
}

async function readFully(fh: fsp.FileHandle, into: Uint8Array, position: number): Promise<void> {
  if ((await readAt(fh, into, position)) < into.byteLength) throw new Error('unexpected end of file');
}

/** The decode context of a package's exports: references checked against its tables. */
export function exportContext(pkg: LoadedPackage, onNameNone?: PropertyContext['onNameNone']): PropertyContext {
  return { version: pkg.header.version, importCount: pkg.imports.length, exportCount: pkg.exports.length, imports: pkg.imports, onNameNone };
}

function exportReader(pkg: LoadedPackage, index: number): BinaryReader {
  const e = pkg.exports[index];
  return new BinaryReader(pkg.exportData[index], pkg.file, pkg.header.objectDataOffset + e.offset, pkg.fileSize);
}

/** Decode export `index`'s tagged properties (a native tail after them is accepted, not returned). */
export function decodeExport(pkg: LoadedPackage, index: number): Property[] {
  return decodeExportData(pkg, index).properties;
}

/**
 * Decode export `index`'s object data: tagged properties, whether a None ended them, and the
 * native tail byte for byte. Each `NAME_None` read in a version 2 package is passed to `onNameNone`.
 */
export function decodeExportData(pkg: LoadedPackage, index: number, onNameNone?: PropertyContext['onNameNone']): ExportObject {
  return decodeExportObject(exportReader(pkg, index), exportContext(pkg, onNameNone));
}

/** Like decodeExportData, but a property whose value does not decode is kept as its bytes and error. */
export function decodeExportForDisplay(
  pkg: LoadedPackage,
  index: number,
  onNameNone?: PropertyContext['onNameNone'],
): { items: Array<Property | UndecodedProperty>; terminated: boolean; tail: Uint8Array } {
  return decodeExportLenient(exportReader(pkg, index), exportContext(pkg, onNameNone));
}

/** The export that is the package's asset: its objectName equals the file's stem. -1 if none. */
export function findAssetExport(tables: Pick<PackageTables, 'exports' | 'file'>): number {
  const stem = path.basename(tables.file).replace(/\.lasset$/i, '');
  return tables.exports.findIndex((e) => e.objectName === stem);
}
