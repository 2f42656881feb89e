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
  /** PACKAGE_NAME_NONE warnings from the tables (a version 2 package that wrote `NAME_None`). */
  warnings?: Array<{ code: string; message: string; file?: string; offset?: number; field?: string; hint?: string }>;
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

/**
 * A NaN as read from a file: its exact bits. A JS number cannot carry them (V8 quiets a
 * signalling NaN, f32 -> f64 drops the payload's position), and a cooker must copy every byte no
 * rule names, so a NaN is kept as bits from the read to the write. Every other float value
 * (-0.0, denormals, infinities) round-trips exactly through a number.
 */
export class NaNBits {
  constructor(
    /** 32 for an f32, 64 for an f64. */
    readonly width: 32 | 64,
    /** The raw bits, as read little-endian. */
    readonly bits: bigint,
  ) {}

  toString(): string {
    return `NaN(0x${this.bits.toString(16).padStart(this.width / 4, '0')})`;
  }
}

/** A float value: a number, or the exact bits of a NaN. */
export type FloatValue = number | NaNBits;

export type BuiltinFieldKind = 'f64' | 'f32' | 'u8' | 'i32';

/** A built-in struct: its fields in wire order (Guid is the one 16-byte special case). */
export interface BuiltinStruct {
  kind: 'fields' | 'guid';
  fields: ReadonlyArray<{ name: string; kind: BuiltinFieldKind }>;
  /** Bytes on the wire. */
  size: number;
}

const FIELD_BYTES: Record<BuiltinFieldKind, number> = { f64: 8, f32: 4, u8: 1, i32: 4 };

function fields(...spec: Array<[string, BuiltinFieldKind] | string>): BuiltinStruct {
  const f = spec.map((s) => (typeof s === 'string' ? { name: s, kind: 'f64' as const } : { name: s[0], kind: s[1] }));
  return { kind: 'fields', fields: f, size: f.reduce((n, x) => n + FIELD_BYTES[x.kind], 0) };
}

const vec = (p: string) => [`${p}.X`, `${p}.Y`, `${p}.Z`];
const vec2 = (p: string) => [`${p}.X`, `${p}.Y`];

/**
 * Built-in structs are written positionally (FORMAT.md "Object data"); field names are for
 * display only. Nested built-ins (Sphere's center, Box's min and max) are flattened.
 */
export const BUILTIN_STRUCTS: Readonly<Record<string, BuiltinStruct>> = {
  Vector: fields('X', 'Y', 'Z'),
  Vector2D: fields('X', 'Y'),
  Vector4: fields('X', 'Y', 'Z', 'W'),
  Quat: fields('X', 'Y', 'Z', 'W'),
  Rotator: fields('Pitch', 'Yaw', 'Roll'),
  // Color is stored B, G, R, A.
  Color: fields(['B', 'u8'], ['G', 'u8'], ['R', 'u8'], ['A', 'u8']),
  LinearColor: fields(['R', 'f32'], ['G', 'f32'], ['B', 'f32'], ['A', 'f32']),
  Guid: { kind: 'guid', fields: [{ name: 'Guid', kind: 'u8' }], size: 16 },
  IntPoint: fields(['X', 'i32'], ['Y', 'i32']),
  Plane: fields('X', 'Y', 'Z', 'W'),
  Sphere: fields(...vec('Center'), 'W'),
  Box: fields(...vec('Min'), ...vec('Max'), ['IsValid', 'u8']),
  Box2D: fields(...vec2('Min'), ...vec2('Max'), ['IsValid', 'u8']),
  BoxSphereBounds: fields(...vec('Origin'), ...vec('BoxExtent'), 'SphereRadius'),
  TwoVectors: fields(...vec('V1'), ...vec('V2')),
  // Row-major.
  Matrix: fields(...Array.from({ length: 16 }, (_, i) => `M[${i >> 2}][${i & 3}]`)),
};

/**
 * A struct's value: a built-in struct is its values in wire order (floats may be NaNBits; Guid:
 * the hex string); any other struct is a nested tagged stream (or, in a native tail, the schema
 * struct's fields in order).
 */
export type StructValue = FloatValue[] | string | Property[];

/** Values of array elements, by inner type (arrays of bytes are a Uint8Array for speed). */
export type ArrayValue =
  | Uint8Array
  | boolean[]
  | FloatValue[]
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
    | { type: 'FloatProperty'; value: FloatValue }
    | { type: 'DoubleProperty'; value: FloatValue }
    | { type: 'StrProperty'; value: string }
    | { type: 'NameProperty'; value: string | null }
    /** PackageIndex: 0 null, i+1 export i, -(i+1) import i. */
    | { type: 'ObjectProperty'; value: number }
    | { type: 'SoftObjectProperty'; value: string }
    | { type: 'StructProperty'; structName: string | null; value: StructValue }
    | { type: 'ArrayProperty'; innerType: PropertyType; innerStructName?: string | null; value: ArrayValue }
  );

/**
 * A property whose tag was read but whose value could not be decoded (what `inspect` shows as
 * `@bytes(..)` with the error, instead of hiding the whole export).
 */
export interface UndecodedProperty {
  name: string;
  arrayIndex: number;
  type: PropertyType;
  /** The value's bytes, as declared by the tag. */
  undecoded: Uint8Array;
  error: { code: string; message: string; offset?: number; field?: string };
}

/**
 * One export's object data (FORMAT.md "Where the stream ends"): the tagged stream, whether it was
 * ended by a None name (a stream may also end at a tag that is not a property), and the native
 * tail, kept byte for byte.
 */
export interface ExportObject {
  properties: Property[];
  terminated: boolean;
  tail: Uint8Array;
}
