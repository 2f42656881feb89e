/**
 * A walk over one export's object data that checks it the way `decodeExportObject` reads it
 * (properties.ts), without building a property: for the cook, which ships most exports as they
 * are, or with only their PackageIndex values renumbered (fixed-width i64s, patched in a copy).
 *
 * It vouches only for what it fully understands: a version 2 stream whose names are ASCII, no
 * `NAME_None` anywhere, every value filling its declared size, every check of the decoder passed
 * (bool bytes, PackageIndex ranges, soft references in the import table as Soft, nesting depth,
 * array counts). Anything else, a broken stream included, is `null`: the caller then decodes the
 * export, which throws the decoder's own error or reads it. So a walk that says yes is one the
 * decoder would accept with the same stream end and the same native tail, and re-encoding its
 * properties would give back its bytes (FORMAT.md's encoding is canonical for version 2 without
 * `NAME_None`). The tests hold the two paths to the same bytes on varied and mutated packages.
 */
import { BUILTIN_STRUCTS, DependencyType, NULL_GUID, type BuiltinStruct, type ImportEntry } from './packageTypes.js';

/** What the walk needs from the package's tables. */
export interface ScanContext {
  importCount: number;
  exportCount: number;
  imports: readonly ImportEntry[];
}

export interface ExportScan {
  /** Offsets (within the export's bytes) of every PackageIndex value, in stream order. */
  refs: number[];
  /** Where the native tail starts (the export's length when it has none). */
  tailAt: number;
  /** The tagged stream ended with a None name. */
  terminated: boolean;
}

const MAX_DEPTH = 64;
const MAX_FSTRING = 65_535;

const enum T {
  Bool,
  Byte,
  Enum,
  Int,
  Int64,
  UInt32,
  Float,
  Double,
  Str,
  Name,
  Object,
  SoftObject,
  Struct,
  Array,
}

const TYPE_NAMES: Array<[string, T]> = [
  ['BoolProperty', T.Bool],
  ['ByteProperty', T.Byte],
  ['EnumProperty', T.Enum],
  ['IntProperty', T.Int],
  ['Int64Property', T.Int64],
  ['UInt32Property', T.UInt32],
  ['FloatProperty', T.Float],
  ['DoubleProperty', T.Double],
  ['StrProperty', T.Str],
  ['NameProperty', T.Name],
  ['ObjectProperty', T.Object],
  ['SoftObjectProperty', T.SoftObject],
  ['StructProperty', T.Struct],
  ['ArrayProperty', T.Array],
];
/** By byte length: the type names of that length, as bytes. */
const TYPES_BY_LENGTH: Array<Array<[Uint8Array, T]>> = [];
for (const [name, t] of TYPE_NAMES) (TYPES_BY_LENGTH[name.length] ??= []).push([Buffer.from(name, 'latin1'), t]);

/** Bytes of the smallest element, as properties.ts minElementSize (built-in structs are handled apart). */
const MIN_ELEMENT: Record<T, number> = {
  [T.Bool]: 1,
  [T.Byte]: 1,
  [T.Enum]: 4,
  [T.Int]: 4,
  [T.Int64]: 8,
  [T.UInt32]: 4,
  [T.Float]: 4,
  [T.Double]: 8,
  [T.Str]: 4,
  [T.Name]: 4,
  [T.Object]: 8,
  [T.SoftObject]: 16,
  [T.Struct]: 4,
  [T.Array]: 4,
};

const NAME_NONE = Buffer.from('NAME_None', 'latin1');
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const hexSlice = (Buffer.prototype as unknown as { hexSlice: (this: Uint8Array, start: number, end: number) => string }).hexSlice;

/** Thrown inside the walk: the decoder must read this export (it may fail, or read it). */
const DECLINE = Symbol('decline');
/** Thrown inside a top-level tag: not a property, the native tail starts at the tag. */
const TAIL = Symbol('tail');

class Walk {
  readonly refs: number[] = [];
  private readonly dv: DataView;
  pos = 0;
  /** The FString last read: its bytes are [strAt, strAt + strLen). */
  strAt = 0;
  strLen = 0;
  private soft?: Set<string>;

  constructor(
    readonly b: Uint8Array,
    readonly ctx: ScanContext,
  ) {
    this.dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }

  i32(end: number, fail: symbol): number {
    if (this.pos + 4 > end) throw fail;
    const v = this.dv.getInt32(this.pos, true);
    this.pos += 4;
    return v;
  }

  /**
   * An FName or FString up to `end`: `fail` is thrown where the reader would throw (no length,
   * too long, past the end). Names in tags must be ASCII (else DECLINE); `values` may be any
   * valid UTF-8. Returns the byte length (0: None for an FName). `NAME_None` is always DECLINE.
   */
  str(end: number, fail: symbol, values: boolean): number {
    const len = this.i32(end, fail) >>> 0;
    if (len > MAX_FSTRING || this.pos + len > end) throw fail;
    const at = this.pos;
    const b = this.b;
    for (let i = at; i < at + len; i++) {
      if (b[i] >= 0x80) {
        if (!values) throw DECLINE;
        try {
          decoder.decode(b.subarray(at, at + len));
        } catch {
          throw DECLINE;
        }
        break;
      }
    }
    if (len === 9 && sameBytes(b, at, NAME_NONE)) throw DECLINE;
    this.strAt = at;
    this.strLen = len;
    this.pos = at + len;
    return len;
  }

  /** The property type named by the last string, or -1. */
  typeOfLast(): T | -1 {
    const list = TYPES_BY_LENGTH[this.strLen];
    if (list) for (const [bytes, t] of list) if (sameBytes(this.b, this.strAt, bytes)) return t;
    return -1;
  }

  /** The built-in struct the last string names, null for a tagged-stream struct. */
  builtinOfLast(): BuiltinStruct | null {
    if (this.strLen === 0) return null;
    const name = String.fromCharCode.apply(null, this.b.subarray(this.strAt, this.strAt + this.strLen) as unknown as number[]);
    const builtin = BUILTIN_STRUCTS[name];
    if (builtin === undefined) return null;
    // A name like "constructor" finds Object's, which the decoder trips over: its business.
    if (!Object.hasOwn(BUILTIN_STRUCTS, name)) throw DECLINE;
    return builtin;
  }

  /** A PackageIndex value at pos (8 bytes, known to be there): in range, recorded. */
  packageIndex(): void {
    const lo = this.dv.getUint32(this.pos, true);
    const hi = this.dv.getInt32(this.pos + 4, true);
    if (hi === 0) {
      if (lo > this.ctx.exportCount) throw DECLINE;
    } else if (hi === -1) {
      if (lo < 0x8000_0000 || 0x1_0000_0000 - lo > this.ctx.importCount) throw DECLINE;
    } else throw DECLINE;
    this.refs.push(this.pos);
    this.pos += 8;
  }

  /** A SoftObjectProperty GUID at pos (16 bytes, known to be there): null or a Soft import. */
  softGuid(): void {
    const guid = hexSlice.call(this.b, this.pos, this.pos + 16);
    if (guid !== NULL_GUID) {
      this.soft ??= new Set(this.ctx.imports.filter((i) => i.type === DependencyType.Soft).map((i) => i.guid));
      if (!this.soft.has(guid)) throw DECLINE;
    }
    this.pos += 16;
  }

  /**
   * One tag up to its value, as properties.ts readTag. Returns the type, or -1 for None. At the
   * top level, where the reader's failure means "not a property", TAIL is thrown; nested, DECLINE.
   * Sets `size` and what the value needs of the tag: the bool's byte, whether a byte has an enum
   * name, the struct's built-in, the array's inner type and built-in.
   */
  size = 0;
  boolAt = 0;
  hasEnum = false;
  innerType: T = T.Int;
  builtin: BuiltinStruct | null = null;
  tag(end: number, top: boolean): T | -1 {
    const soft = top ? TAIL : DECLINE;
    if (this.str(end, soft, false) === 0) return -1;
    if (this.str(end, soft, false) === 0) throw soft;
    const type = this.typeOfLast();
    if (type === -1) throw soft;
    const size = this.i32(end, soft);
    if (size < 0) throw soft;
    this.i32(end, soft); // arrayIndex
    switch (type) {
      case T.Bool:
        if (this.pos + 1 > end) throw soft;
        this.boolAt = this.pos++;
        break;
      case T.Byte:
      case T.Enum:
        this.hasEnum = this.str(end, soft, false) !== 0;
        break;
      case T.Struct:
        this.str(end, soft, false);
        this.builtin = this.builtinOfLast();
        break;
      case T.Array: {
        this.str(end, soft, false);
        const inner = this.typeOfLast();
        // A broken property in both places, never a tail.
        if (this.strLen === 0 || inner === -1 || inner === T.Array) throw DECLINE;
        this.innerType = inner;
        this.builtin = null;
        if (inner === T.Struct) {
          this.str(end, soft, false);
          this.builtin = this.builtinOfLast();
        }
        break;
      }
      default:
        break;
    }
    if (size > end - this.pos) throw soft;
    this.size = size;
    return type;
  }

  /** The value of the tag just read, filling exactly `size` bytes. */
  value(type: T, depth: number): void {
    const size = this.size;
    const end = this.pos + size;
    switch (type) {
      case T.Bool:
        if (this.b[this.boolAt] > 1 || size !== 0) throw DECLINE;
        return;
      case T.Byte:
        if (!this.hasEnum) {
          if (size !== 1) throw DECLINE;
          this.pos++;
          return;
        }
        this.str(end, DECLINE, true);
        break;
      case T.Enum:
        this.str(end, DECLINE, true);
        break;
      case T.Struct: {
        const builtin = this.builtin;
        if (builtin !== null) {
          if (size !== builtin.size) throw DECLINE;
          this.pos = end;
          return;
        }
        this.stream(end, depth + 1);
        break;
      }
      case T.Array:
        this.array(end, depth, this.innerType, this.builtin);
        break;
      default:
        this.scalar(type, end);
        break;
    }
    if (this.pos !== end) throw DECLINE;
  }

  scalar(type: T, end: number): void {
    switch (type) {
      case T.Int:
      case T.UInt32:
      case T.Float:
        if (this.pos + 4 > end) throw DECLINE;
        this.pos += 4;
        return;
      case T.Int64:
      case T.Double:
        if (this.pos + 8 > end) throw DECLINE;
        this.pos += 8;
        return;
      case T.Object:
        if (this.pos + 8 > end) throw DECLINE;
        this.packageIndex();
        return;
      case T.SoftObject:
        if (this.pos + 16 > end) throw DECLINE;
        this.softGuid();
        return;
      case T.Str:
      case T.Name:
      case T.Enum:
        this.str(end, DECLINE, true);
        return;
      default:
        throw DECLINE;
    }
  }

  /** A nested struct's tagged stream: strict, ended by None within `end`. */
  stream(end: number, depth: number): void {
    if (depth > MAX_DEPTH) throw DECLINE;
    for (;;) {
      const type = this.tag(end, false);
      if (type === -1) return;
      this.value(type, depth);
    }
  }

  array(end: number, depth: number, inner: T, builtin: BuiltinStruct | null): void {
    const count = this.i32(end, DECLINE);
    if (count < 0) throw DECLINE;
    const min = inner === T.Struct && builtin !== null ? builtin.size : MIN_ELEMENT[inner];
    if (count * min > end - this.pos) throw DECLINE;
    switch (inner) {
      case T.Byte:
        this.pos += count;
        return;
      case T.Bool:
        for (let i = 0; i < count; i++) if (this.b[this.pos + i] > 1) throw DECLINE;
        this.pos += count;
        return;
      case T.Struct:
        if (builtin !== null) {
          this.pos += count * builtin.size;
          return;
        }
        for (let i = 0; i < count; i++) this.stream(end, depth + 1);
        return;
      default:
        for (let i = 0; i < count; i++) this.scalar(inner, end);
    }
  }
}

function sameBytes(b: Uint8Array, at: number, want: Uint8Array): boolean {
  for (let i = 0; i < want.length; i++) if (b[at + i] !== want[i]) return false;
  return true;
}

/**
 * Walk export `data` (a version 2 package's, see the module comment). Null when the decoder must
 * read it instead.
 */
export function scanExportObject(data: Uint8Array, ctx: ScanContext): ExportScan | null {
  const w = new Walk(data, ctx);
  const end = data.byteLength;
  let terminated = false;
  try {
    for (;;) {
      const tagAt = w.pos;
      if (tagAt === end) break;
      let type: T | -1;
      try {
        type = w.tag(end, true);
      } catch (e) {
        if (e !== TAIL) throw e;
        w.pos = tagAt;
        break;
      }
      if (type === -1) {
        terminated = true;
        break;
      }
      w.value(type, 0);
    }
  } catch (e) {
    if (e === DECLINE) return null;
    throw e;
  }
  return { refs: w.refs, tailAt: w.pos, terminated };
}
