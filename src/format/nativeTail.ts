/**
 * Decoding and encoding a native tail with a class schema (FORMAT.md "Where the stream ends: the
 * native tail"). The tail has no tags: walk the class chain from the top ancestor down, each
 * class's `native` fields in order, each value positional. The walk must end exactly at the
 * export's end, else the schema does not fit the export (NATIVE_TAIL_MISMATCH naming the class,
 * the export and the offset).
 *
 * Decoded fields are Property values (arrayDim as arrayIndex 0..n-1, a schema struct as its
 * fields), so renumbering (mapObjectRefs) and display treat them like tagged properties. They
 * describe themselves, so encoding needs no schema.
 */
import { BinaryReader } from './BinaryReader.js';
import { BinaryWriter } from './BinaryWriter.js';
import { errors, LuminaError } from '../errors.js';
import { BUILTIN_STRUCTS, MAX_TABLE_COUNT, type ArrayValue, type FloatValue, type Property, type PropertyType, type StructValue } from './packageTypes.js';
import { decodeScalar, minElementSize, readBuiltin, readFName, writeBuiltin, writeFName, writeScalar, type PropertyContext } from './properties.js';
import type { ClassSchemas, SchemaField } from '../schemas/classSchemas.js';

/** Deeper struct nesting than this is hostile (a schema cannot nest by value forever, but arrays can). */
const MAX_DEPTH = 64;

export interface TailSite {
  className: string;
  exportName: string;
}

/**
 * Decode `r` (exactly the tail's bytes) with the schema of `site.className`. The class must have a
 * schema (`schemas.has`). Every failure is NATIVE_TAIL_MISMATCH at the file offset where it happened.
 */
export function decodeNativeTail(r: BinaryReader, schemas: ClassSchemas, site: TailSite, ctx: PropertyContext): Property[] {
  const out: Property[] = [];
  try {
    for (const cls of schemas.chain(site.className)) for (const f of cls.native) readField(r, schemas, ctx, f, out, 0);
  } catch (e) {
    if (e instanceof LuminaError && (e.code === 'PACKAGE_TRUNCATED' || e.code === 'PACKAGE_INVALID')) {
      const why = e.code === 'PACKAGE_TRUNCATED' ? `${e.field}: runs past the export's end at offset ${r.base + r.length}` : e.message;
      throw errors.nativeTailMismatch(r.file, site.className, site.exportName, e.offset ?? r.offset, why);
    }
    throw e;
  }
  if (r.remaining !== 0) {
    throw errors.nativeTailMismatch(r.file, site.className, site.exportName, r.offset, `the schema's fields end ${r.remaining} bytes before the export's end`);
  }
  return out;
}

function readField(r: BinaryReader, schemas: ClassSchemas, ctx: PropertyContext, f: SchemaField, out: Property[], depth: number, prefix = ''): void {
  for (let i = 0; i < f.arrayDim; i++) {
    const field = f.arrayDim > 1 ? `${prefix}${f.name}[${i}]` : `${prefix}${f.name}`;
    // Keys spelled out (name and arrayIndex first), not spread from a base: see parsePackage.
    const name = f.name;
    switch (f.type) {
      case 'StructProperty':
        out.push({ name, arrayIndex: i, type: f.type, structName: f.struct!, value: readStruct(r, schemas, ctx, f.struct!, field, depth) });
        break;
      case 'ArrayProperty':
        if (f.inner === 'StructProperty') out.push({ name, arrayIndex: i, type: f.type, innerType: f.inner, innerStructName: f.innerStruct!, value: readArray(r, schemas, ctx, f.inner, f.innerStruct ?? null, field, depth) });
        else out.push({ name, arrayIndex: i, type: f.type, innerType: f.inner!, value: readArray(r, schemas, ctx, f.inner!, f.innerStruct ?? null, field, depth) });
        break;
      case 'ByteProperty':
        out.push({ name, arrayIndex: i, type: f.type, enumName: null, value: r.u8(field) });
        break;
      case 'EnumProperty':
        out.push({ name, arrayIndex: i, type: f.type, enumName: null, value: readFName(r, field, ctx.version, ctx.onNameNone) });
        break;
      case 'BoolProperty':
        out.push({ name, arrayIndex: i, type: f.type, value: readBool(r, field) });
        break;
      default:
        out.push({ name, arrayIndex: i, type: f.type, value: decodeScalar(r, ctx, f.type, field) } as Property);
    }
  }
}

function readBool(r: BinaryReader, field: string): boolean {
  const at = r.pos;
  const b = r.u8(field);
  if (b > 1) r.fail(field, `bool byte is ${b}, not 0 or 1`, at);
  return b === 1;
}

function readStruct(r: BinaryReader, schemas: ClassSchemas, ctx: PropertyContext, name: string, field: string, depth: number): StructValue {
  const builtin = BUILTIN_STRUCTS[name];
  if (builtin) return readBuiltin(r, builtin, field);
  if (depth >= MAX_DEPTH) r.fail(field, `structs nested deeper than ${MAX_DEPTH}`);
  const s = schemas.structs.get(name)!;
  const fields: Property[] = [];
  for (const f of s.fields) readField(r, schemas, ctx, f, fields, depth + 1, `${field}.`);
  return fields;
}

/** The fewest bytes a value of this type takes, so a count is checked before anything is made. */
function minSize(schemas: ClassSchemas, type: PropertyType, struct: string | null, depth = 0): number {
  // A schema struct is positional: the tagged stream's minimum (a None, 4 bytes) does not apply.
  if (type !== 'StructProperty' || struct === null || BUILTIN_STRUCTS[struct]) return minElementSize(type, struct);
  const s = schemas.structs.get(struct);
  if (!s || depth > MAX_DEPTH) return 0;
  let n = 0;
  for (const f of s.fields) n += f.arrayDim * (f.type === 'ArrayProperty' ? 4 : minSize(schemas, f.type, f.struct ?? null, depth + 1));
  return n;
}

function readArray(r: BinaryReader, schemas: ClassSchemas, ctx: PropertyContext, inner: PropertyType, struct: string | null, field: string, depth: number): ArrayValue {
  const countAt = r.pos;
  const count = r.i32(`${field} count`);
  if (count < 0) r.fail(`${field} count`, `negative count ${count}`, countAt);
  const min = minSize(schemas, inner, struct);
  if (count * min > r.remaining || (min === 0 && count > MAX_TABLE_COUNT)) {
    r.fail(`${field} count`, `${count} elements need at least ${count * min} bytes, ${r.remaining} remain`, countAt);
  }
  if (inner === 'ByteProperty') return new Uint8Array(r.bytesView(count, `${field} bytes`));
  const out: unknown[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const ef = `${field}[${i}]`;
    switch (inner) {
      case 'BoolProperty':
        out[i] = readBool(r, ef);
        break;
      case 'EnumProperty':
        out[i] = readFName(r, ef, ctx.version, ctx.onNameNone);
        break;
      case 'StructProperty':
        out[i] = readStruct(r, schemas, ctx, struct!, ef, depth);
        break;
      default:
        out[i] = decodeScalar(r, ctx, inner, ef);
    }
  }
  return out as ArrayValue;
}

/** Encode decoded native fields back to tail bytes (decode -> encode gives the bytes that were read). */
export function encodeNativeTail(fields: readonly Property[]): Uint8Array {
  const w = new BinaryWriter(64);
  for (const p of fields) writeNative(w, p);
  return w.finish().slice();
}

function writeNative(w: BinaryWriter, p: Property): void {
  switch (p.type) {
    case 'StructProperty':
      writeNativeStruct(w, p.structName!, p.value);
      return;
    case 'ArrayProperty': {
      const v = p.value;
      w.i32(v.length);
      if (p.innerType === 'ByteProperty' && v instanceof Uint8Array) {
        w.bytes(v);
        return;
      }
      for (const el of v as unknown[]) {
        if (p.innerType === 'StructProperty') writeNativeStruct(w, p.innerStructName!, el as StructValue);
        else writeScalar(w, p.innerType, el);
      }
      return;
    }
    case 'EnumProperty':
      writeFName(w, p.value);
      return;
    default:
      writeScalar(w, p.type, p.value);
  }
}

function writeNativeStruct(w: BinaryWriter, name: string, value: StructValue): void {
  const builtin = BUILTIN_STRUCTS[name];
  if (builtin) writeBuiltin(w, builtin, name, value as FloatValue[] | string);
  else for (const f of value as Property[]) writeNative(w, f);
}
