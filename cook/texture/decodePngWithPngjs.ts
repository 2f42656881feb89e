/**
 * Small-PNG fast path. sharp spends ~0.75 ms of CPU per image on pipeline setup whatever its
 * size, which dominates a cook of many tiny textures; pngjs (pure JS) decodes a 16x16 PNG in
 * microseconds but is ~2x slower than libpng on large images. So small PNGs go through pngjs,
 * normalized by the same rules as the sharp path, and everything pngjs is known or suspected to
 * read differently from libpng stays on sharp: {@link pngDecoderFor} decides from the chunks.
 * The PngSuite test decodes every image both ways and requires identical bytes.
 */
import { inflateSync } from 'node:zlib';
import { PNG } from 'pngjs';

export type PngDecoder = 'pngjs' | 'sharp';

/**
 * Largest width * height decoded with pngjs. Measured here (2 cores, noisy RGBA): pngjs takes
 * 0.07 ms at 16x16 against sharp's 0.53 ms, breaks even near 112x112 and is 2x slower at 256x256.
 */
export const PNGJS_MAX_PIXELS = 96 * 96;

/** Valid bit depths per colour type (PNG spec table 11.1). */
const DEPTHS: Record<number, readonly number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/**
 * Chunks both decoders read the same way (they do not change the pixels either reads). Anything
 * else goes to sharp: iCCP and cICP because libvips converts through them, unknown critical
 * chunks because libpng rejects them.
 */
const NEUTRAL_CHUNKS = new Set([
  'IDAT', 'PLTE', 'tRNS', 'gAMA', 'cHRM', 'sRGB', 'sBIT', 'bKGD', 'hIST', 'pHYs', 'sPLT', 'tIME',
  'tEXt', 'zTXt', 'iTXt', 'eXIf', 'oFFs', 'pCAL', 'sCAL', 'sTER',
]);

/** Adam7 passes: x start, y start, x step, y step. */
const ADAM7 = [[0, 0, 8, 8], [4, 0, 8, 8], [0, 4, 4, 8], [2, 0, 4, 4], [0, 2, 2, 4], [1, 0, 2, 2], [0, 1, 1, 2]];

function u32be(b: Uint8Array, o: number): number {
  return ((b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]) >>> 0;
}

/**
 * Which decoder reads this PNG. `bytes` must already have passed `readImageHeader` (a whole
 * chunk walk up to IEND). sharp is chosen for large images and for anything where pngjs and
 * libpng disagree: a grey or RGB tRNS colour key (pngjs zeroes the colour of keyed pixels,
 * libpng keeps it), iCCP (libvips may convert through the profile), and chunk layouts libpng
 * rejects or reads differently (a PLTE or tRNS that is repeated, misplaced or out of range,
 * split IDAT runs, invalid IHDR fields), where pngjs would use the last or late chunk.
 */
export function pngDecoderFor(bytes: Uint8Array): PngDecoder {
  const width = u32be(bytes, 16);
  const height = u32be(bytes, 20);
  const depth = bytes[24];
  const colorType = bytes[25];
  if (width * height > PNGJS_MAX_PIXELS) return 'sharp';
  if (!DEPTHS[colorType]?.includes(depth) || bytes[26] !== 0 || bytes[27] !== 0 || bytes[28] > 1) return 'sharp';
  let paletteEntries = 0;
  let sawPlte = false;
  let sawTrns = false;
  let idat: 'before' | 'in' | 'after' = 'before';
  for (let offset = 33; offset + 8 <= bytes.length; ) {
    const length = u32be(bytes, offset);
    const name = String.fromCharCode(bytes[offset + 4], bytes[offset + 5], bytes[offset + 6], bytes[offset + 7]);
    if (name === 'IEND') break;
    if (name === 'IDAT') {
      if (idat === 'after') return 'sharp';
      idat = 'in';
    } else {
      if (idat === 'in') idat = 'after';
      if (!NEUTRAL_CHUNKS.has(name)) return 'sharp';
      if (name === 'PLTE') {
        if (sawPlte || sawTrns || idat !== 'before' || colorType === 0 || colorType === 4) return 'sharp';
        if (length === 0 || length % 3 !== 0 || length / 3 > Math.min(256, colorType === 3 ? 1 << depth : 256)) return 'sharp';
        sawPlte = true;
        paletteEntries = length / 3;
      }
      if (name === 'tRNS') {
        if (colorType !== 3 || sawTrns || idat !== 'before' || length === 0 || length > paletteEntries) return 'sharp';
        sawTrns = true;
      }
    }
    offset += 12 + length;
  }
  if (colorType === 3 && !sawPlte) return 'sharp';
  return 'pngjs';
}

/**
 * Decode a PNG with pngjs and normalize to RGBA8 by the pipeline's rules: 16-bit keeps the high
 * byte, low-depth grey scales by 255 / (2^depth - 1), grey expands to RGB, missing alpha is 255,
 * palette and tRNS become RGBA. Throws pngjs's own Error (CRC, zlib, bad palette index...) for a
 * file it cannot read; the caller turns that into IMAGE_INVALID.
 */
export function decodePngWithPngjs(bytes: Uint8Array): { width: number; height: number; data: Uint8Array } {
  checkImageData(bytes);
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const png = PNG.sync.read(buf, { skipRescale: true }) as PNG & { depth: number; colorType: number };
  const { width, height, depth, colorType } = png;
  // 16-bit samples arrive as a Uint16Array, everything else as a Buffer of 8-bit values.
  const src = png.data as unknown as Uint8Array | Uint16Array;
  if (depth === 16) {
    const out = new Uint8Array(src.length);
    for (let i = 0; i < src.length; i++) out[i] = src[i] >> 8;
    return { width, height, data: out };
  }
  if (depth < 8 && colorType !== 3) {
    const scale = 255 / ((1 << depth) - 1); // 255, 85 or 17: exact integers
    const out = new Uint8Array(src.length);
    for (let i = 0; i < src.length; i++) out[i] = src[i] * scale;
    return { width, height, data: out };
  }
  return { width, height, data: new Uint8Array(src.buffer, src.byteOffset, src.byteLength) };
}

/**
 * pngjs stops inflating once it has the pixels it needs, so it accepts a zlib stream with a bad
 * Adler-32, one cut before its end, or one that is short of data, all of which libpng rejects.
 * Inflate the IDAT data strictly (node's zlib checks both) and require exactly the filtered
 * scanline bytes the header implies.
 */
function checkImageData(b: Uint8Array): void {
  const parts: Uint8Array[] = [];
  for (let offset = 8; offset + 8 <= b.length; ) {
    const length = u32be(b, offset);
    const name = String.fromCharCode(b[offset + 4], b[offset + 5], b[offset + 6], b[offset + 7]);
    if (name === 'IEND') break;
    if (name === 'IDAT') parts.push(b.subarray(offset + 8, offset + 8 + length));
    offset += 12 + length;
  }
  const width = u32be(b, 16);
  const height = u32be(b, 20);
  const bitsPerPixel = b[24] * (CHANNELS[b[25]] ?? 0);
  const scanlines = (w: number, h: number) => (w === 0 || h === 0 ? 0 : h * (1 + Math.ceil((w * bitsPerPixel) / 8)));
  let expected = 0;
  if (b[28] === 1) {
    for (const [x0, y0, dx, dy] of ADAM7) expected += scanlines(Math.ceil((width - x0) / dx), Math.ceil((height - y0) / dy));
  } else {
    expected = scanlines(width, height);
  }
  const inflated = inflateSync(Buffer.concat(parts));
  if (inflated.length !== expected) {
    throw new Error(`image data inflates to ${inflated.length} bytes; the header implies ${expected}`);
  }
}
