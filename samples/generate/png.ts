/**
 * A tiny PNG encoder (8-bit grey, RGB, palette and RGBA), enough to give sample textures real
 * source files. node:zlib does the DEFLATE; chunks carry their CRC32 as the PNG spec requires.
 * Output is a pure function of the input: no timestamps, no text chunks.
 */
import { deflateSync } from 'node:zlib';

export type PngColor = 'grey' | 'rgb' | 'palette' | 'rgba';

/** Row filter applied to every scanline (PNG filter types 0, 1, 2 and 4). */
export type PngFilter = 'none' | 'sub' | 'up' | 'paeth';

export interface PngImage {
  width: number;
  height: number;
  color: PngColor;
  /** width * height * channels bytes, rows top to bottom; for 'palette' one index per pixel. */
  data: Uint8Array;
  /** For 'palette': RGB triples (at most 256) and optional alpha per entry. */
  palette?: Uint8Array;
  paletteAlpha?: Uint8Array;
  filter?: PngFilter;
}

const SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);
const CHANNELS: Record<PngColor, number> = { grey: 1, rgb: 3, palette: 1, rgba: 4 };
const COLOR_TYPE: Record<PngColor, number> = { grey: 0, rgb: 2, palette: 3, rgba: 6 };
const FILTER_TYPE: Record<PngFilter, number> = { none: 0, sub: 1, up: 2, paeth: 4 };

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (ISO 3309, the one PNG and zlib use). */
export function crc32(bytes: Uint8Array, crc = 0): number {
  let c = ~crc >>> 0;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

/** The PNG channel count for a colour mode. */
export function pngChannels(color: PngColor): number {
  return CHANNELS[color];
}

/** Encode an image as a PNG file. Throws RangeError on inconsistent input (a programming error). */
export function encodePng(img: PngImage): Uint8Array {
  const { width, height, color } = img;
  const channels = CHANNELS[color];
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`bad PNG size ${width}x${height}`);
  }
  if (img.data.length !== width * height * channels) {
    throw new RangeError(`PNG data is ${img.data.length} bytes, ${width}x${height} ${color} needs ${width * height * channels}`);
  }
  const chunks: Uint8Array[] = [SIGNATURE];

  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = COLOR_TYPE[color];
  ihdr[10] = 0; // compression: deflate
  ihdr[11] = 0; // filter method 0
  ihdr[12] = 0; // no interlace
  chunks.push(pngChunk('IHDR', ihdr));

  if (color === 'palette') {
    const pal = img.palette;
    if (!pal || pal.length % 3 !== 0 || pal.length === 0 || pal.length > 768) throw new RangeError('palette needs 1..256 RGB triples');
    const entries = pal.length / 3;
    for (const i of img.data) if (i >= entries) throw new RangeError(`palette index ${i} >= ${entries} entries`);
    chunks.push(pngChunk('PLTE', pal));
    if (img.paletteAlpha) {
      if (img.paletteAlpha.length > entries) throw new RangeError('tRNS longer than the palette');
      chunks.push(pngChunk('tRNS', img.paletteAlpha));
    }
  }

  chunks.push(pngChunk('IDAT', deflateSync(filterRows(img.data, width, height, channels, img.filter ?? 'sub'), { level: 9 })));
  chunks.push(pngChunk('IEND', new Uint8Array(0)));
  return Buffer.concat(chunks);
}

/** One PNG chunk: length, type, data, CRC-32 of type + data. */
export function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  out.set(data, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/** Prefix each scanline with its filter byte and filter it; bpp is whole bytes at bit depth 8. */
function filterRows(data: Uint8Array, width: number, height: number, bpp: number, filter: PngFilter): Uint8Array {
  const stride = width * bpp;
  const out = new Uint8Array(height * (stride + 1));
  const type = FILTER_TYPE[filter];
  for (let y = 0; y < height; y++) {
    const row = y * stride;
    const prev = row - stride; // < 0 on the first row: "above" reads as zero
    const o = y * (stride + 1);
    out[o] = type;
    for (let x = 0; x < stride; x++) {
      const cur = data[row + x];
      const a = x >= bpp ? data[row + x - bpp] : 0;
      const b = y > 0 ? data[prev + x] : 0;
      const c = x >= bpp && y > 0 ? data[prev + x - bpp] : 0;
      let pred = 0;
      if (type === 1) pred = a;
      else if (type === 2) pred = b;
      else if (type === 4) pred = paeth(a, b, c);
      out[o + 1 + x] = (cur - pred) & 0xff;
    }
  }
  return out;
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}
