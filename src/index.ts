/**
 * lumina-cook's programmatic API. The CLI is a thin wrapper over these; everything a build script
 * or an editor integration needs is exported here, named.
 */
export { errors, formatLog, isLuminaError, LuminaError } from './errors.js';
export type { ErrorCode, LuminaLog } from './errors.js';
export { initHash, xxh64 } from './util/hash.js';
export { createLogger } from './log/logger.js';
export { ProgressBus } from './log/events.js';
export type { ProgressEvent, ProgressListener } from './log/events.js';

export { loadConfig, normalizeConfig } from '../config/index.js';
export type { LoadedConfig, MountConfig, PluginConfig, ProjectConfig } from '../config/index.js';

export { parsePackage, parsePackageTables, readPackageFile, readPackageTables, decodeExport, findAssetExport } from './format/packageReader.js';
export { writePackage } from './format/packageWriter.js';
export { buildPackage, prop, ref, hard, soft } from './format/packageBuilder.js';
export { decodeProperties, encodeProperties, mapObjectRefs } from './format/properties.js';
export { encodeCooked, decodeCooked, parseCookedHeader } from './format/cookedPackage.js';
export { encodeCookedRegistry, decodeCookedRegistry } from './format/cookedRegistry.js';
export type * from './format/packageTypes.js';

export { Vfs } from './vfs/Vfs.js';
export { AssetRegistry, resolveCookRoots, findDependencyChain } from './registry/index.js';
export type { AssetRecord, ScanResult, RegistryChange } from './registry/index.js';

export { cookProject } from '../cook/index.js';
export type { CookSummary, CookProjectOptions } from '../cook/index.js';
export { cookTexture, decodeImage, generateMips } from '../cook/texture/index.js';

export { writePak, PakReader, MountedPaks, diffPaks, buildPatchPak, writeRelease, readReleaseManifest } from '../pak/index.js';
export type { PakSource, ReleaseManifest, PatchSummary } from '../pak/index.js';

export { generateProject } from '../samples/index.js';
