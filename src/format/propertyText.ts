/**
 * Human-readable text for property values, as `inspect` prints them:
 * `42`, `'Name'`, `"string"`, `&ExportName`, `&import:<guid>`, `EEnum::Label`, `{ X = 1.0, ... }`,
 * `@bytes(..)` for raw bytes. Also a JSON-safe form (bigints as strings, bytes as hex).
 */
import { BUILTIN_STRUCTS, type ArrayValue, type ExportEntry, type ImportEntry, type Property, type PropertyType, type StructValue } from './packageTypes.js';

export interface RefNames {
  exports: readonly Pick<ExportEntry, 'objectName'>[];
  imports: readonly ImportEntry[];
}

/** Raw byte arrays longer than this are shown abbreviated. */
const BYTES_SHOWN = 16;

function float(n: number): string {
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
  return imp ? `&import:${imp.guid}` : `&import:${-index - 1}?`;
}

function formatBytes(b: Uint8Array): string {
  const hex = Buffer.from(b.subarray(0, BYTES_SHOWN)).toString('hex');
  return `@bytes(${b.byteLength}: ${hex}${b.byteLength > BYTES_SHOWN ? '...' : ''})`;
}

function formatStruct(structName: string | null, v: StructValue, names: RefNames, indent: string): string {
  const builtin = structName === null ? undefined : BUILTIN_STRUCTS[structName];
  if (builtin) {
    if (builtin.kind === 'guid') return `{ Guid = ${v as string} }`;
    const nums = v as number[];
    const parts = builtin.fields.map((f, i) => `${f} = ${builtin.kind === 'u8' ? String(nums[i]) : float(nums[i])}`);
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
      return float(el as number);
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
  if (value instanceof Uint8Array) return { bytes: value.byteLength, hex: Buffer.from(value).toString('hex') };
  return value;
}
