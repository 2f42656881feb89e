/**
 * The whole texture normalization for one asset: `SourceData` bytes + settings → the fields a
 * cooked texture export carries in place of `SourceData` (Width, Height, MipCount, Format,
 * PlatformData). Pure over bytes: reading and writing the package is the caller's job.
 */
import { decodeImage } from './decodeImage.js';
import { encodeTexture } from './encodeTexture.js';
import type { EncodeOptions } from './encodeTexture.js';
import { resolveTextureEncoding } from './textureSettings.js';
import type { TextureFormat, TextureSettings } from './textureSettings.js';

export interface CookedTexture {
  width: number;
  height: number;
  mipCount: number;
  format: TextureFormat;
  platformData: Uint8Array;
  /** Set when a KTX2 format was asked for but no encoder ran, so RGBA8 was written. */
  fallbackReason?: string;
}

export type CookTextureOptions = Pick<EncodeOptions, 'basisu' | 'etc1sQuality' | 'uastcLevel'>;

/**
 * Decode, check, mip and compress one texture source.
 * Throws IMAGE_INVALID (bad or corrupt source), TEXTURE_INVALID (unknown Compression, wrong
 * RGBA8 length, bad encoder output) or COOK_FAILED (encoder crashed), each naming `file`.
 */
export async function cookTexture(
  sourceData: Uint8Array,
  file: string,
  settings: TextureSettings,
  options: CookTextureOptions = {},
): Promise<CookedTexture> {
  const encoding = resolveTextureEncoding(settings, file);
  const image = await decodeImage(sourceData, file);
  const encoded = await encodeTexture(image, { ...options, ...encoding, generateMips: settings.generateMips, file });
  const out: CookedTexture = {
    width: image.width,
    height: image.height,
    mipCount: encoded.mipCount,
    format: encoded.format,
    platformData: encoded.platformData,
  };
  if (encoded.fallbackReason !== undefined) out.fallbackReason = encoded.fallbackReason;
  return out;
}
