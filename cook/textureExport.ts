/**
 * The cook's side of textures: for an export of class `/Script/Engine.CTexture`, read the source
 * image and settings from its properties, run the texture pipeline (cook/texture), and put
 * Width, Height, MipCount, Format and PlatformData where SourceData was. SRGB, Compression and
 * GenerateMips stay, so the runtime still knows how the texture was meant to be sampled.
 */
import { cookTexture, type CookTextureOptions, type TextureSettings } from './texture/index.js';
import { errors } from '../src/errors.js';
import type { LoadedPackage, Property } from '../src/format/packageTypes.js';

export const TEXTURE_CLASS = '/Script/Engine.CTexture';

/** Settings an asset leaves out: sRGB colour, no mips, the default compression. */
const DEFAULT_SETTINGS: TextureSettings = { srgb: true, generateMips: false, compression: 'ETextureCompression::Default' };

export interface TextureCookOptions {
  /** 'rgba8' never runs the block encoder (fast, used by tests and quick iteration). */
  encoder: 'basis' | 'rgba8';
  /** Reported with the asset when a KTX2 format fell back to RGBA8. */
  onFallback?: (file: string, reason: string) => void;
}

/** Read the texture settings from an export's top-level properties. */
export function readTextureSettings(props: readonly Property[]): TextureSettings {
  const s = { ...DEFAULT_SETTINGS };
  for (const p of props) {
    if (p.name === 'SRGB' && p.type === 'BoolProperty') s.srgb = p.value;
    else if (p.name === 'GenerateMips' && p.type === 'BoolProperty') s.generateMips = p.value;
    else if (p.name === 'Compression' && (p.type === 'EnumProperty' || p.type === 'ByteProperty') && typeof p.value === 'string') s.compression = p.value;
  }
  return s;
}

/**
 * A StripOptions.transformExport that cooks CTexture exports and leaves everything else alone.
 * A texture without SourceData is one that was already cooked (or is empty): left as it is.
 * Throws IMAGE_INVALID / TEXTURE_INVALID / COOK_FAILED naming the package file.
 */
export function textureTransform(opts: TextureCookOptions) {
  const pipeline: CookTextureOptions = opts.encoder === 'rgba8' ? { basisu: null } : {};
  return async (index: number, props: Property[], pkg: LoadedPackage): Promise<Property[] | undefined> => {
    if (pkg.exports[index].className !== TEXTURE_CLASS) return undefined;
    const at = props.findIndex((p) => p.name === 'SourceData');
    if (at < 0) return undefined;
    const source = props[at];
    if (source.type !== 'ArrayProperty' || source.innerType !== 'ByteProperty' || !(source.value instanceof Uint8Array)) {
      throw errors.textureInvalid(pkg.file, `SourceData of export "${pkg.exports[index].objectName}" is ${source.type}, not an ArrayProperty of ByteProperty`);
    }
    const settings = readTextureSettings(props);
    const cooked = await cookTexture(source.value, pkg.file, settings, pipeline);
    // With the 'rgba8' encoder the fallback is what was asked for, not news.
    if (cooked.fallbackReason !== undefined && opts.encoder === 'basis') opts.onFallback?.(pkg.file, cooked.fallbackReason);
    const base = { arrayIndex: 0 } as const;
    const replacement: Property[] = [
      { ...base, name: 'Width', type: 'IntProperty', value: cooked.width },
      { ...base, name: 'Height', type: 'IntProperty', value: cooked.height },
      { ...base, name: 'MipCount', type: 'IntProperty', value: cooked.mipCount },
      { ...base, name: 'Format', type: 'NameProperty', value: cooked.format },
      { ...base, name: 'PlatformData', type: 'ArrayProperty', innerType: 'ByteProperty', value: cooked.platformData },
    ];
    // SourceData's slot takes the cooked fields; stale cooked fields elsewhere in the source are dropped.
    const replacedNames = new Set(replacement.map((p) => p.name));
    const out: Property[] = [];
    for (const p of props) {
      if (p === source) out.push(...replacement);
      else if (!replacedNames.has(p.name)) out.push(p);
    }
    return out;
  };
}
