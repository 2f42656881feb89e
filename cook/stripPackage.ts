/**
 * Cooking one package's bytes (FORMAT.md "Cooked package"): drop the thumbnail; drop Transient,
 * MarkedDestroy and EditorOnly exports and exports whose class is under an editor-only prefix;
 * renumber every PackageIndex of the kept exports (tags, arrays, nested structs) to the exports
 * that remain, nulling references to removed ones; write a version 2 package.
 *
 * Pure over memory: reading the file and writing the LCKD container are the caller's job.
 *
 * The import table is kept exactly as it is: imports name whole assets by GUID, not objects in
 * this package, so stripping never changes them, and a SoftObjectProperty's GUID stays valid.
 * Because imports are GUIDs, a package's cooked bytes depend on its own content and the cook
 * settings only, never on the content of what it imports: the cook cache and the watch daemon
 * rely on this to never re-cook referrers when a dependency changes.
 */
import { BinaryReader } from '../src/format/BinaryReader.js';
import { decodeExportData, exportContext, findAssetExport } from '../src/format/packageReader.js';
import { writePackage } from '../src/format/packageWriter.js';
import { encodeExportObject, mapObjectRefs } from '../src/format/properties.js';
import { decodeNativeTail, encodeNativeTail } from '../src/format/nativeTail.js';
import { ObjectFlags, type LoadedPackage, type PackageToWrite, type Property } from '../src/format/packageTypes.js';
import { errors, type LuminaLog } from '../src/errors.js';
import { scanExportObject } from '../src/format/exportScan.js';
import { ClassSchemas } from '../src/schemas/classSchemas.js';

/** Object flags that mean "never ships". */
export const STRIP_OBJECT_FLAGS = ObjectFlags.Transient | ObjectFlags.MarkedDestroy | ObjectFlags.EditorOnly;

export interface StripOptions {
  /** Exports whose className starts with one of these are stripped (default `/Script/Editor.`). */
  editorOnlyClassPrefixes: readonly string[];
  /**
   * Replace a kept export's decoded properties before they are renumbered and written (the
   * texture glue swaps SourceData for PlatformData here). Return undefined to keep them.
   */
  transformExport?: (index: number, props: Property[], pkg: LoadedPackage) => Promise<Property[] | undefined>;
  /**
   * The classes transformExport may change: exports of other classes are never decoded for it
   * (they are walked and renumbered in place). Without it every export goes to transformExport.
   */
  transformsClass?: (className: string | null) => boolean;
  /** Class schemas: a native tail whose class has one is decoded and its references renumbered. */
  schemas?: ClassSchemas;
  /** @internal Tests: false decodes every export (the path the in-place walk must give the bytes of). */
  inPlace?: boolean;
}

export interface CookedPackageBytes {
  /** A version 2 package without thumbnail. */
  raw: Uint8Array;
  strippedExports: number;
  /** References (ObjectProperty values) that pointed at a removed export and are now null. */
  nulledRefs: number;
  /** Exports the transform replaced (textures cooked). */
  transformedExports: number;
  /** Non-fatal findings (PACKAGE_NAME_NONE), each naming the file and offset. */
  warnings: LuminaLog[];
}

/** Why export `i` is stripped, or null when it ships. */
export function stripReason(pkg: LoadedPackage, i: number, prefixes: readonly string[]): string | null {
  const e = pkg.exports[i];
  if (e.objectFlags & ObjectFlags.Transient) return 'Transient';
  if (e.objectFlags & ObjectFlags.MarkedDestroy) return 'MarkedDestroy';
  if (e.objectFlags & ObjectFlags.EditorOnly) return 'EditorOnly';
  const cls = e.className ?? '';
  for (const p of prefixes) if (p !== '' && cls.startsWith(p)) return `class under ${p}`;
  return null;
}

/**
 * Cook a parsed package. Every kept export's property stream is validated as the decoder reads it
 * (a stream that lies about its sizes is a cook failure, PACKAGE_INVALID naming the file); exports
 * whose references do not change keep their original bytes, which are what the decode accepted.
 *
 * Most exports are not decoded at all: a version 2 export that no transform wants is walked
 * (`scanExportObject`: the decoder's checks, no property built) and its renumbered PackageIndex
 * values, fixed-width, patched into a copy of its bytes, which is what decoding and re-encoding it
 * gave (the conformance test holds both to the same bytes). Anything the walk does not vouch for
 * (a broken stream, `NAME_None`, non-ASCII names) is decoded as before, so errors are the
 * decoder's. Decoding and re-encoding was ~12% of a cook worker's CPU.
 *
 * Throws COOK_FAILED when the package's asset export itself would be stripped: the cooked package
 * would no longer hold the asset the registry lists.
 */
export async function cookPackageBytes(pkg: LoadedPackage, opts: StripOptions): Promise<CookedPackageBytes> {
  const n = pkg.exports.length;
  const newIndex = new Int32Array(n).fill(-1);
  let kept = 0;
  for (let i = 0; i < n; i++) {
    if (stripReason(pkg, i, opts.editorOnlyClassPrefixes) === null) newIndex[i] = kept++;
  }
  const asset = findAssetExport(pkg);
  if (asset >= 0 && newIndex[asset] < 0) {
    throw errors.cookFailed(pkg.file, `the asset export "${pkg.exports[asset].objectName}" is ${stripReason(pkg, asset, opts.editorOnlyClassPrefixes)}, so nothing of the asset would ship`);
  }
  const identity = kept === n;
  const schemas = opts.schemas ?? ClassSchemas.empty;
  const warnings: LuminaLog[] = [...(pkg.warnings ?? [])] as LuminaLog[];
  let nulledRefs = 0;
  let transformedExports = 0;
  const renumber = (idx: number): number => {
    if (idx <= 0) return idx; // null and imports are unchanged
    const to = newIndex[idx - 1];
    if (to < 0) {
      nulledRefs++;
      return 0;
    }
    return to + 1;
  };
  const inPlace = pkg.header.version === 2 && opts.inPlace !== false;
  const scanCtx = { importCount: pkg.imports.length, exportCount: n, imports: pkg.imports };

  /**
   * Export i's cooked bytes without decoding its properties, or null when it must be decoded:
   * nothing counted or warned for it yet.
   */
  const cookInPlace = (i: number): Uint8Array | null => {
    const e = pkg.exports[i];
    const raw = pkg.exportData[i];
    const scan = scanExportObject(raw, scanCtx);
    if (scan === null) return null;
    let data = raw;
    let nulled = 0;
    if (!identity) {
      const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
      for (const at of scan.refs) {
        const idx = view.getInt32(at + 4, true) * 0x1_0000_0000 + view.getUint32(at, true);
        if (idx <= 0) continue; // null and imports are unchanged
        const to = newIndex[idx - 1] + 1; // 0 (null) for a removed export
        if (to === 0) nulled++;
        if (to === idx) continue;
        if (data === raw) data = raw.slice();
        // The same two's-complement words BinaryWriter.i64 writes (0 <= to < idx: high word 0).
        new DataView(data.buffer, data.byteOffset, data.byteLength).setUint32(at, to, true);
      }
    }
    if (scan.tailAt < raw.byteLength) {
      const className = e.className ?? 'None';
      const tailAt = pkg.header.objectDataOffset + e.offset + scan.tailAt;
      const tailLength = raw.byteLength - scan.tailAt;
      if (schemas.has(e.className)) {
        // Decoded even when nothing moves: a schema that does not fit fails here, not at run time.
        const site = { className, exportName: e.objectName ?? `export[${i}]` };
        let nameNone = false;
        const tailCtx = exportContext(pkg, () => {
          nameNone = true;
        });
        const native = decodeNativeTail(new BinaryReader(raw.subarray(scan.tailAt), pkg.file, tailAt, pkg.fileSize), schemas, site, tailCtx);
        // The decoded path warns about it and re-encodes the whole export.
        if (nameNone) return null;
        if (!identity) {
          let tailChanged = false;
          mapObjectRefs(native, (idx) => {
            if (idx <= 0) return idx;
            const to = newIndex[idx - 1] + 1;
            if (to === 0) nulled++;
            if (to !== idx) tailChanged = true;
            return to;
          });
          if (tailChanged) {
            const tail = encodeNativeTail(native);
            const joined = new Uint8Array(scan.tailAt + tail.byteLength);
            joined.set(data.subarray(0, scan.tailAt));
            joined.set(tail, scan.tailAt);
            data = joined;
          }
        }
      } else if (!identity) {
        // Without a schema nobody knows where the tail's references are, so they cannot follow the renumbering.
        throw errors.nativeTailUnmapped(pkg.file, className, e.objectName ?? `export[${i}]`, tailAt, tailLength);
      }
    }
    nulledRefs += nulled;
    return data;
  };

  const out: PackageToWrite['exports'] = [];
  for (let i = 0; i < n; i++) {
    if (newIndex[i] < 0) continue;
    const e = pkg.exports[i];
    const decodedForTransform = opts.transformExport !== undefined && (opts.transformsClass?.(e.className) ?? true);
    const kept = inPlace && !decodedForTransform ? cookInPlace(i) : null;
    if (kept !== null) {
      out.push({ objectGuid: e.objectGuid, objectName: e.objectName, className: e.className, objectFlags: e.objectFlags, assetFlags: e.assetFlags, data: kept });
      continue;
    }
    // A writer never writes NAME_None: an export that held one is re-encoded with the empty None.
    let nameNone = false;
    const onNameNone = (field: string, offset: number) => {
      nameNone = true;
      warnings.push(errors.packageNameNone(pkg.file, field, offset).toLog());
    };
    const obj = decodeExportData(pkg, i, onNameNone);
    let changed = false;
    if (decodedForTransform) {
      const replaced = await opts.transformExport!(i, obj.properties, pkg);
      if (replaced !== undefined) {
        obj.properties = replaced;
        changed = true;
        transformedExports++;
      }
    }
    const count = (idx: number) => {
      const to = renumber(idx);
      if (to !== idx) changed = true;
      return to;
    };
    if (!identity) mapObjectRefs(obj.properties, count);
    if (obj.tail.byteLength > 0) {
      const className = e.className ?? 'None';
      const tailAt = pkg.header.objectDataOffset + e.offset + e.size - obj.tail.byteLength;
      if (schemas.has(e.className)) {
        // Decoded even when nothing moves: a schema that does not fit fails here, not at run time.
        const site = { className, exportName: e.objectName ?? `export[${i}]` };
        const native = decodeNativeTail(new BinaryReader(obj.tail, pkg.file, tailAt, pkg.fileSize), schemas, site, exportContext(pkg, onNameNone));
        let tailChanged = nameNone;
        if (!identity) {
          mapObjectRefs(native, (idx) => {
            const to = renumber(idx);
            if (to !== idx) tailChanged = true;
            return to;
          });
        }
        if (tailChanged) {
          obj.tail = encodeNativeTail(native);
          changed = true;
        }
      } else if (!identity) {
        // Without a schema nobody knows where the tail's references are, so they cannot follow the renumbering.
        throw errors.nativeTailUnmapped(pkg.file, className, e.objectName ?? `export[${i}]`, tailAt, obj.tail.byteLength);
      }
    }
    // Version 1 streams may spell None as NAME_None; re-encoding writes the version 2 spelling.
    const data = changed || nameNone || pkg.header.version !== 2 ? encodeExportObject(obj) : pkg.exportData[i];
    out.push({ objectGuid: e.objectGuid, objectName: e.objectName, className: e.className, objectFlags: e.objectFlags, assetFlags: e.assetFlags, data });
  }
  const raw = writePackage({ imports: pkg.imports, exports: out, thumbnail: null });
  return { raw, strippedExports: n - kept, nulledRefs, transformedExports, warnings };
}
