/**
 * Small-PNG fast path. sharp spends ~0.75 ms of CPU per image on pipeline setup whatever its
 * size, which dominates a cook of many tiny textures; pngjs (pure JS) decodes a 16x16 PNG in
 * microseconds but is ~2x slower than libpng on large images. So small PNGs go through pngjs,
 * normalized by the same rules as the sharp path, and everything pngjs is known or suspected to
 * read differently from libpng stays on sharp: {@link pngDecoderFor} decides from the chunks.
 * The PngSuite test decodes every image both ways and requires identical bytes.
 */
import { createRequire } from 'node:module';
import zlib, { inflateSync } from 'node:zlib';

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
  if (u32be(bytes, 16) * u32be(bytes, 20) > PNGJS_MAX_PIXELS) return 'sharp';
  return pngIsPlain(bytes) ? 'pngjs' : 'sharp';
}

/**
 * True when the PNG's pixels are what any decoder reads from it (see {@link pngDecoderFor}, which
 * this is without the size limit): no colour profile, no grey or RGB colour key, chunks in their
 * places, valid IHDR fields. `bytes` must already have passed `readImageHeader`.
 */
export function pngIsPlain(bytes: Uint8Array): boolean {
  const depth = bytes[24];
  const colorType = bytes[25];
  if (!DEPTHS[colorType]?.includes(depth) || bytes[26] !== 0 || bytes[27] !== 0 || bytes[28] > 1) return false;
  let paletteEntries = 0;
  let sawPlte = false;
  let sawTrns = false;
  let idat: 'before' | 'in' | 'after' = 'before';
  for (let offset = 33; offset + 8 <= bytes.length; ) {
    const length = u32be(bytes, offset);
    const name = String.fromCharCode(bytes[offset + 4], bytes[offset + 5], bytes[offset + 6], bytes[offset + 7]);
    if (name === 'IEND') break;
    if (name === 'IDAT') {
      if (idat === 'after') return false;
      idat = 'in';
    } else {
      if (idat === 'in') idat = 'after';
      if (!NEUTRAL_CHUNKS.has(name)) return false;
      if (name === 'PLTE') {
        if (sawPlte || sawTrns || idat !== 'before' || colorType === 0 || colorType === 4) return false;
        if (length === 0 || length % 3 !== 0 || length / 3 > Math.min(256, colorType === 3 ? 1 << depth : 256)) return false;
        sawPlte = true;
        paletteEntries = length / 3;
      }
      if (name === 'tRNS') {
        if (colorType !== 3 || sawTrns || idat !== 'before' || length === 0 || length > paletteEntries) return false;
        sawTrns = true;
      }
    }
    offset += 12 + length;
  }
  if (colorType === 3 && !sawPlte) return false;
  return true;
}

/** The pieces of pngjs's synchronous reader (lib/parser-sync.js), to run them around one strict inflate. */
interface PngMeta {
  width: number;
  height: number;
  depth: number;
  interlace: boolean;
  colorType: number;
  bpp: number;
  palette?: number[][];
  transColor?: number[];
  alpha?: boolean;
}
interface PngjsParts {
  SyncReader: new (buffer: Buffer) => { read(length: number, cb: (data: Buffer) => void): void; process(): void };
  Parser: new (options: object, deps: Record<string, (...args: never[]) => void>) => { start(): void };
  FilterSync: { process(inflated: Buffer, meta: PngMeta): Buffer };
  bitmapper: { dataToBitMap(data: Buffer, meta: PngMeta): Uint8Array | Uint16Array };
  formatNormaliser: (bitmap: Uint8Array | Uint16Array, meta: PngMeta, skipRescale: boolean) => Uint8Array | Uint16Array;
}
let parts: PngjsParts | undefined;
function pngjsParts(): PngjsParts {
  if (parts) return parts;
  // pngjs 7.0.0 (pinned) has no "exports" map; these are the modules its PNG.sync.read is made of.
  const require = createRequire(import.meta.url);
  parts = {
    SyncReader: require('pngjs/lib/sync-reader.js'),
    Parser: require('pngjs/lib/parser.js'),
    FilterSync: require('pngjs/lib/filter-parse-sync.js'),
    bitmapper: require('pngjs/lib/bitmapper.js'),
    formatNormaliser: require('pngjs/lib/format-normaliser.js'),
  };
  return parts;
}

/**
 * pngjs's `PNG.sync.read(buffer, { skipRescale: true })` with one change: the image data is
 * inflated once, strictly. pngjs stops inflating once it has the pixels it needs, so it accepts a
 * zlib stream with a bad Adler-32, one cut before its end, or one that is short of data, all of
 * which libpng rejects; node's zlib checks both, and the result must be exactly the filtered
 * scanline bytes the header implies. (This used to be a second inflate before pngjs's own: a
 * fifth of a small texture's decode.)
 */
function readPng(buffer: Buffer): PngMeta & { data: Uint8Array | Uint16Array } {
  const { FilterSync, bitmapper, formatNormaliser } = pngjsParts();
  const { meta, inflated } = readPngData(buffer);
  const bitmap = bitmapper.dataToBitMap(FilterSync.process(inflated, meta), meta);
  return { ...meta, data: formatNormaliser(bitmap, meta, true) };
}

/** The chunks parsed and checked (CRCs, order, palette) and the image data inflated strictly, not unfiltered. */
function readPngData(buffer: Buffer): { meta: PngMeta; inflated: Buffer } {
  const { SyncReader, Parser } = pngjsParts();
  let err: unknown;
  let meta: PngMeta | undefined;
  const idat: Buffer[] = [];
  const reader = new SyncReader(buffer);
  const parser = new Parser(
    {},
    {
      read: reader.read.bind(reader),
      error: (e: unknown) => {
        err = e;
      },
      metadata: (m: PngMeta) => {
        meta = m;
      },
      gamma: () => {},
      palette: (p: number[][]) => {
        meta!.palette = p;
      },
      transColor: (c: number[]) => {
        meta!.transColor = c;
      },
      inflateData: (d: Buffer) => {
        idat.push(d);
      },
      simpleTransparency: () => {
        meta!.alpha = true;
      },
    },
  );
  parser.start();
  reader.process();
  if (err) throw err;
  if (!meta) throw new Error('no IHDR');
  const inflated = inflateSync(idat.length === 1 ? idat[0] : Buffer.concat(idat));
  const expected = filteredBytes(meta.width, meta.height, meta.depth * (CHANNELS[meta.colorType] ?? 0), meta.interlace);
  if (inflated.length === 0 || inflated.length !== expected) {
    throw new Error(`image data inflates to ${inflated.length} bytes; the header implies ${expected}`);
  }
  return { meta, inflated };
}

/**
 * Throws unless the PNG is well-formed to the last byte: every chunk's CRC, nothing after IEND,
 * the zlib stream (Adler-32, its end) inflating to exactly the scanlines the header implies, and a
 * valid filter type on every scanline; what {@link decodePngWithPngjs} checks, without
 * unfiltering. For non-interlaced PNGs that passed readImageHeader and {@link pngIsPlain} (which
 * check the chunk layout and IHDR's fields); others throw or are not checked for that. A PNG that
 * passes reads the same in any decoder; libpng tolerates some that do not (more image data than
 * the size needs), which basisu's own reader crashes on.
 *
 * Walks the chunks itself, with zlib's CRC-32, rather than through pngjs's parser: for a 16x16
 * texture that parser (a JS CRC, a callback and two Buffer slices per read) cost more than the
 * inflate, and this check runs for every PNG given to basisu, on the cores basisu needs. It fails
 * what pngjs's parser fails on such a PNG: a CRC, a gAMA shorter than its value, bytes after IEND.
 */
export function checkPngWellFormed(bytes: Uint8Array): void {
  if (bytes[28] !== 0) throw new Error('interlaced');
  wellFormedScanlines(bytes);
}

/**
 * The walk and inflate of {@link checkPngWellFormed} (which see), for a non-interlaced PNG: the
 * inflated scanlines, each row's filter type checked, and the PLTE and tRNS chunks' data.
 */
function wellFormedScanlines(bytes: Uint8Array): { inflated: Buffer; row: number; plte?: Uint8Array; trns?: Uint8Array } {
  const width = u32be(bytes, 16);
  const height = u32be(bytes, 20);
  const channels = CHANNELS[bytes[25]] ?? 0;
  const idat: Uint8Array[] = [];
  let plte: Uint8Array | undefined;
  let trns: Uint8Array | undefined;
  let offset = 8;
  for (;;) {
    if (offset + 12 > bytes.length) throw new Error('no IEND chunk');
    const length = u32be(bytes, offset);
    const end = offset + 12 + length;
    if (end > bytes.length) throw new Error(`chunk at offset ${offset} runs past the end`);
    const type = u32be(bytes, offset + 4);
    if (crc32(bytes.subarray(offset + 4, end - 4)) !== u32be(bytes, end - 4)) throw new Error(`CRC error in the chunk at offset ${offset}`);
    if (type === IDAT) idat.push(bytes.subarray(offset + 8, end - 4));
    else if (type === GAMA && length < 4) throw new Error('gAMA chunk is too short');
    else if (type === PLTE) plte = bytes.subarray(offset + 8, end - 4);
    else if (type === TRNS) trns = bytes.subarray(offset + 8, end - 4);
    offset = end;
    if (type === IEND) break;
  }
  if (offset !== bytes.length) throw new Error(`${bytes.length - offset} bytes after IEND`);
  const row = 1 + Math.ceil((width * bytes[24] * channels) / 8);
  const expected = row * height;
  // Into one buffer of the size the header implies (zlib's default is 16 KiB chunks: for a small
  // texture a fresh 16 KiB outside the heap each time, which brought on full GCs), and never more.
  let inflated: Buffer;
  try {
    inflated = inflateSync(idat.length === 1 ? idat[0] : Buffer.concat(idat), { chunkSize: Math.max(64, expected + 64), maxOutputLength: expected });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw new Error(`image data inflates to more than the ${expected} bytes the header implies`);
    throw e;
  }
  if (inflated.length === 0 || inflated.length !== expected) {
    throw new Error(`image data inflates to ${inflated.length} bytes; the header implies ${expected}`);
  }
  for (let o = 0; o < inflated.length; o += row) {
    if (inflated[o] > 4) throw new Error(`scanline ${o / row} has filter type ${inflated[o]}`);
  }
  return { inflated, row, plte, trns };
}

/**
 * The commonest small texture, decoded without pngjs: a plain ({@link pngIsPlain}),
 * non-interlaced, 8-bit PNG of any colour type. It must be well-formed to the last byte
 * ({@link checkPngWellFormed}: every CRC, a strict inflate to exactly the scanlines, valid filter
 * types), which is at least what pngjs requires of such a file, and every palette index must be in
 * the palette. Then one pass unfilters (PNG's five filters, as pngjs and libpng apply them) and one
 * expands to RGBA8 by the rules of {@link decodePngWithPngjs}: the same bytes as pngjs (the
 * PngSuite and mutated files are decoded both ways in the tests). Null for any other PNG or any
 * failure: pngjs then decodes it, and says what is wrong in its words.
 *
 * Why: pngjs's parser (a CRC in JavaScript, a callback and Buffer slices per read), its unfilter and
 * its two normalizing passes were ~0.15 ms of a cook worker's CPU per 16x16 texture.
 */
export function decodePlainPng8(bytes: Uint8Array): { width: number; height: number; data: Uint8Array } | null {
  if (bytes.length < 33 || u32be(bytes, 8) !== 13 || u32be(bytes, 12) !== IHDR) return null;
  if (bytes[24] !== 8 || bytes[28] !== 0 || !pngIsPlain(bytes)) return null;
  const width = u32be(bytes, 16);
  const height = u32be(bytes, 20);
  const colorType = bytes[25];
  const bpp = CHANNELS[colorType];
  let scan: ReturnType<typeof wellFormedScanlines>;
  try {
    scan = wellFormedScanlines(bytes);
  } catch {
    return null;
  }
  const { inflated, row, plte, trns } = scan;
  const stride = row - 1;
  // Unfiltered samples, packed: for RGBA already the output.
  const px = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const src = y * row + 1;
    const dst = y * stride;
    const up = dst - stride;
    switch (inflated[src - 1]) {
      case 0:
        px.set(inflated.subarray(src, src + stride), dst);
        break;
      case 1:
        for (let x = 0; x < stride; x++) px[dst + x] = (inflated[src + x] + (x >= bpp ? px[dst + x - bpp] : 0)) & 255;
        break;
      case 2:
        for (let x = 0; x < stride; x++) px[dst + x] = (inflated[src + x] + (y > 0 ? px[up + x] : 0)) & 255;
        break;
      case 3:
        for (let x = 0; x < stride; x++) {
          const left = x >= bpp ? px[dst + x - bpp] : 0;
          const above = y > 0 ? px[up + x] : 0;
          px[dst + x] = (inflated[src + x] + ((left + above) >> 1)) & 255;
        }
        break;
      default: // 4, Paeth (wellFormedScanlines allowed no other)
        for (let x = 0; x < stride; x++) {
          const left = x >= bpp ? px[dst + x - bpp] : 0;
          const above = y > 0 ? px[up + x] : 0;
          const upLeft = x >= bpp && y > 0 ? px[up + x - bpp] : 0;
          const p = left + above - upLeft;
          const pl = Math.abs(p - left);
          const pa = Math.abs(p - above);
          const pu = Math.abs(p - upLeft);
          px[dst + x] = (inflated[src + x] + (pl <= pa && pl <= pu ? left : pa <= pu ? above : upLeft)) & 255;
        }
        break;
    }
  }
  if (colorType === 6) return { width, height, data: px };
  const n = width * height;
  const out = new Uint8Array(n * 4);
  switch (colorType) {
    case 0: // grey
      for (let i = 0, o = 0; i < n; i++, o += 4) out[o] = out[o + 1] = out[o + 2] = px[i], out[o + 3] = 255;
      break;
    case 2: // RGB
      for (let i = 0, j = 0, o = 0; i < n; i++, j += 3, o += 4) (out[o] = px[j]), (out[o + 1] = px[j + 1]), (out[o + 2] = px[j + 2]), (out[o + 3] = 255);
      break;
    case 4: // grey + alpha
      for (let i = 0, j = 0, o = 0; i < n; i++, j += 2, o += 4) out[o] = out[o + 1] = out[o + 2] = px[j], out[o + 3] = px[j + 1];
      break;
    default: {
      // 3, palette (pngIsPlain: a PLTE before the data, a tRNS no longer than it)
      const entries = plte!.length / 3;
      for (let i = 0, o = 0; i < n; i++, o += 4) {
        const k = px[i];
        if (k >= entries) return null;
        out[o] = plte![3 * k];
        out[o + 1] = plte![3 * k + 1];
        out[o + 2] = plte![3 * k + 2];
        out[o + 3] = trns !== undefined && k < trns.length ? trns[k] : 255;
      }
    }
  }
  return { width, height, data: out };
}

const IHDR = 0x49484452;
const IDAT = 0x49444154;
const IEND = 0x49454e44;
const GAMA = 0x67414d41;
const PLTE = 0x504c5445;
const TRNS = 0x74524e53;

/** zlib's CRC-32 (native, from Node 20.15; looked up, not imported, so older Node 20 still loads this), else pngjs's table-driven one. */
const crc32: (data: Uint8Array) => number =
  (zlib as { crc32?: (data: Uint8Array) => number }).crc32 ??
  ((data) => ((createRequire(import.meta.url)('pngjs/lib/crc.js') as { crc32(b: Uint8Array): number }).crc32(data) >>> 0));

/** Filtered scanline bytes of a width x height image (each row: a filter byte and its packed samples). */
function filteredBytes(width: number, height: number, bitsPerPixel: number, interlace: boolean): number {
  const scanlines = (w: number, h: number) => (w === 0 || h === 0 ? 0 : h * (1 + Math.ceil((w * bitsPerPixel) / 8)));
  if (!interlace) return scanlines(width, height);
  let n = 0;
  for (const [x0, y0, dx, dy] of ADAM7) n += scanlines(Math.ceil((width - x0) / dx), Math.ceil((height - y0) / dy));
  return n;
}

/**
 * Decode a PNG with pngjs and normalize to RGBA8 by the pipeline's rules: 16-bit keeps the high
 * byte, low-depth grey scales by 255 / (2^depth - 1), grey expands to RGB, missing alpha is 255,
 * palette and tRNS become RGBA. Throws pngjs's own Error (CRC, zlib, bad palette index...) for a
 * file it cannot read; the caller turns that into IMAGE_INVALID. A plain 8-bit PNG is decoded by
 * {@link decodePlainPng8} instead, to the same bytes (`direct: false`, for tests: pngjs always).
 */
export function decodePngWithPngjs(bytes: Uint8Array, opts: { direct?: boolean } = {}): { width: number; height: number; data: Uint8Array } {
  const direct = opts.direct === false ? null : decodePlainPng8(bytes);
  if (direct) return direct;
  const png = readPng(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const { width, height, depth, colorType } = png;
  // 16-bit samples arrive as a Uint16Array, everything else as a Buffer of 8-bit values.
  const src = png.data;
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
