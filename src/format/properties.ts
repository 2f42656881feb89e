/**
 * The tagged property stream (FORMAT.md "Object data"). Decoding is strict: every value must fill
 * its declared size exactly, counts are checked against the bytes left before anything is
 * allocated, and nesting is bounded so a hostile file cannot blow the stack.
 */
import { BinaryReader } from './BinaryReader.js';
import { BinaryWriter } from './BinaryWriter.js';
import { errors, LuminaError } from '../errors.js';
import {
  BUILTIN_STRUCTS,
  DependencyType,
  NULL_GUID,
  PROPERTY_TYPES,
  type ArrayValue,
  type BuiltinStruct,
  type ExportObject,
  type FloatValue,
  type ImportEntry,
  type UndecodedProperty,
  type Property,
  type PropertyType,
  type StructValue,
} from './packageTypes.js';

/** Deeper nesting than this is treated as hostile. */
const MAX_DEPTH = 64;

export interface PropertyContext {
  /** Package version: 1 maps the display string `NAME_None` back to None (2 too, with a warning). */
  version: number;
  /** When given, ObjectProperty indices are checked against the tables. */
  importCount?: number;
  exportCount?: number;
  /** When given, a non-null SoftObjectProperty GUID must be a Soft import. */
  imports?: readonly ImportEntry[];
  /** Told about each `NAME_None` read in a version 2 package (file offset of the FName). */
  onNameNone?: (field: string, offset: number) => void;
}

/**
 * Read an FName: empty is None. Version 1 wrote None as `NAME_None`; in version 2 that string is
 * the mark of a writer that saved a display string, so it reads as None too and `onNameNone`
 * (when given) is told, to warn.
 */
export function readFName(r: BinaryReader, field: string, version: number, onNameNone?: (field: string, offset: number) => void): string | null {
  const at = r.offset;
  const s = r.fstring(field);
  if (s === '') return null;
  if (s === 'NAME_None') {
    if (version !== 1) onNameNone?.(field, at);
    return null;
  }
  return s;
}

/** Write an FName; None (and a stray `NAME_None`) is written as the empty string. */
export function writeFName(w: BinaryWriter, name: string | null): void {
  w.fstring(name === null || name === 'NAME_None' ? '' : name);
}

const fname = (r: BinaryReader, field: string, ctx: PropertyContext) => readFName(r, field, ctx.version, ctx.onNameNone);

/**
 * Decode one export's tagged properties, accepting a native tail after them (its bytes are
 * dropped here: use decodeExportObject to keep them). `r` spans exactly the export's bytes.
 */
export function decodeProperties(r: BinaryReader, ctx: PropertyContext): Property[] {
  return decodeExportObject(r, ctx).properties;
}

/**
 * Decode one export's object data (FORMAT.md "Where the stream ends: the native tail"): the
 * tagged stream ends at a None name or at a tag that is not a property (a type outside the
 * fourteen, a declared size past the export, or a tag that cannot even be read); the reader
 * rewinds to that tag's first byte and everything from there is the tail, kept byte for byte.
 * A tag that is a property but whose value does not decode is an error, never a tail.
 */
export function decodeExportObject(r: BinaryReader, ctx: PropertyContext): ExportObject {
  const { items, terminated, tail } = decodeTopLevel(r, ctx, false);
  return { properties: items as Property[], terminated, tail };
}

/**
 * The same, but a property whose value does not decode becomes an UndecodedProperty (its bytes
 * and the error) and the stream goes on after its declared size: what `inspect` shows.
 */
export function decodeExportLenient(r: BinaryReader, ctx: PropertyContext): { items: Array<Property | UndecodedProperty>; terminated: boolean; tail: Uint8Array } {
  return decodeTopLevel(r, ctx, true);
}

interface Tag {
  name: string | null;
  type: PropertyType;
  size: number;
  sizeAt: number;
  arrayIndex: number;
  /** enumName, structName or innerType, by type. */
  extra: string | null;
  innerStructName: string | null;
  /** The bool's value byte (BoolProperty keeps it in the tag). */
  boolAt: number;
}

/** The None that ends a stream (one shared object: every stream has one). */
const NONE_TAG: Tag = Object.freeze({ name: null, type: 'IntProperty', size: 0, sizeAt: 0, arrayIndex: 0, extra: null, innerStructName: null, boolAt: 0 });

function decodeTopLevel(r: BinaryReader, ctx: PropertyContext, lenient: boolean): { items: Array<Property | UndecodedProperty>; terminated: boolean; tail: Uint8Array } {
  const items: Array<Property | UndecodedProperty> = [];
  let terminated = false;
  for (;;) {
    const tagAt = r.pos;
    if (r.remaining === 0) break;
    // A None name ends the stream; a tag that cannot be a property starts the tail.
    let tag: Tag | null;
    try {
      tag = readTag(r, ctx, true);
    } catch (e) {
      if (e instanceof StrictTagError) throw e.error;
      if (!(e instanceof LuminaError)) throw e;
      tag = null;
    }
    if (tag === null) {
      r.pos = tagAt;
      break;
    }
    if (tag.name === null) {
      terminated = true;
      break;
    }
    if (!lenient) {
      items.push(decodeTagged(r, ctx, 0, tag));
      continue;
    }
    const valueAt = r.pos;
    try {
      items.push(decodeTagged(r, ctx, 0, tag));
    } catch (e) {
      if (!(e instanceof LuminaError)) throw e;
      const end = tag.type === 'BoolProperty' ? valueAt : valueAt + tag.size;
      r.pos = end;
      items.push({ name: tag.name, arrayIndex: tag.arrayIndex, type: tag.type, undecoded: new Uint8Array(r.bytes.subarray(valueAt, end)), error: e.toLog() });
    }
  }
  return { items, terminated, tail: r.bytes.subarray(r.pos) };
}

/**
 * Read a property tag up to its value. `top`: the tag is in an export's top-level stream, where
 * a type outside the fourteen or a size past the export means "not a property" (null is
 * returned... by the caller catching); nested streams are strict.
 */
function readTag(r: BinaryReader, ctx: PropertyContext, top: boolean): Tag | null {
  const tagAt = r.pos;
  const name = fname(r, 'property name', ctx);
  if (name === null) return NONE_TAG;
  const type = fname(r, `property ${name} type`, ctx);
  if (type === null || !PROPERTY_TYPES.has(type)) {
    if (top) return null;
    r.fail(`property ${name} type`, `${type === null ? 'None' : `'${type}'`} is not a property type`, tagAt);
  }
  const sizeAt = r.pos;
  const size = r.i32(`property ${name} size`);
  if (size < 0) {
    if (top) return null;
    r.fail(`property ${name} size`, `negative size ${size}`, sizeAt);
  }
  const arrayIndex = r.i32(`property ${name} arrayIndex`);
  const field = `property ${name}`;
  let extra: string | null = null;
  let innerStructName: string | null = null;
  let boolAt = 0;
  switch (type as PropertyType) {
    case 'BoolProperty':
      boolAt = r.pos;
      r.u8(`${field} value`);
      break;
    case 'ByteProperty':
    case 'EnumProperty':
      extra = fname(r, `${field} enumName`, ctx);
      break;
    case 'StructProperty':
      extra = fname(r, `${field} structName`, ctx);
      break;
    case 'ArrayProperty': {
      const innerAt = r.pos;
      extra = fname(r, `${field} innerType`, ctx);
      if (extra === null || !PROPERTY_TYPES.has(extra) || extra === 'ArrayProperty') {
        // Not "a tag that is not a property": the type is one of the fourteen. A broken property.
        throw new StrictTagError(errors.packageInvalid(r.file, `${field} innerType`, r.base + innerAt, `${extra === null ? 'None' : `'${extra}'`} is not an array element type`));
      }
      if (extra === 'StructProperty') innerStructName = fname(r, `${field} innerStructName`, ctx);
      break;
    }
    default:
      break;
  }
  if (size > r.remaining) {
    if (top) return null;
    throw errors.packageTruncated(r.file, `${field} value`, r.offset, size, r.base + r.length);
  }
  return { name, type: type as PropertyType, size, sizeAt, arrayIndex, extra, innerStructName, boolAt };
}

/** An error in a tag whose type is one of the fourteen: a broken property, never a tail. */
class StrictTagError {
  constructor(readonly error: LuminaError) {}
}

/** A nested struct's tagged stream: strict, and it must end with None inside its size. */
function decodeStream(r: BinaryReader, ctx: PropertyContext, depth: number): Property[] {
  if (depth > MAX_DEPTH) r.fail('property stream', `nesting deeper than ${MAX_DEPTH}`);
  const out: Property[] = [];
  for (;;) {
    let tag: Tag;
    try {
      tag = readTag(r, ctx, false)!;
    } catch (e) {
      if (e instanceof StrictTagError) throw e.error;
      throw e;
    }
    if (tag.name === null) return out;
    out.push(decodeTagged(r, ctx, depth, tag));
  }
}

function decodeTagged(r: BinaryReader, ctx: PropertyContext, depth: number, tag: Tag): Property {
  const { type, size, sizeAt, arrayIndex } = tag;
  const name = tag.name as string;
  const field = `property ${name}`;
  switch (type) {
    case 'BoolProperty': {
      const b = r.bytes[tag.boolAt];
      if (b > 1) r.fail(`${field} value`, `bool byte is ${b}, not 0 or 1`, tag.boolAt);
      if (size !== 0) r.fail(`${field} size`, `BoolProperty declares size ${size}, must be 0`, sizeAt);
      return { name, arrayIndex, type, value: b === 1 };
    }
    case 'ByteProperty': {
      const enumName = tag.extra;
      const value = withinSize(r, size, field, (v) => (enumName === null ? v.u8(field) : fname(v, field, ctx)));
      return { name, arrayIndex, type, enumName, value };
    }
    case 'EnumProperty': {
      const value = withinSize(r, size, field, (v) => fname(v, field, ctx));
      return { name, arrayIndex, type, enumName: tag.extra, value };
    }
    case 'StructProperty': {
      const structName = tag.extra;
      const value = withinSize(r, size, field, (v) => decodeStruct(v, ctx, depth, structName, field));
      return { name, arrayIndex, type, structName, value };
    }
    case 'ArrayProperty': {
      const innerType = tag.extra as PropertyType;
      if (innerType === 'StructProperty') {
        const innerStructName = tag.innerStructName;
        const value = withinSize(r, size, field, (v) => decodeArray(v, ctx, depth, innerType, innerStructName, field));
        return { name, arrayIndex, type, innerType, innerStructName, value };
      }
      const value = withinSize(r, size, field, (v) => decodeArray(v, ctx, depth, innerType, null, field));
      return { name, arrayIndex, type, innerType, value };
    }
    default: {
      const value = withinSize(r, size, field, (v) => decodeScalar(v, ctx, type, field));
      return { name, arrayIndex, type, value } as Property;
    }
  }
}

/**
 * Decode a value from exactly `size` bytes: running past them is an over-run, stopping short an
 * under-run; both are errors, never guesses.
 */
function withinSize<T>(r: BinaryReader, size: number, field: string, decode: (v: BinaryReader) => T): T {
  const start = r.pos;
  if (size > r.remaining) {
    throw errors.packageTruncated(r.file, `${field} value`, r.offset, size, r.base + r.length);
  }
  const v = new BinaryReader(r.bytes.subarray(start, start + size), r.file, r.base + start, r.fileSize);
  let value: T;
  try {
    value = decode(v);
  } catch (e) {
    if (e instanceof LuminaError && e.code === 'PACKAGE_TRUNCATED' && e.offset !== undefined && e.offset <= r.base + start + size) {
      throw errors.packageInvalid(r.file, `${field} value`, e.offset, `value over-runs its declared size ${size}`);
    }
    throw e;
  }
  if (v.remaining !== 0) {
    throw errors.packageInvalid(r.file, `${field} value`, v.offset, `value under-runs its declared size ${size} by ${v.remaining} bytes`);
  }
  r.pos = start + size;
  return value;
}

/** A scalar value of `type` (not Bool, Byte, Enum, Struct or Array), read positionally. */
export function decodeScalar(v: BinaryReader, ctx: PropertyContext, type: PropertyType, field: string): unknown {
  switch (type) {
    case 'IntProperty':
      return v.i32(field);
    case 'Int64Property':
      return v.i64big(field);
    case 'UInt32Property':
      return v.u32(field);
    case 'FloatProperty':
      return v.f32value(field);
    case 'DoubleProperty':
      return v.f64value(field);
    case 'StrProperty':
      return v.fstring(field);
    case 'NameProperty':
      return fname(v, field, ctx);
    case 'ObjectProperty':
      return readPackageIndex(v, ctx, field);
    case 'SoftObjectProperty':
      return readSoftGuid(v, ctx, field);
    default:
      return v.fail(field, `unexpected scalar type ${type}`);
  }
}

export function readPackageIndex(v: BinaryReader, ctx: PropertyContext, field: string): number {
  const at = v.pos;
  const idx = v.i64(field);
  if (ctx.importCount !== undefined && idx < 0 && -idx > ctx.importCount) {
    v.fail(field, `PackageIndex ${idx} names import ${-idx - 1}, but there are ${ctx.importCount} imports`, at);
  }
  if (ctx.exportCount !== undefined && idx > ctx.exportCount) {
    v.fail(field, `PackageIndex ${idx} names export ${idx - 1}, but there are ${ctx.exportCount} exports`, at);
  }
  return idx;
}

export function readSoftGuid(v: BinaryReader, ctx: PropertyContext, field: string): string {
  const at = v.pos;
  const guid = v.guid(field);
  if (ctx.imports && guid !== NULL_GUID && !ctx.imports.some((i) => i.guid === guid && i.type === DependencyType.Soft)) {
    v.fail(field, `soft reference ${guid} is not in the import table as Soft`, at);
  }
  return guid;
}

function decodeStruct(v: BinaryReader, ctx: PropertyContext, depth: number, structName: string | null, field: string): StructValue {
  const builtin = structName === null ? undefined : BUILTIN_STRUCTS[structName];
  if (!builtin) return decodeStream(v, ctx, depth + 1);
  return readBuiltin(v, builtin, field);
}

/** A built-in struct, positionally: its values in wire order (Guid: the hex string). */
export function readBuiltin(v: BinaryReader, builtin: BuiltinStruct, field: string): FloatValue[] | string {
  if (builtin.kind === 'guid') return v.guid(field);
  const out: FloatValue[] = new Array(builtin.fields.length);
  for (let i = 0; i < out.length; i++) {
    switch (builtin.fields[i].kind) {
      case 'f64':
        out[i] = v.f64value(field);
        break;
      case 'f32':
        out[i] = v.f32value(field);
        break;
      case 'i32':
        out[i] = v.i32(field);
        break;
      case 'u8':
        out[i] = v.u8(field);
        break;
    }
  }
  return out;
}

/** Bytes the smallest element of each type takes, for checking counts before allocating. */
export function minElementSize(type: PropertyType, structName: string | null): number {
  switch (type) {
    case 'BoolProperty':
    case 'ByteProperty':
      return 1;
    case 'Int64Property':
    case 'DoubleProperty':
    case 'ObjectProperty':
      return 8;
    case 'SoftObjectProperty':
      return 16;
    case 'StructProperty': {
      const b = structName === null ? undefined : BUILTIN_STRUCTS[structName];
      return b ? b.size : 4;
    }
    default:
      return 4;
  }
}

function decodeArray(
  v: BinaryReader,
  ctx: PropertyContext,
  depth: number,
  inner: PropertyType,
  structName: string | null,
  field: string,
): ArrayValue {
  const countAt = v.pos;
  const count = v.i32(`${field} count`);
  if (count < 0) v.fail(`${field} count`, `negative count ${count}`, countAt);
  const min = minElementSize(inner, structName);
  if (count * min > v.remaining) {
    v.fail(`${field} count`, `${count} elements need at least ${count * min} bytes, ${v.remaining} remain`, countAt);
  }
  // Copied so a decoded array never pins the whole file buffer.
  if (inner === 'ByteProperty') return new Uint8Array(v.bytesView(count, `${field} bytes`));
  const out: unknown[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const ef = `${field}[${i}]`;
    switch (inner) {
      case 'BoolProperty': {
        const at = v.pos;
        const b = v.u8(ef);
        if (b > 1) v.fail(ef, `bool byte is ${b}, not 0 or 1`, at);
        out[i] = b === 1;
        break;
      }
      case 'EnumProperty':
        out[i] = fname(v, ef, ctx);
        break;
      case 'StructProperty':
        out[i] = decodeStruct(v, ctx, depth, structName, ef);
        break;
      default:
        out[i] = decodeScalar(v, ctx, inner, ef);
    }
  }
  return out as ArrayValue;
}

// ---- Encoding ----

/** Encode a property stream, terminated by a None name. */
export function encodeProperties(props: readonly Property[]): Uint8Array {
  const w = new BinaryWriter(256);
  writeStream(w, props);
  return w.finish().slice();
}

/**
 * Encode one export's object data: the tagged stream, its None when the stream had one, and the
 * native tail byte for byte. decode -> encode gives the bytes that were read.
 */
export function encodeExportObject(obj: ExportObject): Uint8Array {
  const w = new BinaryWriter(256 + obj.tail.byteLength);
  for (const p of obj.properties) writeProperty(w, p);
  if (obj.terminated) writeFName(w, null);
  w.bytes(obj.tail);
  return w.finish().slice();
}

function writeStream(w: BinaryWriter, props: readonly Property[]): void {
  for (const p of props) writeProperty(w, p);
  writeFName(w, null);
}

function writeProperty(w: BinaryWriter, p: Property): void {
  writeFName(w, p.name);
  writeFName(w, p.type);
  const sizeAt = w.pos;
  w.i32(0);
  w.i32(p.arrayIndex);
  switch (p.type) {
    case 'BoolProperty':
      w.u8(p.value ? 1 : 0);
      return; // size stays 0: a bool lives in its tag
    case 'ByteProperty':
    case 'EnumProperty':
      writeFName(w, p.enumName);
      break;
    case 'StructProperty':
      writeFName(w, p.structName);
      break;
    case 'ArrayProperty':
      writeFName(w, p.innerType);
      if (p.innerType === 'StructProperty') writeFName(w, p.innerStructName ?? null);
      break;
    default:
      break;
  }
  const start = w.pos;
  writeValue(w, p);
  w.patchI32(sizeAt, w.pos - start);
}

function writeValue(w: BinaryWriter, p: Property): void {
  switch (p.type) {
    case 'ByteProperty':
      if (p.enumName === null) w.u8(p.value as number);
      else writeFName(w, p.value as string | null);
      return;
    case 'EnumProperty':
      writeFName(w, p.value);
      return;
    case 'StructProperty':
      writeStruct(w, p.structName, p.value);
      return;
    case 'ArrayProperty':
      writeArray(w, p.innerType, p.innerStructName ?? null, p.value);
      return;
    default:
      writeScalar(w, p.type, p.value);
  }
}

/** A scalar (or Bool/Byte as one u8, Enum as an FName) positionally, the mirror of decodeScalar. */
export function writeScalar(w: BinaryWriter, type: PropertyType, value: unknown): void {
  switch (type) {
    case 'IntProperty':
      w.i32(value as number);
      return;
    case 'Int64Property':
      w.i64(value as bigint);
      return;
    case 'UInt32Property':
      w.u32(value as number);
      return;
    case 'FloatProperty':
      w.f32(value as FloatValue);
      return;
    case 'DoubleProperty':
      w.f64(value as FloatValue);
      return;
    case 'StrProperty':
      w.fstring(value as string);
      return;
    case 'NameProperty':
    case 'EnumProperty':
      writeFName(w, value as string | null);
      return;
    case 'ObjectProperty':
      w.i64(value as number);
      return;
    case 'SoftObjectProperty':
      w.guid(value as string);
      return;
    case 'BoolProperty':
      w.u8(value ? 1 : 0);
      return;
    case 'ByteProperty':
      w.u8(value as number);
      return;
    default:
      throw new RangeError(`cannot write ${type} as a scalar`);
  }
}

function writeStruct(w: BinaryWriter, structName: string | null, value: StructValue): void {
  const builtin = structName === null ? undefined : BUILTIN_STRUCTS[structName];
  if (!builtin) {
    writeStream(w, value as Property[]);
    return;
  }
  writeBuiltin(w, builtin, structName as string, value as FloatValue[] | string);
}

/** A built-in struct positionally, the mirror of readBuiltin. */
export function writeBuiltin(w: BinaryWriter, builtin: BuiltinStruct, structName: string, value: FloatValue[] | string): void {
  if (builtin.kind === 'guid') {
    w.guid(value as string);
    return;
  }
  const vals = value as FloatValue[];
  if (!Array.isArray(vals) || vals.length !== builtin.fields.length) throw new RangeError(`${structName} takes ${builtin.fields.length} values`);
  for (let i = 0; i < vals.length; i++) {
    switch (builtin.fields[i].kind) {
      case 'f64':
        w.f64(vals[i]);
        break;
      case 'f32':
        w.f32(vals[i]);
        break;
      case 'i32':
        w.i32(vals[i] as number);
        break;
      case 'u8':
        w.u8(vals[i] as number);
        break;
    }
  }
}

function writeArray(w: BinaryWriter, inner: PropertyType, structName: string | null, value: ArrayValue): void {
  w.i32(value.length);
  if (inner === 'ByteProperty' && value instanceof Uint8Array) {
    w.bytes(value);
    return;
  }
  for (const el of value as unknown[]) {
    if (inner === 'StructProperty') writeStruct(w, structName, el as StructValue);
    else writeScalar(w, inner, el);
  }
}

/**
 * Visit every PackageIndex in a stream (tags, arrays and nested structs) and replace it with
 * `map(index)`. Used by the cook to renumber references after stripping exports.
 */
export function mapObjectRefs(props: Property[], map: (index: number) => number): void {
  for (const p of props) {
    switch (p.type) {
      case 'ObjectProperty':
        p.value = map(p.value);
        break;
      case 'StructProperty':
        if (!BUILTIN_STRUCTS[p.structName ?? '']) mapObjectRefs(p.value as Property[], map);
        break;
      case 'ArrayProperty':
        if (p.innerType === 'ObjectProperty') {
          const arr = p.value as number[];
          for (let i = 0; i < arr.length; i++) arr[i] = map(arr[i]);
        } else if (p.innerType === 'StructProperty' && !BUILTIN_STRUCTS[p.innerStructName ?? '']) {
          for (const el of p.value as Property[][]) mapObjectRefs(el, map);
        }
        break;
      default:
        break;
    }
  }
}
