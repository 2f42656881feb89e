/** Mip chains: sizes, exact box averages, sRGB averaged in linear light, odd sizes. */
import { describe, expect, it } from 'vitest';
import { generateMips, linearToSrgb8, mipCountFor, srgb8ToLinear } from '../../cook/texture/index.js';

function solid(width: number, height: number, rgba: number[]): Uint8Array {
  const out = new Uint8Array(width * height * 4);
  for (let i = 0; i < out.length; i += 4) out.set(rgba, i);
  return out;
}

/** 2x2 image from four RGBA pixels, row-major. */
function quad(...px: number[][]): Uint8Array {
  return new Uint8Array(px.flat());
}

describe('generateMips', () => {
  it('builds the full chain down to 1x1 for square, wide and odd sizes', () => {
    const sizes = (w: number, h: number) =>
      generateMips(solid(w, h, [1, 2, 3, 4]), w, h, { srgb: false }).map((l) => `${l.width}x${l.height}`);
    expect(sizes(8, 8)).toEqual(['8x8', '4x4', '2x2', '1x1']);
    expect(sizes(8, 2)).toEqual(['8x2', '4x1', '2x1', '1x1']);
    expect(sizes(5, 3)).toEqual(['5x3', '2x1', '1x1']);
    expect(sizes(1, 1)).toEqual(['1x1']);
    expect(mipCountFor(2048, 2048)).toBe(12);
    expect(mipCountFor(65, 33)).toBe(7);
    for (const [w, h] of [[8, 8], [8, 2], [5, 3], [65, 33]]) {
      const chain = generateMips(solid(w, h, [9, 9, 9, 9]), w, h, { srgb: true });
      expect(chain.length).toBe(mipCountFor(w, h));
      for (const l of chain) expect(l.data.byteLength).toBe(l.width * l.height * 4);
    }
  });

  it('keeps level 0 as given and a constant image constant at every level', () => {
    const base = solid(6, 4, [200, 100, 50, 128]);
    const chain = generateMips(base, 6, 4, { srgb: true });
    expect(chain[0].data).toBe(base);
    for (const l of chain) for (let i = 0; i < l.data.length; i += 4) expect(Array.from(l.data.subarray(i, i + 4))).toEqual([200, 100, 50, 128]);
  });

  it('averages linear textures exactly: (a + b + c + d) / 4, rounded half up', () => {
    const [, m] = generateMips(quad([0, 10, 255, 0], [255, 11, 0, 100], [0, 12, 255, 200], [255, 12, 1, 255]), 2, 2, { srgb: false });
    // R 127.5 → 128, G 11.25 → 11, B 127.75 → 128, A 138.75 → 139
    expect(Array.from(m.data)).toEqual([128, 11, 128, 139]);
  });

  it('averages sRGB colour in linear light, alpha as stored', () => {
    const px = quad([0, 0, 0, 0], [255, 255, 255, 255], [0, 0, 0, 0], [255, 255, 255, 255]);
    const [, srgb] = generateMips(px, 2, 2, { srgb: true });
    const [, linear] = generateMips(px, 2, 2, { srgb: false });
    // Half of white in linear light is sRGB code 188, not the naive 128.
    expect(Array.from(srgb.data)).toEqual([188, 188, 188, 128]);
    expect(Array.from(linear.data)).toEqual([128, 128, 128, 128]);
  });

  it('weights odd sides by covered area instead of dropping the last column', () => {
    const row = new Uint8Array([0, 0, 0, 0, 90, 90, 90, 90, 180, 180, 180, 180]);
    const [, one] = generateMips(row, 3, 1, { srgb: false });
    expect(Array.from(one.data)).toEqual([90, 90, 90, 90]);
    // 5 → 2: weights 1, 1, 0.5 | 0.5, 1, 1 (each out of 2.5).
    const five = new Uint8Array([0, 50, 100, 150, 200].flatMap((v) => [v, v, v, 255]));
    const [, two] = generateMips(five, 5, 1, { srgb: false });
    expect(Array.from(two.data)).toEqual([40, 40, 40, 255, 160, 160, 160, 255]);
  });

  it('rejects a buffer of the wrong length', () => {
    expect(() => generateMips(new Uint8Array(15), 2, 2, { srgb: false })).toThrow(RangeError);
  });
});

describe('sRGB conversion', () => {
  it('round-trips every 8-bit code', () => {
    for (let c = 0; c < 256; c++) expect(linearToSrgb8(srgb8ToLinear(c))).toBe(c);
  });

  it('encodes with exact rounding', () => {
    const encode = (v: number) => (v <= 0.0031308 ? v * 12.92 : 1.055 * Math.pow(v, 1 / 2.4) - 0.055);
    for (let i = 0; i <= 1000; i++) {
      const v = i / 1000;
      expect(linearToSrgb8(v)).toBe(Math.round(encode(v) * 255));
    }
    expect(linearToSrgb8(-1)).toBe(0);
    expect(linearToSrgb8(2)).toBe(255);
  });
});
