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
  type ImportEntry,
  type Property,
  type PropertyType,
  type StructValue,
} from './packageTypes.js';

/** Deeper nesting than this is treated as hostile. */
const MAX_DEPTH = 64;

export interface PropertyContext {
  /** Package version: 1 maps the display string `NAME_None` back to None. */
  version: number;
  /** When given, ObjectProperty indices are checked against the tables. */
  importCount?: number;
  exportCount?: number;
  /** When given, a non-null SoftObjectProperty GUID must be a Soft import. */
  imports?: readonly ImportEntry[];
}

/** Read an FName: empty is None, and version 1 wrote None as `NAME_None`. */
export function readFName(r: BinaryReader, field: string, version: number): string | null {
  const s = r.fstring(field);
  if (s === '' || (version === 1 && s === 'NAME_None')) return null;
  return s;
}

/** Write an FName; None (and a stray `NAME_None`) is written as the empty string. */
export function writeFName(w: BinaryWriter, name: string | null): void {
  w.fstring(name === null || name === 'NAME_None' ? '' : name);
}

/**
 * Decode one export's property stream. `r` spans exactly the export's bytes; the stream must end
 * with a None name at the last byte.
 */
export function decodeProperties(r: BinaryReader, ctx: PropertyContext): Property[] {
  const props = decodeStream(r, ctx, 0);
  if (r.remaining !== 0) r.fail('property stream', `${r.remaining} bytes follow the terminating None`);
  return props;
}

function decodeStream(r: BinaryReader, ctx: PropertyContext, depth: number): Property[] {
  if (depth > MAX_DEPTH) r.fail('property stream', `nesting deeper than ${MAX_DEPTH}`);
  const out: Property[] = [];
  for (;;) {
    const tagAt = r.pos;
    const name = readFName(r, 'property name', ctx.version);
    if (name === null) return out;
    const type = readFName(r, `property ${name} type`, ctx.version);
    if (type === null || !PROPERTY_TYPES.has(type)) {
      r.fail(`property ${name} type`, `${type === null ? 'None' : `'${type}'`} is not a property type`, tagAt);
    }
    const sizeAt = r.pos;
    const size = r.i32(`property ${name} size`);
    if (size < 0) r.fail(`property ${name} size`, `negative size ${size}`, sizeAt);
    const arrayIndex = r.i32(`property ${name} arrayIndex`);
    out.push(decodeTagged(r, ctx, depth, name, type as PropertyType, size, sizeAt, arrayIndex));
  }
}

function decodeTagged(
  r: BinaryReader,
  ctx: PropertyContext,
  depth: number,
  name: string,
  type: PropertyType,
  size: number,
  sizeAt: number,
  arrayIndex: number,
): Property {
  const field = `property ${name}`;
  switch (type) {
    case 'BoolProperty': {
      const at = r.pos;
      const b = r.u8(`${field} value`);
      if (b > 1) r.fail(`${field} value`, `bool byte is ${b}, not 0 or 1`, at);
      if (size !== 0) r.fail(`${field} size`, `BoolProperty declares size ${size}, must be 0`, sizeAt);
      return { name, arrayIndex, type, value: b === 1 };
    }
    case 'ByteProperty': {
      const enumName = readFName(r, `${field} enumName`, ctx.version);
      const value = withinSize(r, size, field, (v) => (enumName === null ? v.u8(field) : readFName(v, field, ctx.version)));
      return { name, arrayIndex, type, enumName, value };
    }
    case 'EnumProperty': {
      const enumName = readFName(r, `${field} enumName`, ctx.version);
      const value = withinSize(r, size, field, (v) => readFName(v, field, ctx.version));
      return { name, arrayIndex, type, enumName, value };
    }
    case 'StructProperty': {
      const structName = readFName(r, `${field} structName`, ctx.version);
      const value = withinSize(r, size, field, (v) => decodeStruct(v, ctx, depth, structName, field));
      return { name, arrayIndex, type, structName, value };
    }
    case 'ArrayProperty': {
      const innerAt = r.pos;
      const inner = readFName(r, `${field} innerType`, ctx.version);
      if (inner === null || !PROPERTY_TYPES.has(inner) || inner === 'ArrayProperty') {
        r.fail(`${field} innerType`, `${inner === null ? 'None' : `'${inner}'`} is not an array element type`, innerAt);
      }
      const innerType = inner as PropertyType;
      if (innerType === 'StructProperty') {
        const innerStructName = readFName(r, `${field} innerStructName`, ctx.version);
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

function decodeScalar(v: BinaryReader, ctx: PropertyContext, type: PropertyType, field: string): unknown {
  switch (type) {
    case 'IntProperty':
      return v.i32(field);
    case 'Int64Property':
      return v.i64big(field);
    case 'UInt32Property':
      return v.u32(field);
    case 'FloatProperty':
      return v.f32(field);
    case 'DoubleProperty':
      return v.f64(field);
    case 'StrProperty':
      return v.fstring(field);
    case 'NameProperty':
      return readFName(v, field, ctx.version);
    case 'ObjectProperty':
      return readPackageIndex(v, ctx, field);
    case 'SoftObjectProperty':
      return readSoftGuid(v, ctx, field);
    default:
      return v.fail(field, `unexpected scalar type ${type}`);
  }
}

function readPackageIndex(v: BinaryReader, ctx: PropertyContext, field: string): number {
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

function readSoftGuid(v: BinaryReader, ctx: PropertyContext, field: string): string {
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
  switch (builtin.kind) {
    case 'guid':
      return v.guid(field);
    case 'u8':
      return builtin.fields.map(() => v.u8(field));
    case 'f32':
      return builtin.fields.map(() => v.f32(field));
    case 'f64':
      return builtin.fields.map(() => v.f64(field));
  }
}

/** Bytes the smallest element of each type takes, for checking counts before allocating. */
function minElementSize(type: PropertyType, structName: string | null): number {
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
      if (!b) return 4;
      return b.kind === 'guid' ? 16 : b.fields.length * (b.kind === 'f64' ? 8 : b.kind === 'f32' ? 4 : 1);
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
        out[i] = readFName(v, ef, ctx.version);
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

function writeScalar(w: BinaryWriter, type: PropertyType, value: unknown): void {
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
      w.f32(value as number);
      return;
    case 'DoubleProperty':
      w.f64(value as number);
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
  if (builtin.kind === 'guid') {
    w.guid(value as string);
    return;
  }
  const nums = value as number[];
  if (nums.length !== builtin.fields.length) throw new RangeError(`${structName} takes ${builtin.fields.length} values`);
  for (const n of nums) {
    if (builtin.kind === 'u8') w.u8(n);
    else if (builtin.kind === 'f32') w.f32(n);
    else w.f64(n);
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
