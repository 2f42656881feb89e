/** A growable little-endian writer; the mirror of BinaryReader. */
import { NaNBits, type FloatValue } from './packageTypes.js';


const encoder = new TextEncoder();

export class BinaryWriter {
  private buf: Uint8Array;
  private view: DataView;
  pos = 0;

  constructor(initial = 256) {
    this.buf = new Uint8Array(initial);
    this.view = new DataView(this.buf.buffer);
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.byteLength) return;
    let cap = this.buf.byteLength * 2;
    while (cap < this.pos + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  u8(v: number): this {
    this.ensure(1);
    this.view.setUint8(this.pos, v);
    this.pos += 1;
    return this;
  }

  i32(v: number): this {
    this.ensure(4);
    this.view.setInt32(this.pos, v, true);
    this.pos += 4;
    return this;
  }

  u32(v: number): this {
    this.ensure(4);
    this.view.setUint32(this.pos, v, true);
    this.pos += 4;
    return this;
  }

  i64(v: number | bigint): this {
    this.ensure(8);
    this.view.setBigInt64(this.pos, BigInt(v), true);
    this.pos += 8;
    return this;
  }

  u64(v: number | bigint): this {
    this.ensure(8);
    this.view.setBigUint64(this.pos, BigInt(v), true);
    this.pos += 8;
    return this;
  }

  /** A NaNBits is written as its exact bits. */
  f32(v: FloatValue): this {
    this.ensure(4);
    if (v instanceof NaNBits) {
      if (v.width !== 32) throw new RangeError(`a ${v.width}-bit NaN cannot be written as an f32`);
      this.view.setUint32(this.pos, Number(v.bits), true);
    } else this.view.setFloat32(this.pos, v, true);
    this.pos += 4;
    return this;
  }

  /** A NaNBits is written as its exact bits. */
  f64(v: FloatValue): this {
    this.ensure(8);
    if (v instanceof NaNBits) {
      if (v.width !== 64) throw new RangeError(`a ${v.width}-bit NaN cannot be written as an f64`);
      this.view.setBigUint64(this.pos, v.bits, true);
    } else this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
    return this;
  }

  bytes(b: Uint8Array): this {
    this.ensure(b.byteLength);
    this.buf.set(b, this.pos);
    this.pos += b.byteLength;
    return this;
  }

  fstring(s: string): this {
    const b = encoder.encode(s);
    if (b.byteLength > 65_535) throw new RangeError(`FString of ${b.byteLength} bytes exceeds 65,535`);
    this.u32(b.byteLength);
    return this.bytes(b);
  }

  /** 32 hex digits to 16 raw bytes. */
  guid(hex: string): this {
    if (!/^[0-9a-f]{32}$/.test(hex)) throw new RangeError(`not a GUID: ${hex}`);
    return this.bytes(Buffer.from(hex, 'hex'));
  }

  /** Overwrite 8 bytes at `at` (for offsets patched in after the fact). */
  patchI64(at: number, v: number | bigint): this {
    this.view.setBigInt64(at, BigInt(v), true);
    return this;
  }

  patchI32(at: number, v: number): this {
    this.view.setInt32(at, v, true);
    return this;
  }

  patchU32(at: number, v: number): this {
    this.view.setUint32(at, v, true);
    return this;
  }

  /** The written bytes (a view, valid until the next write). */
  finish(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}
