/**
 * Class schemas (FORMAT.md "Where the stream ends: the native tail"): what each class's native
 * `Serialize` writes after its tagged properties, as the engine's reflector emits it. A project
 * keeps them as JSON files in its schemas folder; they are validated here with errors naming the
 * file and the JSON path, and merged by class name (a class or struct defined twice differently
 * is an error naming both files).
 *
 * Pure over parsed JSON: loadSchemas.ts reads the folder.
 */
import { errors } from '../errors.js';
import { BUILTIN_STRUCTS, PROPERTY_TYPES, type PropertyType } from '../format/packageTypes.js';
import { hashString } from '../util/hash.js';

export const SCHEMA_VERSION = 1;
/** A field repeated more often than this is not a field. */
const MAX_ARRAY_DIM = 1_000_000;

/** One native field, read positionally with no tag. */
export interface SchemaField {
  name: string;
  type: PropertyType;
  /** StructProperty: a built-in struct or a schema struct. */
  struct?: string;
  /** ArrayProperty: the element type (never ArrayProperty). */
  inner?: PropertyType;
  /** ArrayProperty of StructProperty: the element struct. */
  innerStruct?: string;
  /** n > 1: n values in a row. */
  arrayDim: number;
}

export interface ClassSchema {
  name: string;
  super: string | null;
  native: SchemaField[];
  /** The file that defined it (the first, when several agree). */
  file: string;
}

export interface StructSchema {
  name: string;
  fields: SchemaField[];
  file: string;
}

/** One file's classes and structs, validated on their own. */
export interface SchemaFile {
  file: string;
  classes: ClassSchema[];
  structs: StructSchema[];
}

const FIELD_KEYS = new Set(['name', 'type', 'struct', 'inner', 'innerStruct', 'arrayDim']);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const key = (base: string, k: string) => `${base}[${JSON.stringify(k)}]`;

function checkKeys(o: Record<string, unknown>, allowed: ReadonlySet<string>, file: string, at: string): void {
  for (const k of Object.keys(o)) if (!allowed.has(k)) throw errors.schemaInvalid(file, `${at}.${k}`, `is not a known key (known: ${[...allowed].join(', ')})`);
}

function parseField(v: unknown, file: string, at: string): SchemaField {
  if (!isObject(v)) throw errors.schemaInvalid(file, at, 'must be an object');
  checkKeys(v, FIELD_KEYS, file, at);
  if (typeof v.name !== 'string' || v.name === '') throw errors.schemaInvalid(file, `${at}.name`, 'must be a non-empty string');
  if (typeof v.type !== 'string' || !PROPERTY_TYPES.has(v.type)) throw errors.schemaInvalid(file, `${at}.type`, `${JSON.stringify(v.type)} is not one of the fourteen property types`);
  const field: SchemaField = { name: v.name, type: v.type as PropertyType, arrayDim: 1 };
  if (v.arrayDim !== undefined) {
    if (!Number.isInteger(v.arrayDim) || (v.arrayDim as number) < 1 || (v.arrayDim as number) > MAX_ARRAY_DIM) {
      throw errors.schemaInvalid(file, `${at}.arrayDim`, `must be a whole number from 1 to ${MAX_ARRAY_DIM}`);
    }
    field.arrayDim = v.arrayDim as number;
  }
  const needString = (k: 'struct' | 'innerStruct', why: string): string => {
    if (typeof v[k] !== 'string' || v[k] === '') throw errors.schemaInvalid(file, `${at}.${k}`, why);
    return v[k] as string;
  };
  const forbid = (k: string, why: string) => {
    if (v[k] !== undefined) throw errors.schemaInvalid(file, `${at}.${k}`, why);
  };
  if (field.type === 'StructProperty') field.struct = needString('struct', 'a StructProperty field names its struct');
  else forbid('struct', 'only a StructProperty field names a struct');
  if (field.type === 'ArrayProperty') {
    if (typeof v.inner !== 'string' || !PROPERTY_TYPES.has(v.inner) || v.inner === 'ArrayProperty') {
      throw errors.schemaInvalid(file, `${at}.inner`, `${JSON.stringify(v.inner)} is not an array element type`);
    }
    field.inner = v.inner as PropertyType;
    if (field.inner === 'StructProperty') field.innerStruct = needString('innerStruct', 'an array of StructProperty names its element struct');
    else forbid('innerStruct', 'only an array of StructProperty names an element struct');
  } else {
    forbid('inner', 'only an ArrayProperty field has an element type');
    forbid('innerStruct', 'only an ArrayProperty field has an element struct');
  }
  return field;
}

function parseFields(v: unknown, file: string, at: string): SchemaField[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw errors.schemaInvalid(file, at, 'must be an array of fields');
  const names = new Set<string>();
  return v.map((f, i) => {
    const field = parseField(f, file, `${at}[${i}]`);
    if (names.has(field.name)) throw errors.schemaInvalid(file, `${at}[${i}].name`, `"${field.name}" is already a field here`);
    names.add(field.name);
    return field;
  });
}

/** Validate one parsed schema file. */
export function parseSchemaFile(json: unknown, file: string): SchemaFile {
  if (!isObject(json)) throw errors.schemaInvalid(file, '$', 'must be a JSON object');
  checkKeys(json, new Set(['$schema', 'version', 'classes', 'structs']), file, '$');
  if (json.version !== SCHEMA_VERSION) throw errors.schemaInvalid(file, '$.version', `must be ${SCHEMA_VERSION}, found ${JSON.stringify(json.version)}`);
  const classes: ClassSchema[] = [];
  const structs: StructSchema[] = [];
  if (json.classes !== undefined) {
    if (!isObject(json.classes)) throw errors.schemaInvalid(file, '$.classes', 'must be an object of class name -> class');
    for (const [name, c] of Object.entries(json.classes)) {
      const at = key('$.classes', name);
      if (name === '') throw errors.schemaInvalid(file, at, 'a class name is not empty');
      if (!isObject(c)) throw errors.schemaInvalid(file, at, 'must be an object');
      checkKeys(c, new Set(['super', 'native']), file, at);
      if (c.super !== undefined && (typeof c.super !== 'string' || c.super === '')) throw errors.schemaInvalid(file, `${at}.super`, 'must be a class name');
      classes.push({ name, super: (c.super as string | undefined) ?? null, native: parseFields(c.native, file, `${at}.native`), file });
    }
  }
  if (json.structs !== undefined) {
    if (!isObject(json.structs)) throw errors.schemaInvalid(file, '$.structs', 'must be an object of struct name -> struct');
    for (const [name, s] of Object.entries(json.structs)) {
      const at = key('$.structs', name);
      if (name === '') throw errors.schemaInvalid(file, at, 'a struct name is not empty');
      if (BUILTIN_STRUCTS[name]) throw errors.schemaInvalid(file, at, `"${name}" is a built-in struct`);
      if (!isObject(s)) throw errors.schemaInvalid(file, at, 'must be an object');
      checkKeys(s, new Set(['fields']), file, at);
      structs.push({ name, fields: parseFields(s.fields, file, `${at}.fields`), file });
    }
  }
  return { file, classes, structs };
}

/** A definition without where it came from: what "defined twice differently" compares. */
function definitionText(d: ClassSchema | StructSchema): string {
  return 'native' in d ? JSON.stringify({ super: d.super, native: d.native }) : JSON.stringify({ fields: d.fields });
}

/** The merged schemas of a project. Immutable once built. */
export class ClassSchemas {
  private readonly fingerprints = new Map<string, string>();

  private constructor(
    readonly classes: ReadonlyMap<string, ClassSchema>,
    readonly structs: ReadonlyMap<string, StructSchema>,
  ) {}

  static readonly empty = new ClassSchemas(new Map(), new Map());

  /**
   * Merge validated files (in a stable order) and check what only the whole set can show: every
   * struct a field names exists, no class is its own ancestor through `super`, and no struct
   * holds itself by value.
   */
  static merge(files: readonly SchemaFile[]): ClassSchemas {
    const classes = new Map<string, ClassSchema>();
    const structs = new Map<string, StructSchema>();
    for (const f of files) {
      for (const c of f.classes) {
        const prev = classes.get(c.name);
        if (prev && definitionText(prev) !== definitionText(c)) {
          throw errors.schemaInvalid(c.file, key('$.classes', c.name), `is defined differently in ${prev.file}`);
        }
        if (!prev) classes.set(c.name, c);
      }
      for (const s of f.structs) {
        const prev = structs.get(s.name);
        if (prev && definitionText(prev) !== definitionText(s)) {
          throw errors.schemaInvalid(s.file, key('$.structs', s.name), `is defined differently in ${prev.file}`);
        }
        if (!prev) structs.set(s.name, s);
      }
    }
    const checkRefs = (fields: SchemaField[], file: string, at: string) =>
      fields.forEach((f, i) => {
        for (const k of ['struct', 'innerStruct'] as const) {
          const s = f[k];
          if (s !== undefined && !BUILTIN_STRUCTS[s] && !structs.has(s)) {
            throw errors.schemaInvalid(file, `${at}[${i}].${k}`, `"${s}" is neither a built-in struct nor a struct of any schema`);
          }
        }
      });
    for (const c of classes.values()) checkRefs(c.native, c.file, `${key('$.classes', c.name)}.native`);
    for (const s of structs.values()) checkRefs(s.fields, s.file, `${key('$.structs', s.name)}.fields`);

    for (const c of classes.values()) {
      const seen: string[] = [c.name];
      for (let cur = c.super; cur !== null; cur = classes.get(cur)?.super ?? null) {
        if (seen.includes(cur)) {
          throw errors.schemaInvalid(c.file, `${key('$.classes', c.name)}.super`, `the super chain is a cycle: ${[...seen, cur].join(' -> ')}`);
        }
        seen.push(cur);
      }
    }
    // A struct that holds itself by value (not through an array) would be infinitely large.
    const visiting = new Set<string>();
    const done = new Set<string>();
    const visit = (name: string, path: string[]) => {
      if (done.has(name)) return;
      const s = structs.get(name)!;
      if (visiting.has(name)) throw errors.schemaInvalid(s.file, key('$.structs', name), `holds itself by value: ${[...path, name].join(' -> ')}`);
      visiting.add(name);
      for (const f of s.fields) if (f.type === 'StructProperty' && structs.has(f.struct!)) visit(f.struct!, [...path, name]);
      visiting.delete(name);
      done.add(name);
    };
    for (const name of structs.keys()) visit(name, []);
    return new ClassSchemas(classes, structs);
  }

  get size(): number {
    return this.classes.size + this.structs.size;
  }

  /** An export has a schema when its own class has an entry. */
  has(className: string | null): boolean {
    return className !== null && this.classes.has(className);
  }

  /** The class and the ancestors schemas define, top ancestor first (the order tails are read in). */
  chain(className: string): ClassSchema[] {
    const out: ClassSchema[] = [];
    for (let c = this.classes.get(className); c; c = c.super === null ? undefined : this.classes.get(c.super)) out.unshift(c);
    return out;
  }

  /**
   * What the tail of an export of `className` depends on: its chain's definitions and every
   * schema struct they reach. '' when the class has no schema. Editing one class's schema changes
   * the fingerprint of that class and its subclasses only.
   */
  fingerprint(className: string): string {
    if (!this.classes.has(className)) return '';
    let fp = this.fingerprints.get(className);
    if (fp === undefined) {
      const chain = this.chain(className);
      const reached = new Set<string>();
      const walk = (fields: SchemaField[]) => {
        for (const f of fields) {
          for (const s of [f.struct, f.innerStruct]) {
            if (s !== undefined && this.structs.has(s) && !reached.has(s)) {
              reached.add(s);
              walk(this.structs.get(s)!.fields);
            }
          }
        }
      };
      for (const c of chain) walk(c.native);
      const text = JSON.stringify({
        chain: chain.map((c) => [c.name, definitionText(c)]),
        structs: [...reached].sort().map((s) => [s, definitionText(this.structs.get(s)!)]),
      });
      fp = hashString(text);
      this.fingerprints.set(className, fp);
    }
    return fp;
  }

  /**
   * The schema part of a package's cook key, from its exports' class names: '' when none of them
   * has a schema, so a package no schema touches keeps its key whatever the schemas folder holds.
   */
  packageHash(classNames: Iterable<string | null>): string {
    const parts: string[] = [];
    for (const c of new Set(classNames)) if (c !== null && this.classes.has(c)) parts.push(`${c}=${this.fingerprint(c)}`);
    if (parts.length === 0) return '';
    return hashString(parts.sort().join('\n'));
  }
}
