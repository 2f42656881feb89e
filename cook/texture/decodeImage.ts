/**
 * Source image → RGBA8. Every texture goes through this one normalization so the mip generator
 * and the encoders see a single pixel layout whatever the artist saved.
 *
 * Decoders: sharp (libvips + libpng / mozjpeg, prebuilt in the npm package) for PNG and JPEG,
 * @lunapaint/tga-codec for TGA, which libvips does not read. Small PNGs that pngjs reads exactly
 * as libpng does go through pngjs instead (see decodePngWithPngjs.ts): sharp's fixed per-image
 * cost is most of the time of a tiny texture. Any pngjs failure is retried with sharp, so errors
 * and their messages are libpng's either way.
 *
 * Normalization rules (what the tests assert against the PngSuite reference pixels):
 * - 16-bit channels keep their high byte (v >> 8), which is what libvips does; round(v / 257)
 *   would differ by at most 1 on some values.
 * - Grey expands to R = G = B; a missing alpha channel becomes 255.
 * - Palette images are expanded; tRNS (palette, grey or RGB key colour) becomes alpha.
 * - gAMA, cHRM and EXIF orientation are ignored: a texture's bytes are the stored bytes, top row
 *   first, as the engine samples them.
 */
import type sharpType from 'sharp';
import { errors, isLuminaError } from '../../src/errors.js';
import { decodePngWithPngjs, pngDecoderFor } from './decodePngWithPngjs.js';
import type { PngDecoder } from './decodePngWithPngjs.js';
import { MAX_TEXTURE_DIMENSION, readImageHeader } from './imageHeader.js';
import type { ImageSource } from './imageHeader.js';

export type { ImageSource } from './imageHeader.js';
export type { PngDecoder } from './decodePngWithPngjs.js';

export interface DecodeImageOptions {
  /** Largest width or height accepted (config `textures.maxSize`); default {@link MAX_TEXTURE_DIMENSION}. */
  maxSize?: number;
  /** @internal Tests force one PNG decoder (no fallback) to compare the two paths. */
  pngDecoder?: PngDecoder;
}

export interface DecodedImage {
  width: number;
  height: number;
  /** RGBA8, top row first, exactly width * height * 4 bytes. */
  data: Uint8Array;
  source: ImageSource;
}

/**
 * Decode a PNG, JPEG or TGA file held in memory into RGBA8.
 * `file` names the asset in every error. Throws IMAGE_INVALID for an unknown format, a size of
 * zero, and a corrupt or truncated image; IMAGE_TOO_LARGE above `options.maxSize` on a side
 * (checked from the header before any pixel is decoded); TEXTURE_INVALID if a decoder returns
 * anything but width * height * 4 bytes. `options.pngDecoder` (tests only) forces one PNG
 * decoder with no fallback.
 */
export async function decodeImage(bytes: Uint8Array, file: string, options: DecodeImageOptions = {}): Promise<DecodedImage> {
  const header = readImageHeader(bytes, file, options.maxSize);
  const maxPixels = header.width * header.height;
  let decoded: { width: number; height: number; data: Uint8Array };
  try {
    if (header.source === 'tga') decoded = await decodeTgaRgba(bytes);
    else if (header.source === 'jpeg') decoded = await decodeWithSharp(bytes, maxPixels);
    else decoded = await decodePng(bytes, options.pngDecoder, maxPixels);
  } catch (e) {
    if (isLuminaError(e)) throw e;
    throw errors.imageInvalid(file, `${header.source.toUpperCase()} is corrupt: ${firstLine(e)}`, e);
  }
  checkRgba8(decoded.data, header.width, header.height, file);
  if (decoded.width !== header.width || decoded.height !== header.height) {
    throw errors.textureInvalid(
      file,
      `decoder returned ${decoded.width}x${decoded.height} pixels but the ${header.source.toUpperCase()} header says ${header.width}x${header.height}`,
    );
  }
  return { width: header.width, height: header.height, data: decoded.data, source: header.source };
}

/**
 * Fail loudly when an RGBA8 buffer is not exactly width * height * 4 bytes: compressing a
 * short or long buffer would produce a texture that reads past its data or shows garbage.
 */
export function checkRgba8(data: Uint8Array, width: number, height: number, file: string): void {
  const expected = width * height * 4;
  if (data.byteLength !== expected) {
    throw errors.textureInvalid(file, `RGBA8 data holds ${data.byteLength} bytes; ${width}x${height} needs ${expected}`);
  }
}

async function decodePng(bytes: Uint8Array, forced: PngDecoder | undefined, maxPixels: number): Promise<{ width: number; height: number; data: Uint8Array }> {
  if (forced === 'pngjs') return decodePngWithPngjs(bytes);
  if (forced === 'sharp' || pngDecoderFor(bytes) === 'sharp') return decodeWithSharp(bytes, maxPixels);
  try {
    return decodePngWithPngjs(bytes);
  } catch {
    // pngjs is stricter in places (CRC of ancillary chunks, palette indices): let libpng judge.
    return decodeWithSharp(bytes, maxPixels);
  }
}

/**
 * sharp, loaded on first use: loading it (libvips and its dependencies) costs ~0.1 s of CPU in
 * every process and cook worker thread, and a cook of small PNGs never needs it.
 */
let sharpLoaded: Promise<typeof sharpType> | undefined;
function loadSharp(): Promise<typeof sharpType> {
  sharpLoaded ??= import('sharp').then((m) => m.default);
  return sharpLoaded;
}

async function decodeWithSharp(bytes: Uint8Array, maxPixels: number): Promise<{ width: number; height: number; data: Uint8Array }> {
  const sharp = await loadSharp();
  // failOn 'error' (not 'warning') so benign libpng warnings such as a known-incorrect sRGB
  // iCCP profile do not reject real-world files; truncation is caught by the header walk.
  // limitInputPixels: libvips must not be talked into more than the header we checked said.
  const { data, info } = await sharp(bytes, {
    failOn: 'error',
    limitInputPixels: maxPixels,
  })
    .toColourspace('srgb')
    .ensureAlpha(1)
    .raw({ depth: 'uchar' })
    .toBuffer({ resolveWithObject: true });
  if (info.channels !== 4) throw new Error(`decoder produced ${info.channels} channels instead of 4`);
  return { width: info.width, height: info.height, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
}

async function decodeTgaRgba(bytes: Uint8Array): Promise<{ width: number; height: number; data: Uint8Array }> {
  // Some writers declare 0 attribute bits yet store 32-bit pixels with alpha 0; the codec's
  // ambiguous-alpha detection makes such an all-transparent image opaque instead.
  // The codec is loaded on the first TGA (~10 ms of CPU to load, in every cook worker that imports this file).
  const { decodeTga } = await import('@lunapaint/tga-codec');
  const { image } = await decodeTga(bytes, { detectAmbiguousAlphaChannel: true });
  return { width: image.width, height: image.height, data: image.data };
}

function firstLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.split('\n')[0].replace(/:\s*$/, '').trim() || 'decoder failed';
}
