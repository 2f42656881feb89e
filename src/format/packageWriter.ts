/**
 * Writing `.lasset` packages, always as version 2, laid out header, import table, export table,
 * object data (exports in table order, packed), thumbnail. The layout is a pure function of the
 * input, so write -> read -> write gives identical bytes.
 */
import { BinaryWriter } from './BinaryWriter.js';
import { writeFName } from './properties.js';
import {
  PACKAGE_HEADER_SIZE,
  PACKAGE_TAG,
  PACKAGE_VERSION_CURRENT,
  type LoadedPackage,
  type PackageToWrite,
} from './packageTypes.js';

export function writePackage(pkg: PackageToWrite): Uint8Array {
  const dataSize = pkg.exports.reduce((n, e) => n + e.data.byteLength, 0);
  const thumb = pkg.thumbnail ?? null;
  if (thumb && thumb.data.byteLength !== thumb.width * thumb.height * 4) {
    throw new RangeError(`thumbnail is ${thumb.data.byteLength} bytes, ${thumb.width}x${thumb.height} RGBA8 needs ${thumb.width * thumb.height * 4}`);
  }
  const w = new BinaryWriter(PACKAGE_HEADER_SIZE + pkg.imports.length * 17 + pkg.exports.length * 64 + dataSize + (thumb ? thumb.data.byteLength + 8 : 0));
  w.u32(PACKAGE_TAG).i32(PACKAGE_VERSION_CURRENT);
  const headerAt = w.pos;
  w.i64(0).i32(pkg.imports.length).i64(0).i32(pkg.exports.length).i64(0).i64(0);

  const importTableOffset = w.pos;
  for (const imp of pkg.imports) w.guid(imp.guid).u8(imp.type);

  const exportTableOffset = w.pos;
  let offset = 0;
  for (const e of pkg.exports) {
    w.guid(e.objectGuid);
    writeFName(w, e.objectName);
    writeFName(w, e.className);
    w.i64(offset).i64(e.data.byteLength).u32(e.objectFlags >>> 0).u32(e.assetFlags >>> 0);
    offset += e.data.byteLength;
  }

  const objectDataOffset = w.pos;
  for (const e of pkg.exports) w.bytes(e.data);

  let thumbnailDataOffset = 0;
  if (thumb) {
    thumbnailDataOffset = w.pos;
    w.u32(thumb.width).u32(thumb.height).bytes(thumb.data);
  }

  w.patchI64(headerAt, importTableOffset);
  w.patchI64(headerAt + 12, exportTableOffset);
  w.patchI64(headerAt + 24, objectDataOffset);
  w.patchI64(headerAt + 32, thumbnailDataOffset);
  return w.finish();
}

/** The writer's input for a package that was read: same tables, same bytes per export. */
export function toWritable(pkg: LoadedPackage): PackageToWrite {
  return {
    imports: pkg.imports,
    exports: pkg.exports.map((e, i) => ({
      objectGuid: e.objectGuid,
      objectName: e.objectName,
      className: e.className,
      objectFlags: e.objectFlags,
      assetFlags: e.assetFlags,
      data: pkg.exportData[i],
    })),
    thumbnail: pkg.thumbnail,
  };
}
