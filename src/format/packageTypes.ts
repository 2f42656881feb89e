/**
 * The in-memory model of a `.lasset` package (FORMAT.md "Package"). Names are `string | null`:
 * null is FName None (written as the empty string; version 1's `NAME_None` reads back as null).
 */

export const PACKAGE_TAG = 0x9e2a83c1;
export const PACKAGE_VERSION_CURRENT = 2;
export const PACKAGE_HEADER_SIZE = 48;
export const IMPORT_ENTRY_SIZE = 17;
/** Smallest possible export entry: GUID + two empty FNames + i64 + i64 + u32 + u32. */
export const EXPORT_ENTRY_MIN_SIZE = 16 + 4 + 4 + 8 + 8 + 4 + 4;
export const MAX_TABLE_COUNT = 1_000_000;

export const enum DependencyType {
  Hard = 0,
  Soft = 1,
}

export const ObjectFlags = {
  Transient: 0x1,
  Public: 0x2,
  MarkedDestroy: 0x4,
  EditorOnly: 0x8,
} as const;

export const AssetFlags = {
  Primary: 0x1,
} as const;

export const NULL_GUID = '00000000000000000000000000000000';

export interface PackageHeader {
  version: number;
  importTableOffset: number;
  importCount: number;
  exportTableOffset: number;
  exportCount: number;
  objectDataOffset: number;
  thumbnailDataOffset: number;
}

export interface ImportEntry {
  /** GUID of the referenced asset, 32 lowercase hex digits. */
  guid: string;
  type: DependencyType;
}

export interface ExportEntry {
  objectGuid: string;
  objectName: string | null;
  className: string | null;
  /** Relative to objectDataOffset. */
  offset: number;
  size: number;
  objectFlags: number;
  assetFlags: number;
}

export interface Thumbnail {
  width: number;
  height: number;
  /** width * height * 4 bytes of RGBA8. */
  data: Uint8Array;
}

/** What a table-only read yields: enough for the registry, no object data. */
export interface PackageTables {
  file: string;
  fileSize: number;
  header: PackageHeader;
  imports: ImportEntry[];
  exports: ExportEntry[];
}

/** A fully read package: tables plus each export's raw bytes and the thumbnail. */
export interface LoadedPackage extends PackageTables {
  /** The raw property stream of each export, parallel to `exports`. */
  exportData: Uint8Array[];
  thumbnail: Thumbnail | null;
}

/** What the writer takes: exports carry their bytes; offsets and sizes are laid out by the writer. */
export interface PackageToWrite {
  imports: ImportEntry[];
  exports: Array<Omit<ExportEntry, 'offset' | 'size'> & { data: Uint8Array }>;
  thumbnail?: Thumbnail | null;
}

// ---- Tagged property stream ----

export type PropertyType =
  | 'BoolProperty'
  | 'ByteProperty'
  | 'EnumProperty'
  | 'IntProperty'
  | 'Int64Property'
  | 'UInt32Property'
  | 'FloatProperty'
  | 'DoubleProperty'
  | 'StrProperty'
  | 'NameProperty'
  | 'ObjectProperty'
  | 'SoftObjectProperty'
  | 'StructProperty'
  | 'ArrayProperty';

export const PROPERTY_TYPES: ReadonlySet<string> = new Set<PropertyType>([
  'BoolProperty',
  'ByteProperty',
  'EnumProperty',
  'IntProperty',
  'Int64Property',
  'UInt32Property',
  'FloatProperty',
  'DoubleProperty',
  'StrProperty',
  'NameProperty',
  'ObjectProperty',
  'SoftObjectProperty',
  'StructProperty',
  'ArrayProperty',
]);

/** Built-in structs are written positionally; their field names are for display only. */
export const BUILTIN_STRUCTS: Readonly<Record<string, { fields: readonly string[]; kind: 'f64' | 'f32' | 'u8' | 'guid' }>> = {
  Vector: { fields: ['X', 'Y', 'Z'], kind: 'f64' },
  Vector2D: { fields: ['X', 'Y'], kind: 'f64' },
  Vector4: { fields: ['X', 'Y', 'Z', 'W'], kind: 'f64' },
  Quat: { fields: ['X', 'Y', 'Z', 'W'], kind: 'f64' },
  Rotator: { fields: ['Pitch', 'Yaw', 'Roll'], kind: 'f64' },
  // Color is stored B, G, R, A.
  Color: { fields: ['B', 'G', 'R', 'A'], kind: 'u8' },
  LinearColor: { fields: ['R', 'G', 'B', 'A'], kind: 'f32' },
  Guid: { fields: ['Guid'], kind: 'guid' },
};

/**
 * A struct's value: a built-in struct is its numbers in wire order (Guid: the hex string);
 * any other struct is a nested tagged stream.
 */
export type StructValue = number[] | string | Property[];

/** Values of array elements, by inner type (arrays of bytes are a Uint8Array for speed). */
export type ArrayValue =
  | Uint8Array
  | boolean[]
  | number[]
  | bigint[]
  | Array<string | null>
  | StructValue[];

interface PropertyBase {
  name: string;
  arrayIndex: number;
}

export type Property = PropertyBase &
  (
    | { type: 'BoolProperty'; value: boolean }
    | { type: 'ByteProperty'; enumName: string | null; value: number | string | null }
    | { type: 'EnumProperty'; enumName: string | null; value: string | null }
    | { type: 'IntProperty'; value: number }
    | { type: 'Int64Property'; value: bigint }
    | { type: 'UInt32Property'; value: number }
    | { type: 'FloatProperty'; value: number }
    | { type: 'DoubleProperty'; value: number }
    | { type: 'StrProperty'; value: string }
    | { type: 'NameProperty'; value: string | null }
    /** PackageIndex: 0 null, i+1 export i, -(i+1) import i. */
    | { type: 'ObjectProperty'; value: number }
    | { type: 'SoftObjectProperty'; value: string }
    | { type: 'StructProperty'; structName: string | null; value: StructValue }
    | { type: 'ArrayProperty'; innerType: PropertyType; innerStructName?: string | null; value: ArrayValue }
  );
