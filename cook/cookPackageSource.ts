/**
 * Cooking one package's source bytes in memory: parse, strip and renumber, cook its textures,
 * LCKD-encode. No file is read or written and no cache is touched, so the same function runs on
 * the main thread and in a cook worker (cook/pool), and the outcome is plain data that crosses a
 * thread boundary as it is (errors as LuminaLog, the LCKD bytes transferable). Same input, same
 * settings, same bytes, whichever thread cooks it.
 */
import { cookedRawXxh64, encodeCooked } from '../src/format/cookedPackage.js';
import { parsePackage } from '../src/format/packageReader.js';
import { errors, isLuminaError, type LuminaError, type LuminaLog } from '../src/errors.js';
import { plainBytes } from '../src/format/BinaryReader.js';
import { hashHex, xxh64 } from '../src/util/hash.js';
import type { TextureConfig } from '../config/index.js';
import type { ClassSchemas } from '../src/schemas/classSchemas.js';
import { materialsOfPackage, type PackageMaterials } from './shaders/materials.js';
import { cookPackageBytes } from './stripPackage.js';
import { TEXTURE_CLASS } from './textureClass.js';
import { textureTransform } from './textureExport.js';

/** The settings a package cook reads (the AssetCookContext's, minus the cache). */
export interface PackageCookSettings {
  editorOnlyClassPrefixes: readonly string[];
  compressionLevel: number;
  textures: TextureConfig;
  onCookFailure: 'fail' | 'verbatim';
  schemas: ClassSchemas;
  /**
   * Called before a texture export is cooked; a worker throws NeedsMainThread from it for basisu
   * textures, which batch across the whole cook on the main thread.
   */
  beforeTexture?: () => void;
}

/** What cooking one package's bytes gave, before anything is written. Plain data. */
export interface PackageCookOutcome {
  /** cooked: the stripped package; verbatim: the source in LCKD after a failure; failed: nothing ships. */
  status: 'cooked' | 'verbatim' | 'failed';
  /** xxh64 (hex) of the source bytes the cook read: the content part of the cook key. */
  contentHash: string;
  sourceSize: number;
  /** The LCKD container to write (cooked and verbatim). */
  lckd?: Uint8Array;
  /** Size and xxh64 (hex) of the raw cooked package (cooked). */
  rawSize: number;
  rawXxh64?: string;
  strippedExports: number;
  nulledRefs: number;
  /** The package holds a texture export (cooked). */
  texture: boolean;
  /** Its export classes, sorted (cooked). */
  classes?: string[];
  /** Non-fatal findings of the cook (PACKAGE_NAME_NONE). */
  warnings: LuminaLog[];
  /** Textures stored as RGBA8 because basisu could not run: the output must not be cached. */
  fallbacks: Array<{ file: string; reason: string }>;
  /**
   * The package's shader materials, from the same parse (when its package path was given), so the
   * shader cook does not read the file again; none when it could not be parsed.
   */
  materials?: PackageMaterials;
  /** Why it failed (failed), or why it shipped verbatim. */
  error?: LuminaLog;
}

/** Thrown through cookPackageSource (never a result): this package must be cooked on the main thread. */
export class NeedsMainThread extends Error {}

export function asCookError(e: unknown, file: string): LuminaError {
  if (isLuminaError(e)) return e;
  return errors.cookFailed(file, `cooking failed: ${(e as Error)?.message ?? String(e)}`, e);
}

/**
 * Cook one package's source bytes (see the module comment). The outcomes are built with
 * Object.assign onto a fresh object, not as `{ ...base, status, ... }`: V8 (11.3) gives a literal
 * that starts with a spread and then adds keys a hidden class of its own on every call (~0.5 us per
 * added key, and a new map's garbage per package). Same keys in the same order. Never throws for the package's own
 * content: a failure is `status: 'failed'` with the error, or `verbatim` under onCookFailure
 * "verbatim". Requires `initHash()`.
 */
export async function cookPackageSource(source: Uint8Array, file: string, s: PackageCookSettings, packagePath?: string): Promise<PackageCookOutcome> {
  // One kind of byte array for the parse and cook code (a read file is a Buffer, a kept source not): see plainBytes.
  source = plainBytes(source);
  const contentHash = hashHex(xxh64(source));
  const base: Omit<PackageCookOutcome, 'status'> = {
    contentHash,
    sourceSize: source.byteLength,
    rawSize: 0,
    strippedExports: 0,
    nulledRefs: 0,
    texture: false,
    warnings: [],
    fallbacks: [],
  };
  if (packagePath !== undefined) base.materials = { hash: contentHash, materials: [] };
  try {
    const pkg = parsePackage(source, file);
    if (packagePath !== undefined) base.materials = materialsOfPackage(pkg, packagePath, contentHash);
    // A texture that fell back to RGBA8 is not what its settings ask for: it ships, but is never
    // cached (nor published) under the key of the real encoding, so the next cook tries again.
    // Made for the packages that hold a texture only (its options object is not free, per package).
    let transform: ReturnType<typeof textureTransform> | undefined;
    const cooked = await cookPackageBytes(pkg, {
      editorOnlyClassPrefixes: s.editorOnlyClassPrefixes,
      transformExport: (i, props, p) => {
        if (s.beforeTexture && p.exports[i].className === TEXTURE_CLASS) s.beforeTexture();
        transform ??= textureTransform(Object.assign({}, s.textures, { onFallback: (f: string, reason: string) => base.fallbacks.push({ file: f, reason }) }));
        return transform(i, props, p);
      },
      // Only textures change: every other export is walked and renumbered in place, not decoded.
      transformsClass: (c) => c === TEXTURE_CLASS,
      schemas: s.schemas,
    });
    const lckd = await encodeCooked(cooked.raw, { level: s.compressionLevel });
    return Object.assign({}, base, {
      status: 'cooked' as const,
      lckd,
      rawSize: cooked.raw.byteLength,
      // encodeCooked hashed the raw bytes for the LCKD header: read there, not hashed again.
      rawXxh64: hashHex(cookedRawXxh64(lckd)),
      strippedExports: cooked.strippedExports,
      nulledRefs: cooked.nulledRefs,
      texture: pkg.exports.some((e) => e.className === TEXTURE_CLASS),
      classes: [...new Set(pkg.exports.map((e) => e.className ?? ''))].sort(),
      warnings: cooked.warnings,
    });
  } catch (e) {
    if (e instanceof NeedsMainThread) throw e;
    const error = asCookError(e, file).toLog();
    // An IO failure (a temp file the encoder could not write) is not the asset's fault: never paper over it.
    if (s.onCookFailure !== 'verbatim' || error.code === 'IO_FAILED') return Object.assign({}, base, { status: 'failed' as const, error });
    try {
      const lckd = await encodeCooked(source, { level: s.compressionLevel });
      return Object.assign({}, base, { status: 'verbatim' as const, error, lckd });
    } catch (e2) {
      return Object.assign({}, base, { status: 'failed' as const, error: asCookError(e2, file).toLog() });
    }
  }
}
