/**
 * Bounds-checked little-endian reads over one buffer. Every read names the field it is for, so a
 * short or hostile file fails with the file, the field and the offset, never with a RangeError.
 * `base` is the buffer's position in the file, so offsets in errors are file offsets even when
 * only a slice (an export, the tables) was read.
 */
import { errors } from '../errors.js';
import { NaNBits, type FloatValue } from './packageTypes.js';

const MAX_FSTRING = 65_535;
// ignoreBOM: a string that starts with U+FEFF keeps it, so the bytes round-trip.
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const hexSlice = (Buffer.prototype as unknown as { hexSlice: (this: Uint8Array, start: number, end: number) => string }).hexSlice;

/**
 * `bytes` as a plain Uint8Array (a view of a Buffer's bytes, not a copy). A cook worker parses the
 * scan's read buffers (Buffer) and then the kept sources (Uint8Array): readTables and the reader's
 * methods, optimized on one kind, deoptimized on the other (Buffer's subarray is not Uint8Array's)
 * and were compiled again in each worker. Given one kind, they are compiled once.
 */
export function plainBytes(bytes: Uint8Array): Uint8Array {
  return Object.getPrototypeOf(bytes) === Uint8Array.prototype ? bytes : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export class BinaryReader {
  readonly view: DataView;
  pos: number;

  constructor(
    readonly bytes: Uint8Array,
    readonly file: string,
    readonly base = 0,
    /** The whole file's size, for messages; defaults to the end of this buffer. */
    readonly fileSize = base + bytes.byteLength,
    pos = 0,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = pos;
  }

  get length(): number {
    return this.bytes.byteLength;
  }

  get remaining(): number {
    return this.bytes.byteLength - this.pos;
  }

  /** File offset of the cursor. */
  get offset(): number {
    return this.base + this.pos;
  }

  need(n: number, field: string): void {
    if (n < 0 || this.pos + n > this.bytes.byteLength) {
      throw errors.packageTruncated(this.file, field, this.base + this.pos, n, this.base + this.bytes.byteLength);
    }
  }

  fail(field: string, why: string, at = this.pos): never {
    throw errors.packageInvalid(this.file, field, this.base + at, why);
  }

  u8(field: string): number {
    this.need(1, field);
    return this.view.getUint8(this.pos++);
  }

  i32(field: string): number {
    this.need(4, field);
    const v = this.view.getInt32(this.pos, true);
    this.pos += 4;
    return v;
  }

  u32(field: string): number {
    this.need(4, field);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }

  i64big(field: string): bigint {
    this.need(8, field);
    const v = this.view.getBigInt64(this.pos, true);
    this.pos += 8;
    return v;
  }

  u64(field: string): bigint {
    this.need(8, field);
    const v = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return v;
  }

  /** An i64 that must fit a JS number exactly (offsets, sizes, indices). */
  i64(field: string): number {
    // Without a BigInt when the high word keeps it within +-(2^53 - 1): every real offset and size.
    if (this.pos + 8 <= this.bytes.byteLength) {
      const hi = this.view.getInt32(this.pos + 4, true);
      if (hi > -0x200000 && hi < 0x200000) {
        const lo = this.view.getUint32(this.pos, true);
        this.pos += 8;
        // A small value as a small integer, whichever tier computed it: the optimized code's
        // float sum came back boxed while the interpreter's was not, and objects holding these
        // (export entries) changed field representation mid-cook, deoptimizing their readers.
        if (hi === 0 && lo <= 0x3fffffff) return lo | 0;
        return hi * 0x1_0000_0000 + lo;
      }
    }
    const at = this.pos;
    const v = this.i64big(field);
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) this.fail(field, `value ${v} is out of range`, at);
    return Number(v);
  }

  /** A u64 that must fit a JS number exactly. */
  u64num(field: string): number {
    const at = this.pos;
    const v = this.u64(field);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) this.fail(field, `value ${v} is out of range`, at);
    return Number(v);
  }

  f32(field: string): number {
    this.need(4, field);
    const v = this.view.getFloat32(this.pos, true);
    this.pos += 4;
    return v;
  }

  f64(field: string): number {
    this.need(8, field);
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  /** An f32 value, a NaN kept as its exact bits (see NaNBits). */
  f32value(field: string): FloatValue {
    this.need(4, field);
    const v = this.view.getFloat32(this.pos, true);
    if (v !== v) {
      const bits = this.view.getUint32(this.pos, true);
      this.pos += 4;
      return new NaNBits(32, BigInt(bits));
    }
    this.pos += 4;
    return v;
  }

  /** An f64 value, a NaN kept as its exact bits (see NaNBits). */
  f64value(field: string): FloatValue {
    this.need(8, field);
    const v = this.view.getFloat64(this.pos, true);
    if (v !== v) {
      const bits = this.view.getBigUint64(this.pos, true);
      this.pos += 8;
      return new NaNBits(64, bits);
    }
    this.pos += 8;
    return v;
  }

  /** A view (no copy) of the next n bytes. */
  bytesView(n: number, field: string): Uint8Array {
    this.need(n, field);
    const v = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }

  fstring(field: string): string {
    const at = this.pos;
    const len = this.u32(field);
    if (len > MAX_FSTRING) this.fail(field, `string length ${len} exceeds ${MAX_FSTRING}`, at);
    const raw = this.bytesView(len, field);
    try {
      return decoder.decode(raw);
    } catch {
      return this.fail(field, 'string is not valid UTF-8', at);
    }
  }

  /** 16 raw bytes as 32 lowercase hex digits. */
  guid(field: string): string {
    this.need(16, field);
    // Buffer's hex encoder straight over this buffer (any Uint8Array): no copy into a Buffer first.
    const s = hexSlice.call(this.bytes, this.pos, this.pos + 16);
    this.pos += 16;
    return s;
  }
}
