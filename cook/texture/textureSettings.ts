/**
 * Texture settings as the asset stores them, and the mapping from the `Compression` enum label
 * to a cooked format. The mapping is the one place that decides quality versus size:
 *
 * | Compression label                        | cooked Format | why                                        |
 * |------------------------------------------|---------------|--------------------------------------------|
 * | ETextureCompression::Default             | KTX2_ETC1S    | smallest; fine for albedo / photos         |
 * | ETextureCompression::Grayscale           | KTX2_ETC1S    | one channel of detail, ETC1S handles it    |
 * | ETextureCompression::Normalmap           | KTX2_UASTC    | ETC1S blocks wreck normals; -normal_map    |
 * | ETextureCompression::Masks               | KTX2_UASTC    | packed channels must not bleed, linear     |
 * | ETextureCompression::UserInterface       | RGBA8         | UI art is viewed 1:1: no block artefacts   |
 * | ETextureCompression::Uncompressed        | RGBA8         | explicit request                           |
 *
 * Normalmap and Masks are always encoded in linear space (their channels are data, not colour),
 * whatever `SRGB` says. Any other label is an error naming the asset.
 */
import { errors } from '../../src/errors.js';

export interface TextureSettings {
  /** The colour channels are sRGB-encoded (`SRGB` BoolProperty). */
  srgb: boolean;
  /** Build the full mip chain (`GenerateMips` BoolProperty). */
  generateMips: boolean;
  /** The `Compression` EnumProperty label, e.g. 'ETextureCompression::Default'. */
  compression: string;
}

export type TextureFormat = 'KTX2_ETC1S' | 'KTX2_UASTC' | 'RGBA8';

export interface TextureEncoding {
  format: TextureFormat;
  /** Whether colour is sRGB for filtering and for the KTX2 transfer function. */
  srgb: boolean;
  /** Pass basisu's normal-map tuning. */
  normalMap: boolean;
}

const MAPPING: Record<string, { format: TextureFormat; linear?: boolean; normalMap?: boolean }> = {
  Default: { format: 'KTX2_ETC1S' },
  Grayscale: { format: 'KTX2_ETC1S' },
  Masks: { format: 'KTX2_UASTC', linear: true },
  Normalmap: { format: 'KTX2_UASTC', linear: true, normalMap: true },
  Uncompressed: { format: 'RGBA8' },
  UserInterface: { format: 'RGBA8' },
};

/** The labels {@link resolveTextureEncoding} accepts, for error hints and docs. */
export const COMPRESSION_LABELS = Object.keys(MAPPING).map((k) => `ETextureCompression::${k}`);

/**
 * Map stored settings to an encoding. Accepts the label with or without the
 * `ETextureCompression::` prefix. Throws TEXTURE_INVALID naming `file` for an unknown label.
 */
export function resolveTextureEncoding(settings: TextureSettings, file: string): TextureEncoding {
  const label = settings.compression.startsWith('ETextureCompression::')
    ? settings.compression.slice('ETextureCompression::'.length)
    : settings.compression;
  const entry = Object.hasOwn(MAPPING, label) ? MAPPING[label] : undefined;
  if (!entry) {
    throw errors.textureInvalid(
      file,
      `Compression "${settings.compression}" is not one of ${Object.keys(MAPPING).join(', ')} (ETextureCompression::...)`,
    );
  }
  return { format: entry.format, srgb: settings.srgb && !entry.linear, normalMap: entry.normalMap === true };
}
