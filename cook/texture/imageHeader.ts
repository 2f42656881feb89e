/**
 * Format sniffing and header-only size checks, run before any pixel is decoded so that a
 * hostile or broken `SourceData` (a 60000x60000 PNG, a truncated file) fails fast with a typed
 * error instead of allocating gigabytes or surfacing a decoder stack trace.
 */
import { errors } from '../../src/errors.js';

export type ImageSource = 'png' | 'jpeg' | 'tga';

/** Largest width or height a texture source may ever have (GPU limits stop at 16K on desktop); config `textures.maxSize` may lower it. */
export const MAX_TEXTURE_DIMENSION = 16384;

export interface ImageHeader {
  source: ImageSource;
  width: number;
  height: number;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * Identify the format of `bytes` and read its pixel size. PNG and JPEG are found by magic; TGA
 * has none, so it is accepted only when its 18-byte header is self-consistent.
 * Throws IMAGE_INVALID naming `file` for an unknown format, a truncated header or a zero size,
 * and IMAGE_TOO_LARGE for a side above `maxSize` (default and most {@link MAX_TEXTURE_DIMENSION}).
 */
export function readImageHeader(bytes: Uint8Array, file: string, maxSize = MAX_TEXTURE_DIMENSION): ImageHeader {
  let header: ImageHeader;
  if (bytes.length >= 8 && PNG_SIGNATURE.every((b, i) => bytes[i] === b)) header = readPngHeader(bytes, file);
  else if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) header = readJpegHeader(bytes, file);
  else {
    const tga = readTgaHeader(bytes);
    if (typeof tga === 'string') {
      throw errors.imageInvalid(file, bytes.length === 0 ? 'SourceData is empty' : 'not a PNG, JPEG or TGA image');
    }
    header = tga;
  }
  checkSize(header, file, Math.min(maxSize, MAX_TEXTURE_DIMENSION));
  return header;
}

function checkSize({ source, width, height }: ImageHeader, file: string, maxSize: number): void {
  const kind = source.toUpperCase();
  if (width === 0 || height === 0) throw errors.imageInvalid(file, `${kind} is ${width}x${height} pixels; both sides must be at least 1`);
  if (width > maxSize || height > maxSize) {
    throw errors.imageTooLarge(file, `${kind} is ${width}x${height} pixels; the limit is ${maxSize} on a side`, 'textures.maxSize');
  }
}

function u32be(b: Uint8Array, o: number): number {
  return ((b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]) >>> 0;
}

function u16be(b: Uint8Array, o: number): number {
  return (b[o] << 8) | b[o + 1];
}

function u16le(b: Uint8Array, o: number): number {
  return b[o] | (b[o + 1] << 8);
}

/**
 * IHDR gives the size; the chunk walk (lengths only, no CRC) catches truncation that libpng
 * tolerates, e.g. a file cut inside its last chunk still decodes there but is not a whole PNG.
 */
function readPngHeader(b: Uint8Array, file: string): ImageHeader {
  const type = (o: number) => String.fromCharCode(b[o], b[o + 1], b[o + 2], b[o + 3]);
  if (b.length < 33) throw errors.imageInvalid(file, `PNG is truncated: ${b.length} bytes is shorter than its IHDR chunk`);
  if (type(12) !== 'IHDR' || u32be(b, 8) !== 13) throw errors.imageInvalid(file, 'PNG is corrupt: the first chunk is not a 13-byte IHDR');
  const width = u32be(b, 16);
  const height = u32be(b, 20);
  let offset = 8;
  for (;;) {
    if (offset + 12 > b.length) {
      throw errors.imageInvalid(file, `PNG is truncated: no IEND chunk before the end of the file at offset ${b.length}`);
    }
    const length = u32be(b, offset);
    const name = type(offset + 4);
    const end = offset + 12 + length;
    if (end > b.length) {
      throw errors.imageInvalid(file, `PNG is truncated: chunk ${JSON.stringify(name)} at offset ${offset} needs ${end - offset} bytes but the file ends at ${b.length}`);
    }
    if (name === 'IEND') break;
    offset = end;
  }
  return { source: 'png', width, height };
}

/** Walks JPEG marker segments up to the first SOFn (baseline, progressive, lossless...). */
function readJpegHeader(b: Uint8Array, file: string): ImageHeader {
  let o = 2;
  while (o < b.length) {
    if (b[o] !== 0xff) throw errors.imageInvalid(file, `JPEG is corrupt: expected a marker at offset ${o}`);
    while (o < b.length && b[o] === 0xff) o++; // fill bytes
    if (o >= b.length) break;
    const marker = b[o++];
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue; // no length field
    if (marker === 0xd9 || marker === 0xda) throw errors.imageInvalid(file, 'JPEG is corrupt: no frame header (SOF) before the scan data');
    if (o + 2 > b.length) break;
    const length = u16be(b, o);
    if (length < 2 || o + length > b.length) break;
    const isSof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isSof) {
      if (length < 8) throw errors.imageInvalid(file, `JPEG is corrupt: frame header at offset ${o - 2} is too short`);
      return { source: 'jpeg', height: u16be(b, o + 3), width: u16be(b, o + 5) };
    }
    o += length;
  }
  throw errors.imageInvalid(file, `JPEG is truncated: the file ends at ${b.length} before its frame header`);
}

const TGA_TYPES = new Set([1, 2, 3, 9, 10, 11]);

/**
 * TGA has no signature, so every header field must hold a value the spec allows and the file
 * must be long enough for its ID and colour map. Returns a reason string when it is not a TGA.
 */
function readTgaHeader(b: Uint8Array): ImageHeader | string {
  if (b.length < 18) return 'too short';
  const idLength = b[0];
  const colorMapType = b[1];
  const imageType = b[2];
  const mapLength = u16le(b, 5);
  const mapDepth = b[7];
  const width = u16le(b, 12);
  const height = u16le(b, 14);
  const depth = b[16];
  const descriptor = b[17];
  if (colorMapType > 1 || !TGA_TYPES.has(imageType)) return 'image type';
  if ((descriptor & 0xc0) !== 0) return 'descriptor';
  const base = imageType & 7;
  if (base === 1) {
    if (colorMapType !== 1 || (depth !== 8 && depth !== 16) || ![15, 16, 24, 32].includes(mapDepth)) return 'colour map';
  } else if (base === 2) {
    if (![15, 16, 24, 32].includes(depth)) return 'depth';
  } else if (depth !== 8 && depth !== 16) return 'depth';
  const mapBytes = colorMapType === 1 ? mapLength * Math.ceil(mapDepth / 8) : 0;
  if (18 + idLength + mapBytes > b.length) return 'truncated';
  return { source: 'tga', width, height };
}
