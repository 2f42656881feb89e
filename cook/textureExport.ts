/**
 * The cook's side of textures: for an export of class `/Script/Engine.CTexture`, read the source
 * image and settings from its properties, run the texture pipeline (cook/texture), and put
 * Width, Height, MipCount, Format and PlatformData where SourceData was. SRGB, Compression and
 * GenerateMips stay, so the runtime still knows how the texture was meant to be sampled.
 */
import { basisuIdentity, cookTexture, resolveBasisu, type CookTextureOptions, type TextureSettings } from './texture/index.js';
import { errors } from '../src/errors.js';
import type { TextureConfig } from '../config/index.js';
import type { LoadedPackage, Property } from '../src/format/packageTypes.js';
import { TEXTURE_CLASS } from './textureClass.js';


/** Settings an asset leaves out: sRGB colour, no mips, the default compression. */
const DEFAULT_SETTINGS: TextureSettings = { srgb: true, generateMips: false, compression: 'ETextureCompression::Default' };

/** The `textures.*` config (any key left out takes its default), and who hears of fallbacks. */
export interface TextureCookOptions extends Partial<Omit<TextureConfig, 'encoder'>> {
  /** 'rgba8' never runs the block encoder (fast, used by tests and quick iteration). */
  encoder: 'basis' | 'rgba8';
  /**
   * Called with the asset when a KTX2 format fell back to RGBA8 (basisu cannot run here). The
   * caller must not cache that output as the asset's cook: it is not what the settings ask for.
   */
  onFallback?: (file: string, reason: string) => void;
}

/** The texture pipeline's options for a `textures.*` config. */
export function cookTextureOptions(opts: Omit<TextureCookOptions, 'onFallback'>): CookTextureOptions {
  const out: CookTextureOptions = {
    basisu: opts.encoder === 'rgba8' ? null : (opts.encoderPath ?? undefined),
    etc1sQuality: opts.etc1sQuality,
    etc1sEffort: opts.etc1sEffort,
    uastcLevel: opts.uastcLevel,
    timeoutMs: opts.encoderTimeoutMs,
    maxSize: opts.maxSize,
    maxMemoryMiB: opts.maxMemoryMiB,
  };
  for (const k of Object.keys(out) as Array<keyof CookTextureOptions>) if (out[k] === undefined) delete out[k];
  return out;
}

/**
 * The texture encoder's part of the cook key (cook/cookKey.ts): for `basis`, which basisu build
 * (the shipped package version and the xxh64 of the executable's bytes, or why there is none) with
 * which quality and effort levels; for `rgba8`, nothing but the name (that path is ours, versioned
 * by the cook format). Needs `initHash()`.
 */
export function textureEncoderKey(t: Pick<TextureConfig, 'encoder'> & Partial<TextureConfig>): Record<string, unknown> {
  if (t.encoder !== 'basis') return { encoder: t.encoder };
  return {
    encoder: t.encoder,
    basisu: basisuIdentity(resolveBasisu(t.encoderPath)),
    etc1sQuality: t.etc1sQuality,
    etc1sEffort: t.etc1sEffort,
    uastcLevel: t.uastcLevel,
  };
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
 * Throws IMAGE_INVALID / IMAGE_TOO_LARGE / TEXTURE_INVALID / COOK_FAILED naming the package file.
 */
export function textureTransform(opts: TextureCookOptions) {
  const pipeline = cookTextureOptions(opts);
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
    // Literals, not `{ ...base, name, ... }`: a literal that starts with a spread and adds keys
    // gets a hidden class of its own per call in V8 11.3 (see parsePackage). Same keys, same order.
    const replacement: Property[] = [
      { arrayIndex: 0, name: 'Width', type: 'IntProperty', value: cooked.width },
      { arrayIndex: 0, name: 'Height', type: 'IntProperty', value: cooked.height },
      { arrayIndex: 0, name: 'MipCount', type: 'IntProperty', value: cooked.mipCount },
      { arrayIndex: 0, name: 'Format', type: 'NameProperty', value: cooked.format },
      { arrayIndex: 0, name: 'PlatformData', type: 'ArrayProperty', innerType: 'ByteProperty', value: cooked.platformData },
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
