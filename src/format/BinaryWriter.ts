/** A growable little-endian writer; the mirror of BinaryReader. */
import { NaNBits, type FloatValue } from './packageTypes.js';


const encoder = new TextEncoder();

/** A lowercase hex digit's value, or -1 (what a GUID string may hold: [0-9a-f]). */
function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

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
    if (typeof v === 'number' && Number.isSafeInteger(v)) {
      // Two 32-bit words instead of a BigInt per offset: the same two's-complement bytes.
      const hi = Math.floor(v / 0x1_0000_0000);
      this.view.setUint32(this.pos, v - hi * 0x1_0000_0000, true);
      this.view.setInt32(this.pos + 4, hi, true);
      this.pos += 8;
      return this;
    }
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
    // UTF-8 straight into the buffer after the length (at most 3 bytes per UTF-16 unit), not
    // into a new array that is then copied.
    this.ensure(4 + 3 * s.length);
    const { written } = encoder.encodeInto(s, this.buf.subarray(this.pos + 4));
    if (written > 65_535) throw new RangeError(`FString of ${written} bytes exceeds 65,535`);
    this.view.setUint32(this.pos, written, true);
    this.pos += 4 + written;
    return this;
  }

  /** 32 lowercase hex digits to 16 raw bytes. */
  guid(hex: string): this {
    if (typeof hex !== 'string' || hex.length !== 32) throw new RangeError(`not a GUID: ${hex}`);
    this.ensure(16);
    for (let i = 0; i < 16; i++) {
      const h = hexDigit(hex.charCodeAt(2 * i));
      const l = hexDigit(hex.charCodeAt(2 * i + 1));
      if (h < 0 || l < 0) throw new RangeError(`not a GUID: ${hex}`);
      this.buf[this.pos + i] = (h << 4) | l;
    }
    this.pos += 16;
    return this;
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
