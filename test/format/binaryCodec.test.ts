/**
 * BinaryWriter / BinaryReader fast paths (i64 without a BigInt, GUIDs without a Buffer copy,
 * FStrings encoded in place) give exactly the bytes and errors of the general ones, at the edges.
 */
import { describe, expect, it } from 'vitest';
import { BinaryReader } from '../../src/format/BinaryReader.js';
import { BinaryWriter } from '../../src/format/BinaryWriter.js';

/** The i64 bytes as BigInt64 writes them: the reference. */
function refI64(v: number): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigInt64(0, BigInt(v), true);
  return b;
}

describe('binary codec', () => {
  const edges = [0, -0, 1, -1, 2 ** 31, -(2 ** 31), 2 ** 32 - 1, 2 ** 32, -(2 ** 32), 2 ** 32 + 5, -(2 ** 32) - 5, 2 ** 52 + 3, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 0x1f_ffff_0000_0000, -0x1f_ffff_0000_0000];

  it('writes an i64 as BigInt64 would and reads it back, at every word boundary', () => {
    for (const v of edges) {
      const w = new BinaryWriter(4).i64(v).finish();
      expect([...w], String(v)).toEqual([...refI64(v)]);
      expect(new BinaryReader(w, 'f').i64('x'), String(v)).toBe(v === 0 ? 0 : v);
    }
    // A bigint and an unsafe number still take the general path.
    expect([...new BinaryWriter().i64(-(2n ** 63n)).finish()]).toEqual([0, 0, 0, 0, 0, 0, 0, 0x80]);
    expect(() => new BinaryWriter().i64(1.5)).toThrow(RangeError);
  });

  it('refuses an i64 outside +-(2^53 - 1) with the field and offset, and a short one as truncated', () => {
    for (const big of [2n ** 53n, -(2n ** 53n), 2n ** 62n, -(2n ** 63n)]) {
      const b = new Uint8Array(12);
      new DataView(b.buffer).setBigInt64(4, big, true);
      const r = new BinaryReader(b, 'f.lasset', 100, undefined, 4);
      expect(() => r.i64('size')).toThrow(expect.objectContaining({ code: 'PACKAGE_INVALID', field: 'size', offset: 104, message: expect.stringContaining(`value ${big} is out of range`) }));
    }
    expect(() => new BinaryReader(new Uint8Array(7), 'f.lasset').i64('size')).toThrow(expect.objectContaining({ code: 'PACKAGE_TRUNCATED', field: 'size' }));
  });

  it('GUIDs: 32 lowercase hex digits both ways; anything else is refused', () => {
    const hex = '0123456789abcdeffedcba9876543210';
    const w = new BinaryWriter(2).u8(7).guid(hex).finish();
    expect(Buffer.from(w.subarray(1)).toString('hex')).toBe(hex);
    const r = new BinaryReader(w, 'f', 0, undefined, 1);
    expect(r.guid('g')).toBe(hex);
    expect(r.pos).toBe(17);
    for (const bad of [hex.toUpperCase(), hex.slice(1), `${hex}0`, `${hex.slice(0, 31)}g`, `${hex.slice(0, 31)}/`, `${hex.slice(0, 31)}:`, `${hex.slice(0, 31)}\``]) {
      expect(() => new BinaryWriter().guid(bad), bad).toThrow(`not a GUID: ${bad}`);
    }
    expect(() => new BinaryReader(new Uint8Array(15), 'f').guid('g')).toThrow(expect.objectContaining({ code: 'PACKAGE_TRUNCATED' }));
  });

  it('FStrings: the UTF-8 TextEncoder gives (lone surrogates too), and a string over 65,535 bytes is refused', () => {
    for (const s of ['', 'None', 'Ünïcödé ✓', '\u{1F600} pair', 'lone \ud800 high', 'lone \udc00 low', '\uFEFFbom', 'é'.repeat(30_000)]) {
      const w = new BinaryWriter(1).fstring(s).finish();
      const want = new TextEncoder().encode(s);
      expect(new DataView(w.buffer, w.byteOffset).getUint32(0, true)).toBe(want.byteLength);
      expect(Buffer.from(w.subarray(4)).equals(Buffer.from(want))).toBe(true);
    }
    expect(() => new BinaryWriter().fstring('é'.repeat(32_768))).toThrow('FString of 65536 bytes exceeds 65,535');
    // The refused string left nothing behind: the next write starts where it would have.
    const w = new BinaryWriter().u8(1);
    expect(() => w.fstring('x'.repeat(65_536))).toThrow(RangeError);
    expect([...w.u8(2).finish()]).toEqual([1, 2]);
  });
});
