/**
 * Human-readable text for property values, as `inspect` prints them:
 * `42`, `'Name'`, `"string"`, `&ExportName`, `&import:<guid>`, `EEnum::Label`, `{ X = 1.0, ... }`,
 * `@bytes(..)` for raw bytes. Also a JSON-safe form (bigints as strings, bytes as hex).
 */
import { BUILTIN_STRUCTS, NaNBits, type ArrayValue, type FloatValue, type ExportEntry, type ImportEntry, type Property, type PropertyType, type StructValue } from './packageTypes.js';

export interface RefNames {
  exports: readonly Pick<ExportEntry, 'objectName'>[];
  imports: readonly ImportEntry[];
  /** Import GUID -> object path (from a project's registry), shown instead of the GUID. */
  importPaths?: ReadonlyMap<string, string>;
}

/** Raw byte arrays longer than this are shown abbreviated. */
const BYTES_SHOWN = 16;

function float(n: FloatValue): string {
  if (n instanceof NaNBits) return n.toString();
  if (Object.is(n, -0)) return '-0.0';
  if (Number.isInteger(n)) return `${n}.0`;
  return String(n);
}

function fname(n: string | null): string {
  return n === null ? 'None' : `'${n}'`;
}

function enumLabel(enumName: string | null, label: string | null): string {
  if (label === null) return 'None';
  if (label.includes('::') || enumName === null) return label;
  return `${enumName}::${label}`;
}

export function formatRef(index: number, names: RefNames): string {
  if (index === 0) return 'None';
  if (index > 0) {
    const e = names.exports[index - 1];
    return e ? `&${e.objectName ?? `export:${index - 1}`}` : `&export:${index - 1}?`;
  }
  const imp = names.imports[-index - 1];
  if (!imp) return `&import:${-index - 1}?`;
  const where = names.importPaths?.get(imp.guid);
  return where ? `&${where}` : `&import:${imp.guid}`;
}

function formatBytes(b: Uint8Array): string {
  const hex = Buffer.from(b.subarray(0, BYTES_SHOWN)).toString('hex');
  return `@bytes(${b.byteLength}: ${hex}${b.byteLength > BYTES_SHOWN ? '...' : ''})`;
}

function formatStruct(structName: string | null, v: StructValue, names: RefNames, indent: string): string {
  const builtin = structName === null ? undefined : BUILTIN_STRUCTS[structName];
  if (builtin) {
    if (builtin.kind === 'guid') return `{ Guid = ${v as string} }`;
    const nums = v as FloatValue[];
    const parts = builtin.fields.map((f, i) => `${f.name} = ${f.kind === 'u8' || f.kind === 'i32' ? String(nums[i]) : float(nums[i])}`);
    return `{ ${parts.join(', ')} }`;
  }
  const props = v as Property[];
  if (props.length === 0) return '{ }';
  const inner = props.map((p) => `${indent}  ${formatProperty(p, names, `${indent}  `)}`).join('\n');
  return `{\n${inner}\n${indent}}`;
}

function formatElement(type: PropertyType, structName: string | null, el: unknown, names: RefNames, indent: string): string {
  switch (type) {
    case 'BoolProperty':
      return String(el);
    case 'FloatProperty':
    case 'DoubleProperty':
      return float(el as FloatValue);
    case 'StrProperty':
      return JSON.stringify(el);
    case 'NameProperty':
      return fname(el as string | null);
    case 'EnumProperty':
      return enumLabel(null, el as string | null);
    case 'ObjectProperty':
      return formatRef(el as number, names);
    case 'SoftObjectProperty':
      return `&soft:${el as string}`;
    case 'StructProperty':
      return formatStruct(structName, el as StructValue, names, indent);
    default:
      return String(el);
  }
}

export function formatValue(p: Property, names: RefNames, indent = ''): string {
  switch (p.type) {
    case 'ByteProperty':
      return p.enumName === null ? String(p.value) : enumLabel(p.enumName, p.value as string | null);
    case 'EnumProperty':
      return enumLabel(p.enumName, p.value);
    case 'StructProperty':
      return formatStruct(p.structName, p.value, names, indent);
    case 'ArrayProperty': {
      const v = p.value as ArrayValue;
      if (v instanceof Uint8Array) return formatBytes(v);
      const items = (v as unknown[]).map((el) => formatElement(p.innerType, p.innerStructName ?? null, el, names, indent));
      return `[${items.join(', ')}]`;
    }
    default:
      return formatElement(p.type, null, p.value, names, indent);
  }
}

export function formatProperty(p: Property, names: RefNames, indent = ''): string {
  const name = p.arrayIndex !== 0 ? `${p.name}[${p.arrayIndex}]` : p.name;
  return `${name} = ${formatValue(p, names, indent)}`;
}

/** A JSON-safe copy of a property list: bigints become strings, byte arrays become hex. */
export function propertiesToJson(props: readonly Property[]): unknown[] {
  return props.map((p) => JSON.parse(JSON.stringify(p, jsonReplacer)));
}

export function jsonReplacer(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof NaNBits) return { nan: value.toString() };
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (Object.is(value, -0)) return '-0';
  if (value instanceof Uint8Array) return { bytes: value.byteLength, hex: Buffer.from(value).toString('hex') };
  return value;
}
