/**
 * A convenient way to make packages in code: the sample project, the large-project generator and
 * tests all build packages through this, so they all produce what the writer writes.
 */
import { encodeExportObject } from './properties.js';
import { encodeNativeTail } from './nativeTail.js';
import { writePackage } from './packageWriter.js';
import { DependencyType, type FloatValue, type ImportEntry, type Property, type Thumbnail } from './packageTypes.js';

export interface ExportSpec {
  guid: string;
  name: string;
  className: string;
  objectFlags?: number;
  assetFlags?: number;
  properties?: Property[];
  /** Raw bytes instead of `properties`, for hostile-input tests. */
  data?: Uint8Array;
  /** Native fields written after the None, positionally (what a class schema describes). */
  native?: Property[];
  /** Raw native tail bytes after the None (after `native`, when both are given). */
  tail?: Uint8Array;
}

export interface PackageSpec {
  imports?: ImportEntry[];
  exports: ExportSpec[];
  thumbnail?: Thumbnail | null;
}

export function buildPackage(spec: PackageSpec): Uint8Array {
  return writePackage({
    imports: spec.imports ?? [],
    exports: spec.exports.map((e) => ({
      objectGuid: e.guid,
      objectName: e.name,
      className: e.className,
      objectFlags: e.objectFlags ?? 0,
      assetFlags: e.assetFlags ?? 0,
      data: e.data ?? exportBytes(e),
    })),
    thumbnail: spec.thumbnail ?? null,
  });
}

function exportBytes(e: ExportSpec): Uint8Array {
  let tail = e.native ? encodeNativeTail(e.native) : new Uint8Array(0);
  if (e.tail) tail = Buffer.concat([tail, e.tail]);
  return encodeExportObject({ properties: e.properties ?? [], terminated: true, tail });
}

/** PackageIndex helpers: export i is i + 1, import i is -(i + 1). */
export const ref = {
  export: (i: number) => i + 1,
  import: (i: number) => -(i + 1),
  null: 0,
};

/** Shorthands for property tags, for readable fixtures. */
export const prop = {
  bool: (name: string, value: boolean): Property => ({ name, arrayIndex: 0, type: 'BoolProperty', value }),
  int: (name: string, value: number): Property => ({ name, arrayIndex: 0, type: 'IntProperty', value }),
  float: (name: string, value: number): Property => ({ name, arrayIndex: 0, type: 'FloatProperty', value }),
  double: (name: string, value: number): Property => ({ name, arrayIndex: 0, type: 'DoubleProperty', value }),
  str: (name: string, value: string): Property => ({ name, arrayIndex: 0, type: 'StrProperty', value }),
  name: (name: string, value: string | null): Property => ({ name, arrayIndex: 0, type: 'NameProperty', value }),
  enum: (name: string, enumName: string, value: string): Property => ({ name, arrayIndex: 0, type: 'EnumProperty', enumName, value }),
  object: (name: string, value: number): Property => ({ name, arrayIndex: 0, type: 'ObjectProperty', value }),
  soft: (name: string, guid: string): Property => ({ name, arrayIndex: 0, type: 'SoftObjectProperty', value: guid }),
  vector: (name: string, x: number, y: number, z: number): Property => ({
    name,
    arrayIndex: 0,
    type: 'StructProperty',
    structName: 'Vector',
    value: [x, y, z],
  }),
  /** A built-in struct (Vector, BoxSphereBounds, Matrix...): its values in wire order. */
  builtin: (name: string, structName: string, value: FloatValue[] | string): Property => ({ name, arrayIndex: 0, type: 'StructProperty', structName, value }),
  struct: (name: string, structName: string, value: Property[]): Property => ({ name, arrayIndex: 0, type: 'StructProperty', structName, value }),
  bytes: (name: string, value: Uint8Array): Property => ({ name, arrayIndex: 0, type: 'ArrayProperty', innerType: 'ByteProperty', value }),
  objects: (name: string, value: number[]): Property => ({ name, arrayIndex: 0, type: 'ArrayProperty', innerType: 'ObjectProperty', value }),
};

export const hard = (guid: string): ImportEntry => ({ guid, type: DependencyType.Hard });
export const soft = (guid: string): ImportEntry => ({ guid, type: DependencyType.Soft });
